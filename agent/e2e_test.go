package agent_test

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rackfence/rackfence/internal/procnet"
	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// These tests run real processes: rackfence-coordinator, rackfence-bmcsim
// and one or two rackfence-agent, talking over loopback.

// TestLifecycle: 20 hosts register and become available; a host without
// BMC details rests unmanaged; a host whose BMC refuses the credentials is
// in error with a growing errorCount; provisioning and deprovisioning
// through virtual media work.
func TestLifecycle(t *testing.T) {
	e := newEnv(t, envOpts{bmcs: 21})
	if err := e.admin.SetCredentials(ctx(t), "wrong", wire.Credentials{Username: "admin", Password: "nope"}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		e.apply(e.hostSpec(fmt.Sprintf("h%02d", i), "r1", i))
	}
	e.apply(&wire.Host{Name: "bare", Rack: "r1"})
	bad := e.hostSpec("badcreds", "r1", 20)
	bad.BMC.Credentials = "wrong"
	e.apply(bad)

	e.startAgent("r1", "a1", "--error-backoff-base", "200ms")

	for i := 0; i < 20; i++ {
		h := e.waitHost(fmt.Sprintf("h%02d", i), 90*time.Second, "available", stateIs(wire.StateAvailable, wire.OpOK))
		if h.Status.HardwareDetails == nil || len(h.Status.HardwareDetails.NICs) == 0 {
			t.Errorf("%s is available without hardware details from inspection: %+v", h.Name, h.Status.HardwareDetails)
		}
		if h.Status.Epoch == 0 {
			t.Errorf("%s status carries no epoch", h.Name)
		}
		if bd := h.Status.BMCDetails; bd == nil || bd.Protocol != "redfish" || bd.Auth != "session" || bd.VirtualMedia == "" || bd.System == "" {
			t.Errorf("%s is available without the BMC details registration learnt: %+v", h.Name, h.Status.BMCDetails)
		}
	}
	e.waitHost("bare", 30*time.Second, "unmanaged", stateIs(wire.StateUnmanaged, wire.OpDiscovered))
	first := e.waitHost("badcreds", 30*time.Second, "registration error", func(h *wire.Host) error {
		if h.Status == nil || h.Status.ErrorType != wire.ErrRegistration || h.Status.ErrorCount < 1 {
			return fmt.Errorf("status %+v", h.Status)
		}
		return nil
	})
	if strings.Contains(first.Status.ErrorMessage, "nope") {
		t.Errorf("the error message leaks the password: %q", first.Status.ErrorMessage)
	}
	e.waitHost("badcreds", 60*time.Second, "a growing errorCount", func(h *wire.Host) error {
		if h.Status.ErrorCount <= first.Status.ErrorCount {
			return fmt.Errorf("errorCount still %d", h.Status.ErrorCount)
		}
		return nil
	})

	// Provision h00 through virtual media, then deprovision it.
	h := e.host("h00")
	h.Image = &wire.Image{URL: "http://images.example/ubuntu.iso", Checksum: "sha256:00"}
	e.apply(h)
	e.waitHost("h00", 60*time.Second, "provisioned", stateIs(wire.StateProvisioned, wire.OpOK))
	st, err := e.simState(0)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Media.Inserted || st.Media.Image != h.Image.URL || st.Power != "On" {
		t.Fatalf("after provisioning, BMC 0 is %+v; want the image inserted and power on", st)
	}
	if st.LastBoot != "Cd" && !(st.BootOverride.Target == "Cd") {
		t.Errorf("after provisioning BMC 0 did not boot once from CD: %+v", st)
	}
	h = e.host("h00")
	h.Image = nil
	e.apply(h)
	e.waitHost("h00", 60*time.Second, "available again", stateIs(wire.StateAvailable, wire.OpOK))
	st, _ = e.simState(0)
	if st.Media.Inserted {
		t.Fatalf("after deprovisioning, BMC 0 is %+v; want the media ejected", st)
	}
	// Deprovisioning powered the host off (online: true powers it on again
	// once it is available).
	var ejected, offAfter bool
	for _, l := range e.auditLines(0) {
		ejected = ejected || strings.Contains(l.Path, "EjectMedia")
		offAfter = offAfter || (ejected && strings.Contains(l.Body, "ForceOff"))
	}
	if !offAfter {
		t.Fatalf("no power-off after the eject in BMC 0's audit: %+v", e.auditLines(0))
	}
	for _, l := range e.auditLines(0) {
		if !strings.HasPrefix(l.UserAgent, "rackfence-agent/") || !strings.Contains(l.UserAgent, "rack=r1") || strings.Contains(l.UserAgent, "epoch=0") {
			t.Errorf("mutating BMC call without the contract's User-Agent: %+v", l)
		}
	}
}

