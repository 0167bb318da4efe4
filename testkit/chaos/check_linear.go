package chaos

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"
)

// hostModel is what the linearizability model keeps of one host: the spec
// fields the workload writes and which intents exist. Acks are the agent's
// and resume is one-shot (the agent drops it), so neither is in the model;
// CheckDurable covers acks.
type hostModel struct {
	Online bool
	Tag    string
	Detach bool
	Drain  bool
}

// InitialTag is the Consumer every host is created with before the run.
const InitialTag = "init"

func modelStep(state, input, output any) (bool, any) {
	s := state.(hostModel)
	op := input.(Op)
	switch op.Kind {
	case OpWrite:
		s.Online, s.Tag = op.Online, op.Tag
		return true, s
	case OpDetach:
		s.Detach = true
		return true, s
	case OpAttach:
		s.Detach = false
		return true, s
	case OpDrain:
		s.Drain = true
		return true, s
	case OpRestore:
		s.Drain = false
		return true, s
	case OpRead:
		v, _ := output.(*HostView)
		if v == nil {
			return false, s
		}
		return v.Online == s.Online && v.Tag == s.Tag && (v.Detach != nil) == s.Detach && (v.Drain != nil) == s.Drain, s
	}
	return true, s
}

var hostPorcupine = porcupine.Model{
	Init: func() any { return hostModel{Online: true, Tag: InitialTag} },
	Step: modelStep,
	DescribeOperation: func(in, out any) string {
		op := in.(Op)
		switch op.Kind {
		case OpWrite:
			return fmt.Sprintf("write(online=%v, tag=%s) %s", op.Online, op.Tag, op.Result)
		case OpRead:
			if v, ok := out.(*HostView); ok && v != nil {
				return fmt.Sprintf("read → online=%v tag=%s detach=%v drain=%v", v.Online, v.Tag, v.Detach != nil, v.Drain != nil)
			}
		}
		return op.Kind + " " + op.Result
	},
}

// LinearResult is the linearizability verdict of one host.
type LinearResult struct {
	Host   string `json:"host"`
	Ops    int    `json:"ops"`
	Info   int    `json:"info"`   // ambiguous operations (return = ∞)
	Result string `json:"result"` // ok, illegal, unknown (checker timed out)
}

// CheckLinear checks each host's history with porcupine. Reads that failed
// or timed out are dropped (they observed nothing); writes and intent
// changes that definitely failed are dropped; ambiguous ones (info) may
// have been applied at any time after their invocation, so their return
// is infinity, as Jepsen does. Resume is not modelled. timeout bounds the
// search per host; a search that runs out reports "unknown", not a pass.
// When vizDir is not empty, a host without a linearization gets porcupine's
// HTML visualization there (linear-HOST.html).
func CheckLinear(ops []Op, timeout time.Duration, vizDir string) ([]LinearResult, []Violation) {
	per := map[string][]porcupine.Operation{}
	info := map[string]int{}
	for _, op := range ops {
		if op.Kind == OpResume || op.Result == ResultFail || (op.Kind == OpRead && op.Result != ResultOK) {
			continue
		}
		ret := op.Return
		if op.Result == ResultInfo {
			ret = math.MaxInt64
			info[op.Host]++
		}
		var out any
		if op.Kind == OpRead {
			out = op.Read
		}
		per[op.Host] = append(per[op.Host], porcupine.Operation{ClientId: op.Client, Input: op, Call: op.Invoke, Output: out, Return: ret})
	}
	hosts := make([]string, 0, len(per))
	for h := range per {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	var res []LinearResult
	var vs []Violation
	for _, h := range hosts {
		r, linfo := porcupine.CheckOperationsVerbose(hostPorcupine, per[h], timeout)
		lr := LinearResult{Host: h, Ops: len(per[h]), Info: info[h]}
		switch r {
		case porcupine.Ok:
			lr.Result = "ok"
		case porcupine.Illegal:
			lr.Result = "illegal"
			what := fmt.Sprintf("host %s: its %d operations have no linearization (%d ambiguous)", h, lr.Ops, lr.Info)
			if vizDir != "" {
				p := filepath.Join(vizDir, "linear-"+h+".html")
				if err := porcupine.VisualizePath(hostPorcupine, linfo, p); err == nil {
					what += "; see " + p
				}
			}
			vs = append(vs, Violation{Checker: "linearizability", What: what})
		default:
			lr.Result = "unknown"
			vs = append(vs, Violation{Checker: "linearizability", What: fmt.Sprintf("host %s: the search over %d operations did not finish within %s; unproven", h, lr.Ops, timeout)})
		}
		res = append(res, lr)
	}
	return res, vs
}
