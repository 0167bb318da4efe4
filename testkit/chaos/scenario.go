package chaos

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"
)

// DelayedWrite replays, deterministically, the lost write the campaign
// found (seeds 100 and 200): an operator's PUT is sent to the leader on a
// kept-alive connection just as the operators' link to it is cut; the
// client gives up after its 3 s attempt timeout; a second PUT of the same
// host succeeds through another member; the link heals and TCP
// retransmits the first PUT, which the leader then applies. A client that
// reported the first PUT as acknowledged (or repeated it on another
// member) would leave a history with no linearization; reported as "may
// have been applied" (info) it is linearizable. It returns the three
// operations (PUT A, PUT B, a final read) and the checker's violations.
func DelayedWrite(ctx context.Context, dir, bin string) ([]Op, []Violation, error) {
	topo := Topology{Coordinators: 3, Racks: []string{"r1"}, HostsPerRack: 1, LeaseTTL: 5 * time.Second}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	lf, err := os.Create(filepath.Join(dir, "harness.log"))
	if err != nil {
		return nil, nil, err
	}
	defer lf.Close()
	nw, err := NewNet(topo.Nodes())
	if err != nil {
		return nil, nil, err
	}
	defer nw.Close()
	sctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	c, err := StartCluster(sctx, dir, bin, nw, topo, slog.New(slog.NewJSONHandler(lf, nil)))
	if c != nil {
		defer c.StopAll()
	}
	if err != nil {
		return nil, nil, err
	}
	h := topo.Hosts()[0]
	if _, _, err := c.Observer.ApplyHost(sctx, c.Spec(h, true, InitialTag)); err != nil {
		return nil, nil, err
	}
	st, err := c.Observer.Status(sctx)
	if err != nil {
		return nil, nil, err
	}
	leader := c.MemberIndex(st.Leader)
	if leader < 0 {
		return nil, nil, fmt.Errorf("leader %q is no member", st.Leader)
	}
	cl, err := c.OperatorClientFirst("cl", leader)
	if err != nil {
		return nil, nil, err
	}
	// Keep a connection to the leader alive, then cut the link under it.
	if _, err := cl.GetHost(sctx, h.Name); err != nil {
		return nil, nil, err
	}
	if err := nw.Cut([]string{"cl"}, []string{coordNode(leader)}); err != nil {
		return nil, nil, err
	}
	hist := &History{}
	put := func(tag string) {
		op := Op{Client: 0, Host: h.Name, Kind: OpWrite, Online: true, Tag: tag, Invoke: time.Now().UnixNano()}
		octx, oc := context.WithTimeout(sctx, 8*time.Second)
		_, _, err := cl.ApplyHost(octx, c.Spec(h, true, tag))
		oc()
		op.Return, op.Result = time.Now().UnixNano(), Classify(err)
		if err != nil {
			op.Err = err.Error()
		}
		hist.Add(op)
	}
	put("A")
	put("B")
	if err := nw.Heal(); err != nil {
		return nil, nil, err
	}
	// The held PUT goes out at the next retransmission (6.2 or 12.6 s
	// after it was first sent).
	time.Sleep(15 * time.Second)
	op := Op{Client: 1, Host: h.Name, Kind: OpRead, Invoke: time.Now().UnixNano()}
	got, err := c.Observer.GetHost(sctx, h.Name)
	op.Return, op.Result = time.Now().UnixNano(), Classify(err)
	if err != nil {
		return nil, nil, err
	}
	op.Read = ViewOf(got)
	hist.Add(op)
	ops := hist.Ops()
	_ = hist.WriteFile(filepath.Join(dir, "history.jsonl"))
	_, vs := CheckLinear(ops, 10*time.Second, dir)
	return ops, vs, nil
}
