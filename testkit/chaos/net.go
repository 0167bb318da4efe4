package chaos

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Net is one run's network: a bridge in the root namespace and one network
// namespace per node, each with a veth on the bridge and an nftables table
// whose input chain holds the run's drop rules. Drops are silent (no reset),
// as a cut cable or a dead switch port is.
type Net struct {
	// Prefix names everything this run creates ("rfc7": bridge rfc7br,
	// namespaces rfc7-NODE, veths rfc7vN), so concurrent runs never meet.
	Prefix string
	Bridge string
	// RootIP is the bridge's address: the harness observes from there, on a
	// path no fault ever cuts.
	RootIP string
	k      int
	mu     sync.Mutex
	nodes  map[string]*Node
	order  []string
	dirty  map[string]bool // namespaces with drop rules
	rules  []string        // active rules, "from>to", for the run log
}

// Node is one namespace on the bridge.
type Node struct {
	Name string
	NS   string // namespace name (ip netns)
	IP   string
}

// ErrNoRoot is returned by NewNet when the harness cannot create namespaces.
var ErrNoRoot = errors.New("chaos: network namespaces need root (CAP_NET_ADMIN) and the ip and nft programs (iproute2, nftables)")

// Available reports whether this machine can run the harness: root, ip and
// nft on PATH. The reason names what is missing.
func Available() (bool, string) {
	var miss []string
	if os.Geteuid() != 0 {
		miss = append(miss, "root")
	}
	for _, p := range []string{"ip", "nft"} {
		if _, err := exec.LookPath(p); err != nil {
			miss = append(miss, p+" on PATH")
		}
	}
	if len(miss) > 0 {
		return false, "missing " + strings.Join(miss, ", ")
	}
	return true, ""
}

func run(args ...string) error {
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// NewNet creates the bridge and one namespace per node name (IPs 10.213.K.10+i
// in node order). It picks the first free K in 1..250, so several runs can
// share a machine. Close removes everything.
func NewNet(nodes []string) (*Net, error) {
	if ok, why := Available(); !ok {
		return nil, fmt.Errorf("%w: %s", ErrNoRoot, why)
	}
	n := &Net{nodes: map[string]*Node{}, dirty: map[string]bool{}}
	for k := 1; k <= 250; k++ {
		br := fmt.Sprintf("rfc%dbr", k)
		// ip link add fails when the bridge exists: that claims K atomically.
		if err := run("ip", "link", "add", br, "type", "bridge"); err != nil {
			continue
		}
		n.k, n.Bridge, n.Prefix = k, br, fmt.Sprintf("rfc%d", k)
		break
	}
	if n.Bridge == "" {
		return nil, fmt.Errorf("chaos: no free bridge name rfcKbr for K in 1..250 (stale runs? list them with: ip link show type bridge)")
	}
	n.RootIP = fmt.Sprintf("10.213.%d.1", n.k)
	steps := [][]string{
		{"ip", "addr", "add", n.RootIP + "/24", "dev", n.Bridge},
		{"ip", "link", "set", n.Bridge, "up"},
	}
	for _, s := range steps {
		if err := run(s...); err != nil {
			n.Close()
			return nil, err
		}
	}
	for i, name := range nodes {
		if err := n.addNode(i, name); err != nil {
			n.Close()
			return nil, err
		}
	}
	return n, nil
}

const nftTable = `table inet chaos {
	chain input { type filter hook input priority 0; policy accept; }
}
`

func (n *Net) addNode(i int, name string) error {
	nd := &Node{Name: name, NS: n.Prefix + "-" + name, IP: fmt.Sprintf("10.213.%d.%d", n.k, 10+i)}
	veth := fmt.Sprintf("%sv%d", n.Prefix, i)
	// A veth of an earlier run can outlive its namespace while the kernel
	// still tears down that namespace's sockets: remove it first.
	_ = run("ip", "link", "del", veth)
	steps := [][]string{
		{"ip", "netns", "add", nd.NS},
		{"ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", nd.NS},
		{"ip", "link", "set", veth, "master", n.Bridge, "up"},
		{"ip", "-n", nd.NS, "addr", "add", nd.IP + "/24", "dev", "eth0"},
		{"ip", "-n", nd.NS, "link", "set", "eth0", "up"},
		{"ip", "-n", nd.NS, "link", "set", "lo", "up"},
	}
	n.mu.Lock()
	n.nodes[name] = nd
	n.order = append(n.order, name)
	n.mu.Unlock()
	for _, s := range steps {
		if err := run(s...); err != nil {
			return err
		}
	}
	cmd := exec.Command("ip", "netns", "exec", nd.NS, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(nftTable)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("nft table in %s: %v: %s", nd.NS, err, out)
	}
	return nil
}

// Node returns a node by name (nil if unknown).
func (n *Net) Node(name string) *Node {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.nodes[name]
}

// Drop silently drops every packet from node from to node to (one way),
// established connections included.
func (n *Net) Drop(from, to string) error {
	f, t := n.Node(from), n.Node(to)
	if f == nil || t == nil {
		return fmt.Errorf("chaos: drop %s>%s: unknown node", from, to)
	}
	if err := run("ip", "netns", "exec", t.NS, "nft", "add", "rule", "inet", "chaos", "input", "ip", "saddr", f.IP, "drop"); err != nil {
		return err
	}
	n.mu.Lock()
	n.dirty[to] = true
	n.rules = append(n.rules, from+">"+to)
	n.mu.Unlock()
	return nil
}

// Cut drops both ways between every node of a and every node of b.
func (n *Net) Cut(a, b []string) error {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				continue
			}
			if err := n.Drop(x, y); err != nil {
				return err
			}
			if err := n.Drop(y, x); err != nil {
				return err
			}
		}
	}
	return nil
}

