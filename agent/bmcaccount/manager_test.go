package bmcaccount

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/fence"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
	"github.com/rackfence/rackfence/testkit/coordtest"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// rig is an in-process coordinator, a simulated BMC and the agent token
// of rack r1, whose host h0 is the BMC.
type rig struct {
	t     *testing.T
	c     *coordtest.Coordinator
	sim   *bmcsim.Sim
	agent *client.Client
	epoch uint64
	n     int
	// addr is the host's BMC address (the bmcsim's, or an IPMI
	// simulator's); works checks a login there.
	addr  string
	works func(user, pw string) bool
}

func newRig(t *testing.T, sc bmcsim.Config) *rig {
	t.Helper()
	testenv.SkipShort(t) // a Raft member: seconds
	c := coordtest.Start(t, coordtest.Options{})
	sc.Hosts = 1
	sim, err := bmcsim.Start(sc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	c.Apply(&wire.Host{Name: "h0", Rack: "r1", BMC: wire.BMC{Address: sim.Address(0), Credentials: "bmc"},
		BootMACAddress: sim.MAC(0)})
	r := &rig{t: t, c: c, sim: sim, agent: c.AgentClient("r1"), addr: sim.Address(0)}
	r.works = r.worksRedfish
	return r
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// takeOver releases the rack's lease (if held) and acquires it as a new
// holder: a new epoch, and a manager of its own.
func (r *rig) takeOver(step func(host, step string) error) *Manager {
	r.t.Helper()
	ctx := ctxT(r.t)
	if r.epoch != 0 {
		if err := r.agent.ReleaseLease(ctx, "r1", wire.LeaseRequest{Holder: holderName(r.n), Epoch: r.epoch}); err != nil {
			r.t.Fatal(err)
		}
	}
	r.n++
	l, err := r.agent.AcquireLease(ctx, "r1", wire.LeaseRequest{Holder: holderName(r.n), TTL: wire.Duration(time.Minute)})
	if err != nil {
		r.t.Fatal(err)
	}
	r.epoch = l.Epoch
	h := fence.NewHolder(nil)
	h.Set(fence.Lease{Rack: "r1", Holder: holderName(r.n), Epoch: l.Epoch, TTL: time.Minute, Deadline: time.Now().Add(time.Minute)})
	return New(Config{Store: r.agent, Guard: guard.NewGuard(h, nil), Step: step})
}

func holderName(n int) string { return "agent-" + string(rune('a'+n)) }

func (r *rig) target() Target {
	return Target{Host: "h0", Address: r.addr, Username: "admin", Password: "password"}
}

// worksRedfish reports whether the BMC takes user/password (a GET).
func (r *rig) worksRedfish(user, pw string) bool {
	r.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, r.sim.URL(0)+"/redfish/v1/Systems", nil)
	req.SetBasicAuth(user, pw)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func (r *rig) record() *wire.BMCAccount {
	r.t.Helper()
	a, err := r.c.Admin.GetBMCAccount(ctxT(r.t), "h0", true, 0)
	if err != nil {
		r.t.Fatal(err)
	}
	return a
}

func (r *rig) noLockout() {
	r.t.Helper()
	accts, _ := r.sim.Accounts(0)
	for _, a := range accts {
		if a.Locked {
			r.t.Fatalf("account %s is locked out: %+v", a.UserName, accts)
		}
	}
}

// TestRotateOnTakeover: the first holder creates the tier's account with
// the operator's credentials and uses it; the next holder (a new epoch)
// rotates its password, after which the first holder's password is
// refused by the BMC and its writes by the coordinator. The operator's
// account is untouched, nothing is locked out.
func TestRotateOnTakeover(t *testing.T) {
	r := newRig(t, bmcsim.Config{})
	ctx := ctxT(t)
	a := r.takeOver(nil)
	epochA := r.epoch
	userA, pwA, off, err := a.Credentials(ctx, r.target(), epochA)
	if err != nil || off != "" || userA != DefaultUsername || len(pwA) != DefaultPasswordLength {
		t.Fatalf("first holder: %q (len %d) off %q err %v", userA, len(pwA), off, err)
	}
	if !r.works(userA, pwA) {
		t.Fatal("the BMC refuses the tier's account")
	}
	if rec := r.record(); rec.State != wire.BMCAccountConfirmed || rec.Epoch != epochA || rec.Password != pwA || rec.PendingPassword != "" {
		t.Fatalf("record after the first rotation: %v", rec)
	}
	if v, err := r.c.Admin.GetBMCAccount(ctx, "h0", false, 0); err != nil || v.Password != "" {
		t.Fatalf("a GET without reveal: %+v %v", v, err)
	}

	b := r.takeOver(nil)
	userB, pwB, off, err := b.Credentials(ctx, r.target(), r.epoch)
	if err != nil || off != "" || userB != userA || pwB == pwA {
		t.Fatalf("second holder: %q off %q err %v (same password: %v)", userB, off, err, pwB == pwA)
	}
	if r.works(userA, pwA) {
		t.Error("the first holder's password still works after the takeover")
	}
	if !r.works(userB, pwB) || !r.works("admin", "password") {
		t.Error("the new password or the operator's does not work")
	}
	if _, err := r.agent.PutBMCAccount(ctx, "h0", wire.BMCAccountWrite{Epoch: epochA, Op: wire.BMCAccountOpPending, Username: userA, Password: "Stale-pass-1"}); !client.IsStaleEpoch(err) {
		t.Errorf("a stale holder's pending write: %v", err)
	}
	if _, err := r.agent.GetBMCAccount(ctx, "h0", true, epochA); !client.IsStaleEpoch(err) {
		t.Errorf("a stale holder's reveal: %v", err)
	}
	// Same epoch: no new rotation.
	if _, pw, _, _ := b.Credentials(ctx, r.target(), r.epoch); pw != pwB {
		t.Error("a second call under the same epoch rotated again")
	}
	if n := testutil.ToFloat64(b.met.rotations.WithLabelValues(resultRotated)); n != 1 {
		t.Errorf("rackfence_agent_bmc_account_rotations_total{result=rotated} = %v, want 1", n)
	}
	r.noLockout()
}

// TestKillAtEveryStepNeverLocksOut kills the holder (stops the protocol)
// after each step in turn; after each death the coordinator holds a
// password the BMC takes (the current one or the pending one), and the
// next holder rotates and manages the host. No account is locked out.
func TestKillAtEveryStepNeverLocksOut(t *testing.T) {
	killEverywhere(t, newRig(t, bmcsim.Config{}), Steps)
}

func killEverywhere(t *testing.T, r *rig, steps []string) {
	t.Helper()
	ctx := ctxT(t)
	// A first rotation, so every death below has a previous password.
	if _, _, _, err := r.takeOver(nil).Credentials(ctx, r.target(), r.epoch); err != nil {
		t.Fatal(err)
	}
	for _, at := range steps {
		m := r.takeOver(func(_, step string) error {
			if step == at {
				return ErrDied
			}
			return nil
		})
		if _, _, _, err := m.Credentials(ctx, r.target(), r.epoch); !errors.Is(err, ErrDied) {
			t.Fatalf("killed at %s: %v", at, err)
		}
		rec := r.record()
		if !r.works(rec.Username, rec.Password) && (rec.PendingPassword == "" || !r.works(rec.Username, rec.PendingPassword)) {
			t.Fatalf("killed after step %s: neither the current nor the pending password works (%v)", at, rec)
		}
		next := r.takeOver(nil)
		u, pw, off, err := next.Credentials(ctx, r.target(), r.epoch)
		if err != nil || off != "" || !r.works(u, pw) {
			t.Fatalf("the holder after a death at %s: off %q err %v", at, off, err)
		}
		if rec := r.record(); rec.State != wire.BMCAccountConfirmed || rec.Password != pw {
			t.Fatalf("after the next holder (death at %s): %v", at, rec)
		}
		r.noLockout()
	}
}

// TestFenceAtBMCOff: where the BMC cannot hold the tier's account, the
// host keeps the operator's credentials and the record says why.
func TestFenceAtBMCOff(t *testing.T) {
	cases := []struct {
		name string
		pol  bmcsim.AccountPolicy
		want string
		// created: the tier's account exists on the BMC before (a
		// password change, not a create).
		created bool
	}{
		{"no-create", bmcsim.AccountPolicy{Slots: 16, FirstID: 1, NoCreate: true}, "does not allow creating", false},
		{"full", bmcsim.AccountPolicy{Slots: 1, FirstID: 1}, "no free account slot", false},
		{"policy", bmcsim.AccountPolicy{Slots: 4, FirstID: 1, MaxPasswordLength: 30, RequiredClasses: []string{"none-such"}}, "refused the generated password", false},
		{"keeps-old-password", bmcsim.AccountPolicy{Slots: 4, FirstID: 1, KeepOldPassword: true}, "refused a login", true},
	}
	r := newRig(t, bmcsim.Config{})
	ctx := ctxT(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.created {
				if err := r.sim.SetAccountPolicy(0, bmcsim.AccountPolicy{Slots: 4, FirstID: 1}); err != nil {
					t.Fatal(err)
				}
				if _, _, off, err := r.takeOver(nil).Credentials(ctx, r.target(), r.epoch); err != nil || off != "" {
					t.Fatalf("creating the account: off %q err %v", off, err)
				}
			}
			if err := r.sim.SetAccountPolicy(0, tc.pol); err != nil {
				t.Fatal(err)
			}
			m := r.takeOver(nil)
			u, pw, off, err := m.Credentials(ctx, r.target(), r.epoch)
			if err != nil || !strings.Contains(off, tc.want) || u != "admin" || pw != "password" {
				t.Fatalf("got %q/%v off %q err %v; want the operator's credentials and %q", u, pw == "password", off, err, tc.want)
			}
			if rec, err := r.c.Admin.GetBMCAccount(ctx, "h0", false, 0); err != nil || rec.State != wire.BMCAccountOff || !strings.Contains(rec.Reason, tc.want) {
				t.Fatalf("record %+v %v", rec, err)
			}
		})
	}
}

