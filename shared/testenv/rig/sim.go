package rig

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/rackfence/rackfence/shared/bmcsim"
)

// State reads /sim/state of BMC i.
func (s *Sim) State(i int) (bmcsim.State, error) {
	var st bmcsim.State
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/sim/state", s.Base+i))
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return st, fmt.Errorf("sim state %d", resp.StatusCode)
	}
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

// Fault sets the fault mode of BMC i (none, http500, hang, refuse-auth).
func (s *Sim) Fault(i int, mode string) {
	s.T.Helper()
	req, _ := http.NewRequest(http.MethodPut, fmt.Sprintf("http://127.0.0.1:%d/sim/fault", s.Base+i),
		strings.NewReader(`{"mode":"`+mode+`"}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.T.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		s.T.Fatalf("sim fault %s on %d: %d", mode, i, resp.StatusCode)
	}
}

// AuditLines returns the audit lines (mutating calls) of every BMC, or of
// BMC i when i >= 0.
func (s *Sim) AuditLines(i int) []bmcsim.AuditLine {
	s.T.Helper()
	f, err := os.Open(s.Audit)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		s.T.Fatal(err)
	}
	defer f.Close()
	var out []bmcsim.AuditLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l bmcsim.AuditLine
		if json.Unmarshal(sc.Bytes(), &l) == nil && (i < 0 || l.Port == s.Base+i) {
			out = append(out, l)
		}
	}
	return out
}