// Heal removes every drop rule.
func (n *Net) Heal() error {
	n.mu.Lock()
	var names []string
	for name := range n.dirty {
		names = append(names, name)
	}
	n.dirty = map[string]bool{}
	n.rules = nil
	n.mu.Unlock()
	sort.Strings(names)
	var errs []error
	for _, name := range names {
		if err := run("ip", "netns", "exec", n.Node(name).NS, "nft", "flush", "chain", "inet", "chaos", "input"); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Close deletes the namespaces (their veths go with them) and the bridge.
func (n *Net) Close() error {
	var errs []error
	n.mu.Lock()
	order := append([]string(nil), n.order...)
	n.mu.Unlock()
	for _, name := range order {
		if err := run("ip", "netns", "del", n.Node(name).NS); err != nil {
			errs = append(errs, err)
		}
	}
	if n.Bridge != "" {
		if err := run("ip", "link", "del", n.Bridge); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Command returns a command that runs bin inside node's namespace. ip netns
// exec execs bin in place, so the command's PID is bin's own and signals
// reach it directly.
func (n *Net) Command(node, bin string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", n.Node(node).NS, bin}, args...)...)
}

// DialContextIn returns a dial function whose sockets live in node's
// namespace: each dial runs on a fresh OS thread moved into the namespace
// with setns(2); the thread is never returned to the Go scheduler (the
// goroutine exits locked), so no other goroutine ever runs in it. The
// socket stays in the namespace it was created in.
func (n *Net) DialContextIn(node string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	path := "/var/run/netns/" + n.Node(node).NS
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		type result struct {
			c   net.Conn
			err error
		}
		ch := make(chan result, 1)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread dies with this goroutine
			f, err := os.Open(path)
			if err != nil {
				ch <- result{nil, err}
				return
			}
			defer f.Close()
			if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
				ch <- result{nil, fmt.Errorf("setns %s: %v", path, err)}
				return
			}
			var d net.Dialer
			c, err := d.DialContext(ctx, network, addr)
			ch <- result{c, err}
		}()
		r := <-ch
		return r.c, r.err
	}
}

// mutatingMethods are the first four bytes of HTTP requests that change
// something on a BMC.
var mutatingMethods = map[string]string{"POST": "0x504f5354", "PATCH": "0x50415443", "PUT": "0x50555420", "DELETE": "0x44454c45"}

// DropMutatingHTTP drops, from node from to node to, every TCP segment
// whose payload starts with a mutating HTTP method (POST, PATCH, PUT,
// DELETE); reads and handshakes pass. A request caught this way is held
// in the sender's kernel and retransmitted, so it reaches the BMC after
// Heal, late: the agent → BMC stall the lease margins must cover.
func (n *Net) DropMutatingHTTP(from, to string) error {
	f, t := n.Node(from), n.Node(to)
	if f == nil || t == nil {
		return fmt.Errorf("chaos: drop mutating HTTP %s>%s: unknown node", from, to)
	}
	for _, hex := range mutatingMethods {
		if err := run("ip", "netns", "exec", t.NS, "nft", "add", "rule", "inet", "chaos", "input",
			"ip", "saddr", f.IP, "meta", "l4proto", "tcp", "@ih,0,32", hex, "drop"); err != nil {
			return err
		}
	}
	n.mu.Lock()
	n.dirty[to] = true
	n.rules = append(n.rules, from+">"+to+" (mutating HTTP)")
	n.mu.Unlock()
	return nil
}

// HealNode removes the drop rules held in node's namespace only (those
// dropping traffic towards node), leaving every other rule in place.
func (n *Net) HealNode(node string) error {
	nd := n.Node(node)
	if nd == nil {
		return fmt.Errorf("chaos: heal %s: unknown node", node)
	}
	if err := run("ip", "netns", "exec", nd.NS, "nft", "flush", "chain", "inet", "chaos", "input"); err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.dirty, node)
	var keep []string
	for _, r := range n.rules {
		if !strings.Contains(r, ">"+node) {
			keep = append(keep, r)
		}
	}
	n.rules = keep
	return nil
}
