package bmcaccount

import (
	"context"
	"errors"
	"fmt"

	"github.com/rackfence/rackfence/shared/wire"
)

// ipmiPolicy: 16 bytes, the IPMI 1.5 size every BMC takes (ipmi_sim
// refuses a login with a longer one, though it stores 20).
var ipmiPolicy = Policy{MinPasswordLength: 8, MaxPasswordLength: 16, Specials: "-_.+="}

// rotateIPMI is the protocol over IPMI: the tier's user in a free slot of
// the user table (user 1, the anonymous user, is never taken), its
// password set with `user set password`, checked with a login. IPMI LAN
// sessions last one command, so there are none to end.
func (m *Manager) rotateIPMI(ctx context.Context, t Target, epoch uint64, rec *wire.BMCAccount, user string) (string, string, string, error) {
	x, err := newIPMI(t.Address, m.cfg.Timeout)
	if err != nil {
		return "", "", "", err
	}
	if t.Requested == 0 && rec != nil && rec.State == wire.BMCAccountPending && rec.PendingEpoch == epoch && rec.PendingPassword != "" {
		if ok, err := x.loginWorks(ctx, user, rec.PendingPassword); err == nil && ok {
			if err := m.confirm(ctx, t.Host, epoch); err != nil {
				return "", "", "", err
			}
			return user, rec.PendingPassword, "", nil
		}
	}
	if user == t.Username {
		return "", "", m.setOff(ctx, t.Host, epoch, "the tier's account name is the operator's own ("+user+"); set another with --bmc-account-username"), nil
	}
	users, err := x.users(ctx, t.Username, t.Password)
	var ae *ipmiAuthError
	if errors.As(err, &ae) {
		return "", "", "", fmt.Errorf("%w: no IPMI session with them to list the users (%v): fix the host's credentials record, or check that the BMC answers IPMI", ErrOperatorAuth, err)
	} else if err != nil {
		return "", "", "", err
	}
	slot, isNew := 0, false
	for _, u := range users {
		if u.name == user {
			slot = u.id
			break
		}
	}
	if slot == 0 {
		for _, u := range users {
			if u.id >= ipmiFirstSlot && u.name == "" {
				slot, isNew = u.id, true
				break
			}
		}
	}
	if slot == 0 {
		return "", "", m.setOff(ctx, t.Host, epoch, fmt.Sprintf("the BMC has no free IPMI user slot for %s (%d users); free one, or the fence at the BMC stays off", user, len(users))), nil
	}
	pw, err := GeneratePassword(ipmiPolicy)
	if err != nil {
		return "", "", "", err
	}
	if off, err := m.recordPending(ctx, t.Host, epoch, user, pw); off != "" || err != nil {
		return "", "", off, err
	}
	err = m.cfg.Guard.Do(ctx, t.Host, "bmc-account-password", m.cfg.MutationTimeout, func(ctx context.Context) error {
		return x.setUser(ctx, t.Username, t.Password, slot, user, pw, isNew)
	})
	if err != nil {
		if errors.As(err, &ae) {
			return "", "", m.setOff(ctx, t.Host, epoch, "the operator's IPMI user may not manage users ("+err.Error()+")"), nil
		}
		return "", "", "", err
	}
	if err := m.step(t.Host, StepBMC); err != nil {
		return "", "", "", err
	}
	ok, err := x.loginWorks(ctx, user, pw)
	if err != nil {
		return "", "", "", fmt.Errorf("logging in with host %s's new IPMI password: %w", t.Host, err)
	}
	if !ok {
		return "", "", m.setOff(ctx, t.Host, epoch, "the BMC took the new IPMI password of user "+user+" but refused a login with it; the operator's credentials are used"), nil
	}
	for _, s := range []string{StepVerified, StepSessions} {
		if err := m.step(t.Host, s); err != nil {
			return "", "", "", err
		}
	}
	if err := m.confirm(ctx, t.Host, epoch); err != nil {
		return "", "", "", err
	}
	m.cfg.Logger.Info("BMC account rotated", "host", t.Host, "epoch", epoch, "account", user, "protocol", "ipmi")
	return user, pw, "", nil
}

// confirm makes the pending password current on the coordinator.
func (m *Manager) confirm(ctx context.Context, host string, epoch uint64) error {
	if _, err := m.cfg.Store.PutBMCAccount(ctx, host, wire.BMCAccountWrite{Epoch: epoch, Op: wire.BMCAccountOpConfirm,
		Request: m.serving(host)}); err != nil {
		return fmt.Errorf("confirming host %s's new BMC password (the BMC has it; the coordinator holds it as pending): %w", host, err)
	}
	return m.step(host, StepConfirm)
}
