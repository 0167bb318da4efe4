// Package bmcaccount keeps the tier's own account on each host's BMC and
// rotates its password when the rack's lease moves, so the only
// credentials a BMC accepts for the tier are the current lease holder's:
// a request an older holder sent before its lease ended, delivered late,
// is refused by the BMC itself (401). See docs/operator.md, "Fencing and
// its one limit", and agent/DESIGN.md.
//
// The rotation protocol, per host, under the holder's epoch E:
//
//  1. read the host's record from the coordinator (current and pending
//     passwords, revealed to the holder of E only);
//  2. generate a password (crypto/rand, to the BMC's published policy)
//     and record it as pending under E (a stale epoch is refused);
//  3. with the operator's credentials, create the account or change its
//     password on the BMC (through the guard: a mutation);
//  4. log in with the new password (a BMC may answer a change it did not
//     make);
//  5. end the account's other sessions (those an older holder opened);
//  6. confirm: the pending password becomes the current one.
//
// An agent that dies after step 2 leaves the pending password beside the
// current one: one of the two works on the BMC, and the next holder
// rotates again with the operator's credentials either way, so no host is
// ever locked out. The operator's account is never changed.
package bmcaccount

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

// Store is what the manager asks of the coordinator (*client.Client).
type Store interface {
	GetBMCAccount(ctx context.Context, host string, reveal bool, epoch uint64) (*wire.BMCAccount, error)
	PutBMCAccount(ctx context.Context, host string, w wire.BMCAccountWrite) (*wire.BMCAccount, error)
}

// Protocol steps, named to Config.Step after each one is done.
const (
	StepRead     = "read"
	StepPending  = "pending"
	StepBMC      = "bmc"
	StepVerified = "verified"
	StepSessions = "sessions"
	StepConfirm  = "confirmed"
)

// Steps lists the protocol's steps in order.
var Steps = []string{StepRead, StepPending, StepBMC, StepVerified, StepSessions, StepConfirm}

// DefaultUsername is the tier's account name on every BMC.
const DefaultUsername = "rackfence"

// Config configures a Manager.
type Config struct {
	Store Store
	// Guard fences every change at the BMC (create, password, sessions).
	Guard *guard.Guard
	// Username of the tier's account (DefaultUsername when ""); Role its
	// Redfish RoleId ("Operator" when ""): power, boot, virtual media.
	Username string
	Role     string
	// Timeout bounds a read at the BMC; MutationTimeout a change.
	Timeout, MutationTimeout time.Duration
	// UserAgent of each BMC request (the agent's, naming its epoch).
	UserAgent func(context.Context) string
	Logger    *slog.Logger
	// MaxAge rotates a password again once it is this old, under the
	// same epoch too (0: only on a new epoch). Now is the clock (nil:
	// time.Now).
	MaxAge time.Duration
	Now    func() time.Time
	// Registerer receives rackfence_agent_bmc_account_rotations_total
	// (nil: not registered).
	Registerer prometheus.Registerer
	// Off, when set, says why the fence at the BMC is off for every host
	// of this agent (--provisioner ironic: Ironic keeps the password in
	// driver_info): the operator's credentials are used and each host's
	// record says so, once per epoch; nothing is asked of the BMC.
	Off string
	// Step, when set, is called after each protocol step; an error
	// stops the protocol there (tests kill the agent at each step).
	Step func(host, step string) error
}

// Manager hands out the credentials every BMC call of a host uses.
type Manager struct {
	cfg Config
	met *metrics
	mu  sync.Mutex
	m   map[string]*hostAcct
	// deferLogged is the last epoch whose first deferred rotation was
	// logged (deferred.go).
	deferLogged uint64
}

type hostAcct struct {
	mu       sync.Mutex
	epoch    uint64 // the epoch user/password were rotated (or found off) under
	at       time.Time
	user, pw string
	off      string // why the fence at the BMC is off ("" when on)
	// served is the last on-demand request answered; serving the one the
	// running rotation answers (its confirm or off write names it).
	served, serving uint64
	// unsent is the pending password this manager recorded last whose
	// change it never sent to the BMC (the guard refused it, or the
	// protocol stopped before): a retry does not try it at the BMC, where
	// each such login is a failure towards the account's lockout.
	unsent string
	// retryAt, when set, is when a rotation the coordinator could not
	// record yet is tried again (off says why meanwhile); deferrals counts
	// those tries under epoch (deferred.go).
	retryAt   time.Time
	deferrals int
}

