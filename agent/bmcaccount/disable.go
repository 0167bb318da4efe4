package bmcaccount

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/rackfence/rackfence/shared/client"
)

// Disable turns the tier's account on t's BMC off (Redfish Enabled:
// false, IPMI `user disable`) and ends its sessions, with the operator's
// credentials, when the host leaves this agent's hands: detached (a
// pivot's first step, so the source tier is refused by the BMC itself
// once the destination has the host), drained. The coordinator keeps the
// account's record and password; the manager forgets the host, so its
// next use (the host attached or restored again) rotates the password and
// enables the account in the same change. found is false when the host
// has no account of the tier (no record, or none on the BMC).
func (m *Manager) Disable(ctx context.Context, t Target) (found bool, err error) {
	defer m.Forget(t.Host)
	if m.cfg.Off != "" {
		return false, nil
	}
	rec, err := m.cfg.Store.GetBMCAccount(ctx, t.Host, false, 0)
	if client.IsNotFound(err) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("reading host %s's BMC account record: %w", t.Host, err)
	}
	user := rec.Username
	if user == "" || user == t.Username {
		return false, nil // off from the start: the operator's account is never changed
	}
	r, err := newRF(t.Address, t.Insecure, m.cfg.UserAgent, m.cfg.Timeout)
	if errors.Is(err, errNotRedfish) {
		return m.disableIPMI(ctx, t, user)
	} else if err != nil {
		return false, err
	}
	svc, err := r.service(ctx, t.Username, t.Password)
	if err != nil {
		return false, fmt.Errorf("reading host %s's AccountService: %w", t.Host, err)
	}
	slots, err := r.accounts(ctx, svc.Accounts.ID, t.Username, t.Password)
	if err != nil {
		return false, fmt.Errorf("reading host %s's BMC accounts: %w", t.Host, err)
	}
	for _, s := range slots {
		if s.UserName != user {
			continue
		}
		if s.Enabled {
			err := m.cfg.Guard.Do(ctx, t.Host, "bmc-account-disable", m.cfg.MutationTimeout, func(ctx context.Context) error {
				_, err := r.do(ctx, http.MethodPatch, s.path, t.Username, t.Password, map[string]any{"Enabled": false}, nil)
				return err
			})
			if err != nil {
				return true, fmt.Errorf("disabling account %s on host %s's BMC: %w", user, t.Host, err)
			}
		}
		ids, err := r.sessionsOf(ctx, svc.sessions, user, t.Username, t.Password)
		if err != nil {
			return true, fmt.Errorf("listing host %s's BMC sessions: %w", t.Host, err)
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
				return true, fmt.Errorf("ending session %s of account %s on host %s's BMC: %w", id, user, t.Host, err)
			}
		}
		m.cfg.Logger.Info("BMC account disabled", "host", t.Host, "account", user)
		return true, nil
	}
	return false, nil
}

// disableIPMI is Disable over IPMI: `user disable` of the tier's slot
// (LAN sessions last one command: none to end).
func (m *Manager) disableIPMI(ctx context.Context, t Target, user string) (bool, error) {
	x, err := newIPMI(t.Address, m.cfg.Timeout)
	if err != nil {
		return false, err
	}
	users, err := x.users(ctx, t.Username, t.Password)
	if err != nil {
		return false, fmt.Errorf("listing host %s's IPMI users: %w", t.Host, err)
	}
	for _, u := range users {
		if u.name != user {
			continue
		}
		err := m.cfg.Guard.Do(ctx, t.Host, "bmc-account-disable", m.cfg.MutationTimeout, func(ctx context.Context) error {
			_, err := x.run(ctx, t.Username, t.Password, "", "user", "disable", itoa(u.id))
			return err
		})
		if err != nil {
			return true, fmt.Errorf("disabling IPMI user %s on host %s's BMC: %w", user, t.Host, err)
		}
		m.cfg.Logger.Info("BMC account disabled", "host", t.Host, "account", user, "protocol", "ipmi")
		return true, nil
	}
	return false, nil
}
