package rig

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/rackfence/rackfence/testkit/bmcsim"
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
	all, err := bmcsim.ReadAudit(s.Audit)
	if err != nil {
		s.T.Fatal(err)
	}
	var out []bmcsim.AuditLine
	for _, l := range all {
		if i < 0 || l.Port == s.Base+i {
			out = append(out, l)
		}
	}
	return out
}

// SetKnobs merges knobs (a JSON object of bmcsim.Knobs fields) into BMC
// i's.
func (s *Sim) SetKnobs(i int, knobs string) {
	s.T.Helper()
	req, _ := http.NewRequest(http.MethodPut, fmt.Sprintf("http://127.0.0.1:%d/sim/knobs", s.Base+i), strings.NewReader(knobs))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.T.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		s.T.Fatalf("sim knobs %s on %d: %d", knobs, i, resp.StatusCode)
	}
}