// TestDetachAttach: a detach is acknowledged with the epoch, the host shows
// detached, and the BMC sees no mutating call for it afterwards even when
// its spec changes; attach brings it back under management.
func TestDetachAttach(t *testing.T) {
	e := newEnv(t, envOpts{bmcs: 2})
	e.apply(e.hostSpec("d0", "r1", 0))
	e.apply(e.hostSpec("d1", "r1", 1))
	e.startAgent("r1", "a1")
	e.waitHost("d0", 60*time.Second, "available", stateIs(wire.StateAvailable, wire.OpOK))
	e.waitHost("d1", 60*time.Second, "available", stateIs(wire.StateAvailable, wire.OpOK))

	if _, err := e.admin.Detach(ctx(t), "d0", wire.IntentRequest{Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	h := e.waitHost("d0", 30*time.Second, "detach acknowledged", func(h *wire.Host) error {
		if h.Intents == nil || h.Intents.Detach == nil || !h.Intents.Detach.Acknowledged {
			return fmt.Errorf("intents %+v", h.Intents)
		}
		return nil
	})
	if h.Intents.Detach.AckEpoch == 0 {
		t.Errorf("the ack carries no epoch: %+v", h.Intents.Detach)
	}
	e.waitHost("d0", 30*time.Second, "operational status detached", stateIs(wire.StateAvailable, wire.OpDetached))
	before := len(e.auditLines(0))

	// Spec changes while detached: power off, then an image. Nothing may
	// reach BMC 0; the same change on d1 proves the agent is acting.
	for _, n := range []string{"d0", "d1"} {
		h := e.host(n)
		h.Online = false
		h.Image = &wire.Image{URL: "http://images.example/x.iso"}
		e.apply(h)
	}
	e.waitHost("d1", 60*time.Second, "provisioned", stateIs(wire.StateProvisioned, ""))
	// Marker: a later change of d1 reaches BMC 1 (a power-on audited
	// there), so the agent has long taken in d0's earlier change.
	d1 := e.host("d1")
	d1.Online = true
	e.apply(d1)
	e.waitHost("d1", 60*time.Second, "powered on again", func(h *wire.Host) error {
		if !h.Status.PoweredOn {
			return fmt.Errorf("still off")
		}
		return nil
	})
	if after := e.auditLines(0); len(after) != before {
		t.Fatalf("BMC 0 saw %d mutating calls while its host was detached: %+v", len(after)-before, after[before:])
	}
	if h := e.host("d0"); h.Status.OperationalStatus != wire.OpDetached {
		t.Fatalf("d0 left detached by itself: %+v", h.Status)
	}

	if err := e.admin.Attach(ctx(t), "d0"); err != nil {
		t.Fatal(err)
	}
	e.waitHost("d0", 60*time.Second, "back under management", func(h *wire.Host) error {
		if h.Status == nil || h.Status.OperationalStatus == wire.OpDetached {
			return fmt.Errorf("still %+v", h.Status)
		}
		if h.Intents != nil && h.Intents.Detach != nil {
			return fmt.Errorf("detach intent still there")
		}
		return nil
	})
	e.waitHost("d0", 60*time.Second, "provisioned after attach", stateIs(wire.StateProvisioned, wire.OpOK))
}

// TestResumeRetriesAtOnce: a BMC refusing the credentials puts the host in
// error with the default (minutes-long) backoff; the BMC heals with no
// event; resume retries at once.
func TestResumeRetriesAtOnce(t *testing.T) {
	e := newEnv(t, envOpts{bmcs: 1})
	e.simFault(0, "refuse-auth")
	e.apply(e.hostSpec("r0", "r1", 0))
	e.startAgent("r1", "a1")
	e.waitHost("r0", 60*time.Second, "in error", func(h *wire.Host) error {
		if h.Status == nil || h.Status.ErrorCount < 1 {
			return fmt.Errorf("status %+v", h.Status)
		}
		return nil
	})
	e.simFault(0, "none")
	requireBackoffAhead(t, e.host("r0"), 15*time.Second)
	if _, err := e.admin.Resume(ctx(t), "r0", wire.IntentRequest{}); err != nil {
		t.Fatal(err)
	}
	// The default backoff after the first error is at least 30 s; resume
	// must retry right away.
	start := time.Now()
	e.waitHost("r0", 25*time.Second, "available after resume", stateIs(wire.StateAvailable, wire.OpOK))
	t.Logf("available %s after resume", time.Since(start).Round(time.Millisecond))
	if h := e.host("r0"); h.Intents != nil && h.Intents.Resume != nil {
		t.Errorf("resume intent not dropped: %+v", h.Intents.Resume)
	}
}

// TestDrain: maintenance → acknowledged → restore; removal ends with the
// record gone.
func TestDrain(t *testing.T) {
	e := newEnv(t, envOpts{bmcs: 2})
	e.apply(e.hostSpec("m0", "r1", 0))
	e.apply(e.hostSpec("m1", "r1", 1))
	maddr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, "127.0.0.1"))
	e.startAgent("r1", "a1", "--metrics-addr", maddr)
	e.waitHost("m0", 60*time.Second, "available", stateIs(wire.StateAvailable, wire.OpOK))
	e.waitHost("m1", 60*time.Second, "available", stateIs(wire.StateAvailable, wire.OpOK))

	// Metrics: hosts by state, lease, BMC call latency by operation.
	testenv.Eventually(t, 30*time.Second, "metrics showing 2 available hosts", func() error {
		if v := scrape(t, maddr, `rackfence_agent_hosts{state="available"}`); v != 2 {
			return fmt.Errorf("rackfence_agent_hosts{state=available} = %v", v)
		}
		return nil
	})
	if v := scrape(t, maddr, "rackfence_agent_lease_state"); v != 2 {
		t.Errorf("rackfence_agent_lease_state = %v, want 2 (held)", v)
	}
	if v := scrape(t, maddr, "rackfence_agent_lease_seconds_left"); v <= 0 || v > 5 {
		t.Errorf("rackfence_agent_lease_seconds_left = %v, want in (0, 5]", v)
	}
	if v := scrape(t, maddr, `rackfence_agent_action_seconds_count{op="inspect"}`); v < 2 {
		t.Errorf("inspect latency count = %v, want >= 2", v)
	}
	// Steady state: nothing changed, so nothing is written (the refresh
	// is a minute away).
	// Marker: a spec change that alters no status (m0's consumer set and
	// cleared) makes the agent reconcile m0 twice; those reconciles, counted
	// by the agent, must write nothing.
	epoch0 := scrape(t, maddr, "rackfence_agent_lease_epoch")
	w0 := scrape(t, maddr, `rackfence_agent_status_writes_total{result="ok"}`)
	r0 := scrape(t, maddr, `rackfence_agent_reconciles_total{result="ok"}`)
	for _, consumer := range []string{"steady-state-check", ""} {
		m0 := e.host("m0")
		m0.Consumer = consumer
		e.apply(m0)
		testenv.Eventually(t, 30*time.Second, "m0 reconciled after its consumer changed", func() error {
			if r := scrape(t, maddr, `rackfence_agent_reconciles_total{result="ok"}`); r <= r0 {
				return fmt.Errorf("reconciles %v, was %v", r, r0)
			}
			return nil
		})
		r0 = scrape(t, maddr, `rackfence_agent_reconciles_total{result="ok"}`)
	}
	w1 := scrape(t, maddr, `rackfence_agent_status_writes_total{result="ok"}`)
	switch {
	case scrape(t, maddr, "rackfence_agent_lease_epoch") != epoch0:
		// A new lease (a renewal starved on a loaded machine) rewrites
		// every status once, by design.
		t.Log("the lease changed hands during the steady-state check; skipping it")
	case w1 != w0:
		t.Errorf("%v status writes for spec changes that change no status, want none", w1-w0)
	}

	if _, err := e.admin.Drain(ctx(t), "m0", wire.IntentRequest{Mode: wire.DrainMaintenance, Reason: "disk swap"}); err != nil {
		t.Fatal(err)
	}
	e.waitHost("m0", 30*time.Second, "maintenance acknowledged", func(h *wire.Host) error {
		if h.Intents == nil || h.Intents.Drain == nil || !h.Intents.Drain.Acknowledged {
			return fmt.Errorf("intents %+v", h.Intents)
		}
		return stateIs(wire.StateAvailable, wire.OpMaintenance)(h)
	})
	if err := e.admin.Restore(ctx(t), "m0"); err != nil {
		t.Fatal(err)
	}
	e.waitHost("m0", 30*time.Second, "restored", stateIs(wire.StateAvailable, wire.OpOK))

	if _, err := e.admin.Drain(ctx(t), "m1", wire.IntentRequest{Mode: wire.DrainRemoval, Reason: "decommission"}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 60*time.Second, "m1's record removed", func() error {
		h, err := e.admin.GetHost(ctx(t), "m1")
		if client.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("still there: %+v", h.Status)
	})
}