// New returns a Manager.
func New(cfg Config) *Manager {
	if cfg.Username == "" {
		cfg.Username = DefaultUsername
	}
	if cfg.Role == "" {
		cfg.Role = "Operator"
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 20 * time.Second
	}
	if cfg.MutationTimeout <= 0 {
		cfg.MutationTimeout = 4 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Manager{cfg: cfg, m: map[string]*hostAcct{}, met: newMetrics(cfg.Registerer)}
}

// Target is a host's BMC as the operator gave it.
type Target struct {
	Host     string
	Address  string
	Insecure bool
	// Username and Password are the operator's credentials: used to
	// manage the tier's account, never changed.
	Username, Password string
	// Requested is the createdIndex of the host's on-demand rotation
	// request (intents.rotateCredentials; 0: none): a request not yet
	// answered rotates again, under the same epoch too.
	Requested uint64
}

// Credentials returns the username and password every BMC call of the
// host makes under epoch: the tier's account, rotated under epoch before
// it is first returned, or the operator's when the fence at the BMC is
// off for the host (off says why). An error leaves nothing decided: the
// caller retries (the coordinator then still holds a working password).
func (m *Manager) Credentials(ctx context.Context, t Target, epoch uint64) (user, password, off string, err error) {
	m.mu.Lock()
	h := m.m[t.Host]
	if h == nil {
		h = &hostAcct{}
		m.m[t.Host] = h
	}
	m.mu.Unlock()
	h.mu.Lock()
	defer h.mu.Unlock()
	if m.settled(h, epoch, t.Requested) {
		if h.off != "" {
			return t.Username, t.Password, h.off, nil
		}
		return h.user, h.pw, "", nil
	}
	h.serving = t.Requested
	if m.cfg.Off != "" {
		user, password, off, err = "", "", m.setOff(ctx, t.Host, epoch, m.cfg.Off), nil
	} else {
		user, password, off, err = m.rotate(ctx, t, epoch, h)
	}
	h.serving = 0
	var notYet *notYetError
	switch {
	case errors.As(err, &notYet):
		m.met.count(resultDeferred)
		m.deferHost(h, t.Host, epoch, notYet.why)
		return t.Username, t.Password, notYet.why, nil
	case err != nil:
		m.met.count(resultError)
		return "", "", "", err
	case off != "":
		m.met.count(resultOff)
	default:
		m.met.count(resultRotated)
		if h.deferrals > 0 && h.epoch == epoch {
			m.cfg.Logger.Info("the coordinator recorded the BMC account: the fence at the BMC is on for this host",
				"host", t.Host, "epoch", epoch, "deferredTries", h.deferrals)
		}
	}
	h.epoch, h.user, h.pw, h.off, h.at = epoch, user, password, off, m.cfg.Now()
	h.retryAt, h.deferrals = time.Time{}, 0
	if t.Requested > h.served {
		h.served = t.Requested
	}
	if off != "" {
		return t.Username, t.Password, off, nil
	}
	return user, password, "", nil
}

// Forget drops what the manager knows of host (the BMC refused the
// tier's password: the next call reads the record and rotates again).
func (m *Manager) Forget(host string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.m, host)
}

func (m *Manager) step(host, s string) error {
	if m.cfg.Step == nil {
		return nil
	}
	return m.cfg.Step(host, s)
}