// TestScheduledRotation: under one epoch, a password older than MaxAge is
// rotated again on the next call; a younger one is kept.
func TestScheduledRotation(t *testing.T) {
	r := newRig(t, bmcsim.Config{})
	ctx := ctxT(t)
	now := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
	m := r.takeOver(nil)
	m.cfg.MaxAge, m.cfg.Now = 30*24*time.Hour, func() time.Time { return now }
	_, pw1, _, err := m.Credentials(ctx, r.target(), r.epoch)
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(29 * 24 * time.Hour)
	if _, pw, _, _ := m.Credentials(ctx, r.target(), r.epoch); pw != pw1 || !m.Rotated("h0", r.epoch, 0) {
		t.Fatal("rotated before the password was due")
	}
	now = now.Add(2 * 24 * time.Hour)
	if m.Rotated("h0", r.epoch, 0) {
		t.Fatal("a password past MaxAge reads as settled")
	}
	_, pw2, _, err := m.Credentials(ctx, r.target(), r.epoch)
	if err != nil || pw2 == pw1 || !r.works(DefaultUsername, pw2) || r.works(DefaultUsername, pw1) {
		t.Fatalf("scheduled rotation: err %v, same %v", err, pw2 == pw1)
	}
}

// upgradingStore is the coordinator of a cluster with a voter that does
// not apply BMC account writes yet: every pending write is refused with
// upgrade_required (a hand-written fault: the rig has one member).
type upgradingStore struct{ Store }