// TestTwoAgentsFencing: the second agent stands by; SIGSTOP the first and
// the second takes over after TTL + margin; SIGCONT the first: it makes no
// BMC call and writes no status, then stands by. SIGTERM of the holder
// releases the lease and the standby takes over at once.
func TestTwoAgentsFencing(t *testing.T) {
	e := newEnv(t, envOpts{bmcs: 4})
	for i := 0; i < 4; i++ {
		e.apply(e.hostSpec(fmt.Sprintf("f%d", i), "r1", i))
	}
	// A 5 s TTL leaves room for slow renewals on a loaded machine, so only
	// the SIGSTOP moves the lease.
	m1 := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, "127.0.0.1"))
	m2 := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, "127.0.0.1"))
	a1 := e.startAgent("r1", "a1", "--lease-ttl", "5s", "--metrics-addr", m1)
	for i := 0; i < 4; i++ {
		e.waitHost(fmt.Sprintf("f%d", i), 60*time.Second, "available", stateIs(wire.StateAvailable, wire.OpOK))
	}
	a2 := e.startAgent("r1", "a2", "--lease-ttl", "5s", "--metrics-addr", m2)
	lease := func() *wire.Rack {
		l, err := e.admin.Racks(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range l.Items {
			if r.Name == "r1" {
				return &r
			}
		}
		return &wire.Rack{}
	}
	// Each agent reports its role on the rack (deploy/prometheus/ alerts
	// on racks with only standbys). a2 standing by is also the marker that
	// it has asked for the lease and been refused.
	testenv.Eventually(t, 30*time.Second, "a2 reports standby", func() error {
		if v, err := tryScrape(m2, `rackfence_agent_rack_role{rack="r1",role="standby"}`); v != 1 {
			return fmt.Errorf("a2 standby = %v (%v)", v, err)
		}
		return nil
	})
	if r := lease(); r.Holder != "a1" {
		t.Fatalf("rack held by %q, want a1 (a2 must stand by)", r.Holder)
	}
	epoch1 := lease().Epoch
	for _, m := range []struct {
		addr, role string
		want       float64
	}{{m1, "holder", 1}, {m1, "standby", 0}, {m1, "none", 0}, {m2, "holder", 0}, {m2, "none", 0}} {
		if v := scrape(t, m.addr, `rackfence_agent_rack_role{rack="r1",role="`+m.role+`"}`); v != m.want {
			t.Errorf("%s: rackfence_agent_rack_role{role=%s} = %v, want %v", m.addr, m.role, v, m.want)
		}
	}

	// Pause a1; a2 takes over after TTL + margin.
	if err := a1.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	testenv.Eventually(t, 60*time.Second, "a2 holds the rack", func() error {
		if r := lease(); r.Holder != "a2" {
			return fmt.Errorf("holder %q epoch %d", r.Holder, r.Epoch)
		}
		return nil
	})
	took := time.Since(stopped)
	t.Logf("a2 took over %s after SIGSTOP of a1", took.Round(time.Millisecond))
	// The coordinator grants the rack only TTL + margin (5.5 s) after a1's
	// last renewal, which was at most TTL/3 before the SIGSTOP.
	if floor := 5500*time.Millisecond - 5*time.Second/3; took < floor {
		t.Errorf("a2 took over %s after the SIGSTOP, before TTL + margin since a1's last renewal (at least %s)", took, floor)
	}
	epoch2 := lease().Epoch
	if epoch2 <= epoch1 {
		t.Fatalf("new epoch %d not above %d", epoch2, epoch1)
	}
	// Give a2 work, so a1 would have something to act on if it were not
	// fenced: a spec change on every host.
	for i := 0; i < 4; i++ {
		h := e.host(fmt.Sprintf("f%d", i))
		h.Online = false
		e.apply(h)
	}
	countA1 := func() int {
		n := 0
		for i := 0; i < 4; i++ {
			for _, l := range e.auditLines(i) {
				if strings.Contains(l.UserAgent, "(a1;") {
					n++
				}
			}
		}
		return n
	}
	before := countA1()
	if err := a1.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	// Markers: a1 has woken and stands by (its own metric), a2 has acted
	// on every spec change (each host reported off), and on one more made
	// after a1 woke: a1 had both the time and the work to make a call if
	// its guard let it.
	testenv.Eventually(t, 60*time.Second, "a1 standing by after SIGCONT", func() error {
		if v := scrape(t, m1, `rackfence_agent_rack_role{rack="r1",role="standby"}`); v != 1 {
			return fmt.Errorf("a1 standby = %v", v)
		}
		return nil
	})
	for i := 0; i < 4; i++ {
		e.waitHost(fmt.Sprintf("f%d", i), 60*time.Second, "powered off by a2", func(h *wire.Host) error {
			if h.Status.PoweredOn {
				return fmt.Errorf("still on")
			}
			return nil
		})
	}
	// A change made after a1 woke, which a1's watch delivers too: once a2
	// has acted on it, a1 has had its chance to act on everything above.
	f0 := e.host("f0")
	f0.Online = true
	e.apply(f0)
	e.waitHost("f0", 60*time.Second, "powered on again by a2", func(h *wire.Host) error {
		if !h.Status.PoweredOn {
			return fmt.Errorf("still off")
		}
		return nil
	})
	if n := countA1(); n != before {
		t.Fatalf("a1 made %d mutating BMC calls after waking up fenced", n-before)
	}
	for i := 0; i < 4; i++ {
		h := e.host(fmt.Sprintf("f%d", i))
		if h.Status.Epoch != epoch2 && h.Status.Epoch != 0 {
			t.Errorf("%s status written under epoch %d after takeover (a2 has %d)", h.Name, h.Status.Epoch, epoch2)
		}
	}
	if a1.Exited() {
		t.Fatalf("a1 exited instead of standing by:\n%s", a1.Output())
	}
	if testing.Verbose() {
		t.Logf("a1 after SIGCONT:\n%s", a1.Output())
	}
	if !strings.Contains(a1.Output(), "standing by") {
		t.Errorf("a1 did not report standing by after waking up")
	}
	if r := lease(); r.Holder != "a2" {
		t.Fatalf("holder %q after a1 woke up, want a2", r.Holder)
	}

	// SIGTERM a2: it releases, a1 takes over within a second or two.
	if err := a2.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err, ok := a2.Wait(30 * time.Second); !ok || err != nil {
		t.Fatalf("a2 did not exit cleanly on SIGTERM: %v (exited %v)", err, ok)
	}
	released := time.Now()
	testenv.Eventually(t, 30*time.Second, "a1 holds the rack again", func() error {
		if r := lease(); r.Holder != "a1" {
			return fmt.Errorf("holder %q", r.Holder)
		}
		return nil
	})
	took = time.Since(released)
	t.Logf("a1 took over %s after a2 exited", took.Round(time.Millisecond))
	hist, err := e.admin.LeaseHistory(ctx(t), "r1")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range hist.Items {
		if r.Epoch == epoch2 && r.End != "released" {
			t.Errorf("a2's lease (epoch %d) ended %q, want released", epoch2, r.End)
		}
	}
	for i := 0; i < 4; i++ {
		e.waitHost(fmt.Sprintf("f%d", i), 60*time.Second, "still managed after the handovers",
			func(h *wire.Host) error {
				if h.Status == nil || h.Status.Epoch <= epoch2 {
					return fmt.Errorf("status %+v", h.Status)
				}
				return nil
			})
	}
}