// rotate runs the protocol for one host; off != "" records the fence at
// the BMC off (on the coordinator too).
func (m *Manager) rotate(ctx context.Context, t Target, epoch uint64, h *hostAcct) (user, pw, off string, err error) {
	log := m.cfg.Logger.With("host", t.Host, "epoch", epoch)
	rec, err := m.cfg.Store.GetBMCAccount(ctx, t.Host, true, epoch)
	if err != nil && !client.IsNotFound(err) {
		return "", "", "", fmt.Errorf("reading host %s's BMC account record: %w", t.Host, err)
	}
	if err := m.step(t.Host, StepRead); err != nil {
		return "", "", "", err
	}
	user = m.cfg.Username
	if rec != nil && rec.Username != "" {
		user = rec.Username
	}
	r, err := newRF(t.Address, t.Insecure, m.cfg.UserAgent, m.cfg.Timeout)
	if errors.Is(err, errNotRedfish) {
		return m.rotateIPMI(ctx, t, epoch, rec, user, h)
	} else if err != nil {
		return "", "", "", err
	}
	// A pending password of this epoch whose confirmation did not reach
	// the coordinator: confirm it if the BMC takes it.
	if t.Requested == 0 && h.pendingMayBeSet(rec, epoch) {
		if ok, err := r.loginWorks(ctx, user, rec.PendingPassword); err == nil && ok {
			if err := m.endSessionsAndConfirm(ctx, r, t, user, epoch, ""); err != nil {
				return "", "", "", err
			}
			return user, rec.PendingPassword, "", nil
		}
	}
	svc, err := r.service(ctx, t.Username, t.Password)
	switch st := statusOf(err); {
	case errors.Is(err, errNoAccountService), st == http.StatusNotFound:
		return "", "", m.setOff(ctx, t.Host, epoch, "the BMC publishes no Redfish AccountService"), nil
	case st == http.StatusUnauthorized || st == http.StatusForbidden:
		return "", "", "", fmt.Errorf("%w while reading its AccountService (%v): fix the host's credentials record", ErrOperatorAuth, err)
	case err != nil:
		return "", "", "", err
	}
	pw, err = GeneratePassword(svc.Policy)
	if err != nil {
		return "", "", "", err
	}
	if off, err := m.recordPending(ctx, t.Host, epoch, user, pw); off != "" || err != nil {
		return "", "", off, err
	}
	h.unsent = pw
	if off, err := m.setAtBMC(ctx, r, svc, t, user, pw, h); err != nil || off != "" {
		if off != "" {
			return "", "", m.setOff(ctx, t.Host, epoch, off), nil
		}
		return "", "", "", err
	}
	if err := m.step(t.Host, StepBMC); err != nil {
		return "", "", "", err
	}
	ok, err := r.loginWorks(ctx, user, pw)
	if err != nil {
		return "", "", "", fmt.Errorf("logging in with host %s's new BMC password: %w", t.Host, err)
	}
	if !ok {
		return "", "", m.setOff(ctx, t.Host, epoch, "the BMC accepted the new password of account "+user+
			" but refused a login with it; the operator's credentials are used: check the account on the BMC"), nil
	}
	if err := m.step(t.Host, StepVerified); err != nil {
		return "", "", "", err
	}
	if err := m.endSessionsAndConfirm(ctx, r, t, user, epoch, svc.sessions); err != nil {
		return "", "", "", err
	}
	log.Info("BMC account rotated", "account", user)
	return user, pw, "", nil
}

// setAtBMC creates the account or changes its password, with the
// operator's credentials. off != "" when the BMC cannot hold the account.
func (m *Manager) setAtBMC(ctx context.Context, r *rf, svc *service, t Target, user, pw string, h *hostAcct) (off string, err error) {
	slots, err := r.accounts(ctx, svc.Accounts.ID, t.Username, t.Password)
	if err != nil {
		if st := statusOf(err); st == http.StatusForbidden || st == http.StatusUnauthorized {
			return "the operator's account may not read the BMC's accounts (" + err.Error() + ")", nil
		}
		return "", err
	}
	var mine, empty *slot
	for i := range slots {
		switch {
		case slots[i].UserName == user:
			mine = &slots[i]
		case slots[i].UserName == "" && empty == nil:
			empty = &slots[i]
		}
	}
	if user == t.Username {
		return "the tier's account name is the operator's own (" + user + "); set another with --bmc-account-username", nil
	}
	enabled := true
	var body any
	method, path := http.MethodPatch, ""
	switch {
	case mine != nil:
		path, body = mine.path, map[string]any{"Password": pw, "Enabled": enabled}
	case empty != nil:
		path, body = empty.path, map[string]any{"UserName": user, "Password": pw, "RoleId": m.cfg.Role, "Enabled": enabled}
	default:
		method, path, body = http.MethodPost, trimID(svc.Accounts.ID), map[string]any{"UserName": user, "Password": pw, "RoleId": m.cfg.Role, "Enabled": enabled}
	}
	err = m.cfg.Guard.Do(ctx, t.Host, "bmc-account-password", m.cfg.MutationTimeout, func(ctx context.Context) error {
		h.unsent = "" // from here the BMC may have it
		_, err := r.do(ctx, method, path, t.Username, t.Password, body, nil)
		return err
	})
	var he *httpError
	if errors.As(err, &he) {
		switch {
		case strings.HasSuffix(he.MessageID, "CreateLimitReachedForResource"):
			return "the BMC has no free account slot for account " + user + " (" + he.Error() + "); free one, or the fence at the BMC stays off", nil
		case he.Status == http.StatusMethodNotAllowed:
			return "the BMC does not allow creating account " + user + " (" + he.Error() + ")", nil
		case he.Status == http.StatusForbidden || he.Status == http.StatusUnauthorized:
			return "the operator's account may not manage the BMC's accounts (" + he.Error() + "); give it the Administrator role, or the fence at the BMC stays off", nil
		case he.Status == http.StatusBadRequest:
			return "the BMC refused the generated password for account " + user + " (" + he.Error() + ")", nil
		}
	}
	return "", err
}