func (upgradingStore) PutBMCAccount(context.Context, string, wire.BMCAccountWrite) (*wire.BMCAccount, error) {
	return nil, &client.Error{Status: http.StatusServiceUnavailable, Code: wire.CodeUpgradeRequired, Message: "a voter runs an older binary"}
}

// TestCoordinatorNotUpgradedDefersRotation: where the coordinator cannot
// record the pending password yet, nothing is asked of the BMC and the
// host keeps the operator's credentials, saying why, until the retry is
// due; once the coordinator takes the record the rotation runs under the
// same epoch and the host uses the tier's account.
func TestCoordinatorNotUpgradedDefersRotation(t *testing.T) {
	r := newRig(t, bmcsim.Config{})
	m := r.takeOver(nil)
	now := time.Now()
	m.cfg.Now = func() time.Time { return now }
	m.cfg.Store = upgradingStore{r.agent}
	ctx := ctxT(t)
	u, pw, off, err := m.Credentials(ctx, r.target(), r.epoch)
	if err != nil || u != "admin" || pw != "password" || !strings.Contains(off, "cannot record BMC accounts yet") {
		t.Fatalf("got %q off %q err %v", u, off, err)
	}
	if accts, _ := r.sim.Accounts(0); len(accts) != 1 {
		t.Fatalf("the BMC was changed: %+v", accts)
	}
	if n := testutil.ToFloat64(m.met.rotations.WithLabelValues(resultDeferred)); n != 1 {
		t.Fatalf("deferred count %v, want 1", n)
	}
	wait, ok := m.RetryIn("h0")
	if !ok || wait <= 0 || wait > deferMin || !m.Rotated("h0", r.epoch, 0) {
		t.Fatalf("retry in %v (%v), settled %v: want a retry within %v, settled until then", wait, ok, m.Rotated("h0", r.epoch, 0), deferMin)
	}

	m.cfg.Store = r.agent // every member's version recorded: the gate opens
	now = now.Add(deferMax)
	if m.Rotated("h0", r.epoch, 0) {
		t.Fatal("a deferred rotation past its retry time reads as settled")
	}
	u, pw, off, err = m.Credentials(ctx, r.target(), r.epoch)
	if err != nil || off != "" || u != DefaultUsername || !r.works(u, pw) {
		t.Fatalf("after the gate opened: %q off %q err %v", u, off, err)
	}
	if _, ok := m.RetryIn("h0"); ok || !m.Rotated("h0", r.epoch, 0) {
		t.Fatal("a rotated host still has a retry scheduled")
	}
	rec, err := r.agent.GetBMCAccount(ctx, "h0", false, r.epoch)
	if err != nil || rec.State != wire.BMCAccountConfirmed || rec.Epoch != r.epoch {
		t.Fatalf("record %+v %v", rec, err)
	}
}
