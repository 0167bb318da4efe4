package bmcaccount

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// ipmiTool drives a BMC's user table over IPMI with ipmitool (lanplus):
// passwords go through the environment (-E) and, for a new password, the
// command is read from stdin (exec /dev/stdin), so no password is ever in
// a process's arguments.
type ipmiTool struct {
	host, port string
	cipher     string
	timeout    time.Duration
}

// ipmiPrivilege is the channel privilege of the tier's IPMI user:
// Administrator, the level ipmitool (and bmclib through it) opens its
// sessions at.
const ipmiPrivilege = "4"

// ipmiFirstSlot: user 1 is the anonymous user of the IPMI spec.
const ipmiFirstSlot = 2

func newIPMI(addr string, timeout time.Duration) (*ipmiTool, error) {
	s, err := wire.ParseBMCAddress(addr)
	if err != nil {
		return nil, err
	}
	host, port, err := net.SplitHostPort(s.HostPort())
	if err != nil {
		host, port = s.Host, "623"
	}
	return &ipmiTool{host: host, port: port, cipher: "3", timeout: timeout}, nil
}

// run runs one ipmitool command as user; stdin, when set, is the command
// (exec /dev/stdin) instead of args.
func (x *ipmiTool) run(ctx context.Context, user, password, stdin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, x.timeout)
	defer cancel()
	full := []string{"-I", "lanplus", "-H", x.host, "-p", x.port, "-C", x.cipher, "-U", user, "-E", "-N", "2", "-R", "2"}
	if stdin != "" {
		full = append(full, "exec", "/dev/stdin")
	} else {
		full = append(full, args...)
	}
	cmd := exec.CommandContext(ctx, "ipmitool", full...)
	cmd.Env = append(os.Environ(), "IPMI_PASSWORD="+password)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin + "\n")
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		what := strings.Join(args, " ")
		if stdin != "" {
			what = strings.Join(strings.Fields(stdin)[:2], " ") // "user set", never the password
		}
		msg := strings.TrimSpace(errb.String())
		if i := strings.IndexByte(msg, '\n'); i > 0 {
			msg = msg[:i]
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) && strings.Contains(msg, "Unable to establish") {
			return out.String(), &ipmiAuthError{what: what, msg: msg}
		}
		return out.String(), fmt.Errorf("ipmitool %s: %v: %s", what, err, msg)
	}
	return out.String(), nil
}

// ipmiAuthError: the BMC refused the session (wrong user or password).
type ipmiAuthError struct{ what, msg string }

func (e *ipmiAuthError) Error() string { return "ipmitool " + e.what + ": " + e.msg }

// ipmiUser is one line of `user list 1`.
type ipmiUser struct {
	id   int
	name string
}

func (x *ipmiTool) users(ctx context.Context, user, password string) ([]ipmiUser, error) {
	out, err := x.run(ctx, user, password, "", "user", "list", "1")
	if err != nil {
		return nil, err
	}
	var us []ipmiUser
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		id, err := strconv.Atoi(f[0])
		if err != nil {
			continue // the header
		}
		name := ""
		// An empty name leaves "true" (Callin) as the second field.
		if len(f) > 1 && f[1] != "true" && f[1] != "false" {
			name = f[1]
		}
		us = append(us, ipmiUser{id: id, name: name})
	}
	return us, nil
}

// loginWorks runs `chassis power status` as user.
func (x *ipmiTool) loginWorks(ctx context.Context, user, password string) (bool, error) {
	_, err := x.run(ctx, user, password, "", "chassis", "power", "status")
	var ae *ipmiAuthError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &ae):
		return false, nil
	default:
		return false, err
	}
}

// setUser makes slot id the tier's user with password: name (new slot
// only), password (from stdin), channel access and enable.
func (x *ipmiTool) setUser(ctx context.Context, opUser, opPass string, id int, name, password string, isNew bool) error {
	sid := strconv.Itoa(id)
	if isNew {
		if _, err := x.run(ctx, opUser, opPass, "", "user", "set", "name", sid, name); err != nil {
			return err
		}
	}
	if _, err := x.run(ctx, opUser, opPass, "user set password "+sid+" "+password+" 16"); err != nil {
		return err
	}
	if isNew {
		if _, err := x.run(ctx, opUser, opPass, "", "channel", "setaccess", "1", sid, "link=on", "ipmi=on", "callin=on", "privilege="+ipmiPrivilege); err != nil {
			return err
		}
	}
	_, err := x.run(ctx, opUser, opPass, "", "user", "enable", sid)
	return err
}
