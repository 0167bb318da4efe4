package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rackfence/rackfence/agent/bmcaccount"
	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

// tierCredentials swaps the operator's credentials of a host for the
// tier's own BMC account, rotated under the current epoch before the
// host's first call of that epoch (Config.BMCAccounts; nil: the
// operator's are used, as before). Where the fence at the BMC is off for
// the host the operator's are kept and the reason is logged once per
// epoch (the coordinator's record and the host's events say so too).
func (s *session) tierCredentials(ctx context.Context, h wire.Host, user, password string) (string, string, error) {
	m := s.a.cfg.BMCAccounts
	if m == nil || s.a.cfg.Guard.Blocked(h.Name) {
		// A detached or drained host keeps its account, but no agent
		// rotates or uses it until it is attached again.
		return user, password, nil
	}
	l, ok := s.a.cfg.Holder.Valid(0)
	if !ok {
		return "", "", fmt.Errorf("%w: host %s: the rack lease is no longer valid", guard.ErrFenced, h.Name)
	}
	u, p, _, err := m.Credentials(ctx, bmcaccount.Target{Host: h.Name, Address: h.BMC.Address,
		Insecure: h.BMC.DisableCertificateVerification, Username: user, Password: password, Requested: rotationRequest(h)}, l.Epoch)
	switch {
	case err == nil:
		return u, p, nil
	case errors.Is(err, bmcaccount.ErrOperatorAuth):
		return "", "", fmt.Errorf("%w: host %s: %v", errclass.ErrAuth, h.Name, err)
	case errors.Is(err, guard.ErrFenced), client.IsStaleEpoch(err):
		return "", "", fmt.Errorf("%w: host %s: rotating the tier's BMC account: %v", guard.ErrFenced, h.Name, err)
	default:
		return "", "", fmt.Errorf("%w: host %s: rotating the tier's BMC account: %v", errclass.ErrTransient, h.Name, err)
	}
}

// forgetTierCredentials makes the next call of host read its BMC account
// again (the BMC refused its password: changed by hand, or rotated by a
// newer holder).
func (s *session) forgetTierCredentials(host string) {
	if m := s.a.cfg.BMCAccounts; m != nil {
		m.Forget(host)
	}
}

// rotateOnTakeover settles host's BMC account under this session's epoch
// the first time the session looks at the host, whether or not an action
// follows: a new holder must change the password before an older
// holder's late request can reach the BMC, not only before its own first
// change. A failure is logged; the next action tries again. A rotation
// the coordinator could not record yet (the version gate) schedules the
// host's next look for when it is due, so the fence at the BMC turns on
// under this lease once the coordinator takes the record.
func (s *session) rotateOnTakeover(h wire.Host) {
	m := s.a.cfg.BMCAccounts
	if m == nil || h.BMC.Credentials == "" || h.BMC.Address == "" || s.a.cfg.Guard.Blocked(h.Name) {
		return
	}
	defer func() {
		if wait, ok := m.RetryIn(h.Name); ok {
			s.queue.addAfter(h.Name, max(wait, 100*time.Millisecond))
		}
	}()
	if m.Rotated(h.Name, s.lease.Epoch, rotationRequest(h)) {
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, s.a.cfg.ActionTimeout)
	defer cancel()
	u, p, err := s.a.creds.get(ctx, h.BMC.Credentials)
	if err == nil {
		_, _, err = s.tierCredentials(ctx, h, u, p)
	}
	if err != nil {
		s.log.Warn("could not rotate the tier's BMC account on taking the rack over; retried before the host's next action", "host", h.Name, "err", err.Error())
	}
}

// rotationRequest is the createdIndex of host's on-demand rotation
// request (rackfencectl credentials rotate), 0 when none waits.
func rotationRequest(h wire.Host) uint64 {
	if h.Intents == nil || h.Intents.RotateCredentials == nil {
		return 0
	}
	return h.Intents.RotateCredentials.CreatedIndex
}

// disableTierAccount turns the tier's account on host's BMC off as the
// host leaves this tier's hands (detached, a pivot's first step, or
// drained), before the host is blocked and the detach acknowledged: from
// then on the BMC itself refuses the tier's account, so a source tier
// whose data still names the host cannot act on it. Best effort: a BMC
// that cannot be reached does not hold up the detach (logged; tried again
// by the next agent that finds the host detached). The next use after the
// host is attached again rotates and enables the account.
func (s *session) disableTierAccount(h wire.Host) {
	m := s.a.cfg.BMCAccounts
	if m == nil || h.BMC.Credentials == "" || h.BMC.Address == "" {
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, s.a.cfg.ActionTimeout)
	defer cancel()
	u, p, err := s.a.creds.get(ctx, h.BMC.Credentials)
	if err == nil {
		_, err = m.Disable(ctx, bmcaccount.Target{Host: h.Name, Address: h.BMC.Address,
			Insecure: h.BMC.DisableCertificateVerification, Username: u, Password: p})
	}
	if err != nil {
		s.log.Warn("could not disable the tier's BMC account of a host leaving this tier's hands; the BMC still takes its last password",
			"host", h.Name, "err", err.Error())
	}
}
