package bmc

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// ipmiDiagnose tells a credentials refusal from an unreachable BMC after
// ipmitool failed with "Unable to establish IPMI v2 / RMCP+ session", which
// it prints for both. bmclib runs ipmitool without -v, so the reason is
// lost; one verbose probe (power status, read-only) shows it: "RAKP 2 HMAC
// is invalid" or an unauthorized name is a refusal; a BMC that answered the
// capabilities request but never the RAKP exchange is refusing the user;
// no answer at all is unreachable. The password goes through the
// environment (-E), never the command line.
func (c *Conn) ipmiDiagnose(ctx context.Context) (auth bool) {
	path, err := exec.LookPath("ipmitool")
	if err != nil {
		return false
	}
	pctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	args := []string{"-v", "-I", "lanplus", "-H", c.scheme.Host, "-p", strconv.Itoa(portOf(c.scheme)),
		"-U", c.target.Username, "-E", "-C", c.opts.IPMICipherSuite, "-N", "2", "-R", "1", "chassis", "power", "status"}
	cmd := exec.CommandContext(pctx, path, args...)
	cmd.Env = []string{"IPMITOOL_PASSWORD=" + c.target.Password}
	out, _ := cmd.CombinedOutput()
	s := strings.ToLower(string(out))
	switch {
	case containsAny(s, "rakp 2 hmac is invalid", "unauthorized name", "invalid user", "insufficient privilege",
		"rakp 2 message indicates an error", "rakp 4 message indicates an error"):
		return true
	case strings.Contains(s, "no response from rakp 1") && !strings.Contains(s, "get auth capabilities error"):
		return true
	}
	return false
}
