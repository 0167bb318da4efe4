package chaos

import (
	"context"
	"fmt"
	"math/rand"
	"sync"
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

// HostSpec is one host of the run: its name, rack and BMC index.
type HostSpec struct {
	Name  string
	Rack  string
	Index int
}

// Spec returns the host's spec with the given Online and tag (Consumer).
func (c *Cluster) Spec(h HostSpec, online bool, tag string) *wire.Host {
	return &wire.Host{Name: h.Name, Rack: h.Rack, Online: online, Consumer: tag,
		BMC:            wire.BMC{Address: c.BMCAddress(h.Rack, h.Index), Credentials: "bmc"},
		BootMACAddress: fmt.Sprintf("52:54:00:00:%02x:%02x", h.Index>>8, h.Index&0xff)}
}

// Hosts lists the run's hosts: HostsPerRack per rack, named RACK-hI.
func (t Topology) Hosts() []HostSpec {
	var out []HostSpec
	for _, r := range t.Racks {
		for i := 0; i < t.HostsPerRack; i++ {
			out = append(out, HostSpec{Name: fmt.Sprintf("%s-h%d", r, i), Rack: r, Index: i})
		}
	}
	return out
}

// Workload is the operators: Clients goroutines, each with its own API
// client dialed from the "cl" namespace, issuing random operations on
// random hosts and recording each with its invoke and return times.
//
// Mix: 35% spec writes (Online flipped at random and a new unique tag, so
// power mutations keep flowing), 35% reads, 8% detach, 8% attach, 5%
// forced maintenance drain, 5% restore, 4% resume.
type Workload struct {
	C       *Cluster
	Hist    *History
	Clients int
	Seed    int64
	// OpTimeout bounds one operation (the client's own retries included).
	OpTimeout time.Duration
}

// Run issues operations until ctx is done.
func (w *Workload) Run(ctx context.Context) error {
	hosts := w.C.Topo.Hosts()
	var wg sync.WaitGroup
	for i := 0; i < w.Clients; i++ {
		cl, err := w.C.OperatorClient("cl")
		if err != nil {
			return err
		}
		wg.Add(1)
		go func(id int, cl *client.Client) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(w.Seed*1000 + int64(id)))
			seq := 0
			for ctx.Err() == nil {
				h := hosts[rng.Intn(len(hosts))]
				seq++
				w.one(ctx, cl, id, rng, h, fmt.Sprintf("c%d-%d", id, seq))
				select {
				case <-ctx.Done():
				case <-time.After(time.Duration(50+rng.Intn(200)) * time.Millisecond):
				}
			}
		}(i, cl)
	}
	wg.Wait()
	return nil
}

func (w *Workload) one(ctx context.Context, cl *client.Client, id int, rng *rand.Rand, h HostSpec, tag string) {
	op := Op{Client: id, Host: h.Name}
	p := rng.Intn(100)
	switch {
	case p < 35:
		op.Kind, op.Online, op.Tag = OpWrite, rng.Intn(2) == 0, tag
	case p < 70:
		op.Kind = OpRead
	case p < 78:
		op.Kind = OpDetach
	case p < 86:
		op.Kind = OpAttach
	case p < 91:
		op.Kind = OpDrain
	case p < 96:
		op.Kind = OpRestore
	default:
		op.Kind = OpResume
	}
	octx, cancel := context.WithTimeout(ctx, w.OpTimeout)
	defer cancel()
	op.Invoke = time.Now().UnixNano()
	var err error
	switch op.Kind {
	case OpWrite:
		_, _, err = cl.ApplyHost(octx, w.C.Spec(h, op.Online, op.Tag))
	case OpRead:
		var got *wire.Host
		if got, err = cl.GetHost(octx, h.Name); err == nil {
			op.Read = ViewOf(got)
		}
	case OpDetach:
		_, err = cl.Detach(octx, h.Name, wire.IntentRequest{Reason: "chaos " + tag})
	case OpAttach:
		err = cl.Attach(octx, h.Name)
	case OpDrain:
		_, err = cl.Drain(octx, h.Name, wire.IntentRequest{Reason: "chaos " + tag, Mode: wire.DrainMaintenance, Force: true})
	case OpRestore:
		err = cl.Restore(octx, h.Name)
	case OpResume:
		_, err = cl.Resume(octx, h.Name, wire.IntentRequest{Reason: "chaos " + tag})
	}
	op.Return = time.Now().UnixNano()
	op.Result = Classify(err)
	if err != nil {
		op.Err = trim(err.Error(), 300)
	}
	if ctx.Err() != nil && op.Result == ResultInfo && op.Kind == OpRead {
		return // cut short by the end of the run: observed nothing
	}
	w.Hist.Add(op)
}