// TestShutdownAbandonsHungCalls: SIGTERM while a BMC hangs: the agent
// abandons the call after --shutdown-grace, releases the lease and exits.
func TestShutdownAbandonsHungCalls(t *testing.T) {
	e := newEnv(t, envOpts{bmcs: 1})
	e.simFault(0, "hang")
	e.apply(e.hostSpec("s0", "r1", 0))
	a := e.startAgent("r1", "a1", "--shutdown-grace", "1s", "--bmc-timeout", "60s")
	testenv.Eventually(t, 30*time.Second, "the agent calling the hung BMC", func() error {
		if !strings.Contains(a.Output(), "rack lease acquired") {
			return fmt.Errorf("no lease yet")
		}
		return nil
	})
	// Marker: the agent holds a connection open to the hung BMC (every
	// request to it hangs, so the register call is in flight).
	testenv.Eventually(t, 30*time.Second, "the agent connected to the hung BMC", func() error {
		if !procnet.ConnectedTo(a.Cmd.Process.Pid, e.s.Base) {
			return fmt.Errorf("no established connection to port %d", e.s.Base)
		}
		return nil
	})
	if err := a.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, ok := a.Wait(30 * time.Second); !ok {
		t.Fatalf("the agent did not exit within 30 s of SIGTERM with a hung BMC call (grace 1s)")
	}
	t.Logf("exited %s after SIGTERM", time.Since(start).Round(time.Millisecond))
	hist, err := e.admin.LeaseHistory(ctx(t), "r1")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(hist.Items); n == 0 || hist.Items[n-1].End != "released" {
		t.Fatalf("lease history %+v: the last lease was not released", hist.Items)
	}
	e.simFault(0, "none")
}

// TestStatusRefresh: an unchanged status is written again every
// --status-refresh, so lastUpdated shows the agent is alive.
func TestStatusRefresh(t *testing.T) {
	e := newEnv(t, envOpts{bmcs: 1})
	e.apply(e.hostSpec("u0", "r1", 0))
	e.startAgent("r1", "a1", "--status-refresh", "2s")
	h := e.waitHost("u0", 60*time.Second, "available", stateIs(wire.StateAvailable, wire.OpOK))
	first := h.Status.LastUpdated
	e.waitHost("u0", 30*time.Second, "a refreshed lastUpdated", func(h *wire.Host) error {
		if !h.Status.LastUpdated.After(first.Add(time.Second)) {
			return fmt.Errorf("lastUpdated still %s", h.Status.LastUpdated)
		}
		return stateIs(wire.StateAvailable, wire.OpOK)(h)
	})
}