// endSessionsAndConfirm ends the account's sessions (an older holder's)
// and confirms the pending password.
func (m *Manager) endSessionsAndConfirm(ctx context.Context, r *rf, t Target, user string, epoch uint64, sessions string) error {
	if sessions == "" {
		if svc, err := r.service(ctx, t.Username, t.Password); err == nil {
			sessions = svc.sessions
		}
	}
	ids, err := r.sessionsOf(ctx, sessions, user, t.Username, t.Password)
	if err != nil {
		return fmt.Errorf("listing host %s's BMC sessions: %w", t.Host, err)
	}
	for _, id := range ids {
		err := m.cfg.Guard.Do(ctx, t.Host, "bmc-session-end", m.cfg.MutationTimeout, func(ctx context.Context) error {
			_, err := r.do(ctx, http.MethodDelete, id, t.Username, t.Password, nil, nil)
			if statusOf(err) == http.StatusNotFound {
				return nil
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("ending session %s of account %s on host %s's BMC: %w", id, user, t.Host, err)
		}
	}
	if err := m.step(t.Host, StepSessions); err != nil {
		return err
	}
	return m.confirm(ctx, t.Host, epoch)
}

// setOff records the fence at the BMC off for host (best effort: the
// status the agent reports says so too) and returns why.
func (m *Manager) setOff(ctx context.Context, host string, epoch uint64, why string) string {
	if _, err := m.cfg.Store.PutBMCAccount(ctx, host, wire.BMCAccountWrite{Epoch: epoch, Op: wire.BMCAccountOpOff, Reason: why,
		Request: m.serving(host)}); err != nil {
		m.cfg.Logger.Warn("could not record the fence at the BMC off", "host", host, "err", err)
	}
	m.cfg.Logger.Warn("the fence at the BMC is off for this host", "host", host, "reason", why)
	return why
}

// pendingMayBeSet reports whether rec holds a pending password of epoch the BMC
// may have taken: one this manager did not record, or recorded and then
// sent (or may have). h.mu held.
func (h *hostAcct) pendingMayBeSet(rec *wire.BMCAccount, epoch uint64) bool {
	return rec != nil && rec.State == wire.BMCAccountPending && rec.PendingEpoch == epoch && rec.PendingPassword != "" &&
		rec.PendingPassword != h.unsent
}

// Rotated reports whether host's account was settled (rotated, or found
// off) under epoch, with the on-demand request requested (0: none)
// answered.
func (m *Manager) Rotated(host string, epoch, requested uint64) bool {
	m.mu.Lock()
	h := m.m[host]
	m.mu.Unlock()
	if h == nil {
		return false
	}
	if !h.mu.TryLock() {
		return false // a rotation runs
	}
	defer h.mu.Unlock()
	return m.settled(h, epoch, requested)
}

// serving is the on-demand request the running rotation of host answers
// (0: none). Called by that rotation, which holds the host's lock.
func (m *Manager) serving(host string) uint64 {
	m.mu.Lock()
	h := m.m[host]
	m.mu.Unlock()
	if h == nil {
		return 0
	}
	return h.serving
}

// settled: h was rotated (or found off) under epoch, the on-demand
// request requested (0: none) was answered, and its password is not due
// for a scheduled rotation. h.mu held.
func (m *Manager) settled(h *hostAcct, epoch, requested uint64) bool {
	if epoch == 0 || h.epoch != epoch {
		return false
	}
	if !h.retryAt.IsZero() {
		return m.cfg.Now().Before(h.retryAt) // deferred: tried again then
	}
	if requested > h.served {
		return false
	}
	return h.off != "" || m.cfg.MaxAge <= 0 || m.cfg.Now().Sub(h.at) < m.cfg.MaxAge
}

// recordPending records pw as host's pending password under epoch. A
// coordinator that cannot record it yet (an older version, a cluster
// whose voters are not all upgraded or not all recorded yet) returns a
// *notYetError: nothing was asked of the BMC, the operator's credentials
// are used meanwhile and the rotation is tried again (deferred.go).
func (m *Manager) recordPending(ctx context.Context, host string, epoch uint64, user, pw string) (off string, err error) {
	_, err = m.cfg.Store.PutBMCAccount(ctx, host, wire.BMCAccountWrite{Epoch: epoch, Op: wire.BMCAccountOpPending, Username: user, Password: pw})
	// 404: a coordinator without the route (or the host is gone: nothing
	// to fence then either); 405 likewise; upgrade_required: a voter
	// does not apply the command yet.
	if e, ok := client.AsError(err); ok && (e.Code == wire.CodeUpgradeRequired || e.Status == http.StatusNotFound ||
		e.Status == http.StatusMethodNotAllowed) {
		return "", &notYetError{why: "the coordinator cannot record BMC accounts yet (" + err.Error() +
			"): the operator's credentials are used until it can (every member upgraded and its version recorded); retried"}
	}
	if err != nil {
		return "", fmt.Errorf("recording host %s's pending BMC password: %w", host, err)
	}
	return "", m.step(host, StepPending)
}
