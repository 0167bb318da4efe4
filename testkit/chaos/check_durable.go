package chaos

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// effect is what an operation leaves in one register of a host: the tag
// for writes, "set"/"clear" for the detach and drain intents.
type effect struct {
	reg    string // tag, detach, drain
	value  string
	invoke int64
	ret    int64 // math.MaxInt64 for info
	ok     bool
	id     int
}

func effectsOf(op Op) (effect, bool) {
	e := effect{invoke: op.Invoke, ret: op.Return, ok: op.Result == ResultOK, id: op.ID}
	if op.Result == ResultInfo {
		e.ret = math.MaxInt64
	}
	switch op.Kind {
	case OpWrite:
		e.reg, e.value = "tag", op.Tag
	case OpDetach, OpAttach:
		e.reg, e.value = "detach", map[bool]string{true: "set", false: "clear"}[op.Kind == OpDetach]
	case OpDrain, OpRestore:
		e.reg, e.value = "drain", map[bool]string{true: "set", false: "clear"}[op.Kind == OpDrain]
	default:
		return e, false
	}
	return e, op.Result != ResultFail
}

// CheckDurable checks that no acknowledged operation was lost, against
// the final read of every host taken after the last heal and convergence:
//
//   - writes and intent changes: the final value of each register (the
//     tag, whether a detach or drain intent exists) must come from an
//     operation (acknowledged or ambiguous, or the initial state) that does
//     not strictly precede an acknowledged operation writing something
//     else. Otherwise that acknowledged operation was lost.
//   - intent acks: once a read showed an intent (kind, createdIndex)
//     acknowledged, no later read may show the same intent unacknowledged.
func CheckDurable(ops []Op, final map[string]*HostView) []Violation {
	var out []Violation
	bad := func(f string, a ...any) {
		out = append(out, Violation{Checker: "durability", What: fmt.Sprintf(f, a...)})
	}
	per := map[string][]effect{}
	for _, op := range ops {
		if e, ok := effectsOf(op); ok {
			per[op.Host+"\x00"+e.reg] = append(per[op.Host+"\x00"+e.reg], e)
		}
	}
	hosts := make([]string, 0, len(final))
	for h := range final {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	for _, h := range hosts {
		v := final[h]
		if v == nil {
			bad("host %s: no final read", h)
			continue
		}
		for _, reg := range []string{"tag", "detach", "drain"} {
			var fv, init string
			switch reg {
			case "tag":
				fv, init = v.Tag, InitialTag
			case "detach":
				fv, init = map[bool]string{true: "set", false: "clear"}[v.Detach != nil], "clear"
			case "drain":
				fv, init = map[bool]string{true: "set", false: "clear"}[v.Drain != nil], "clear"
			}
			es := per[h+"\x00"+reg]
			// The latest return among operations that could have left fv.
			var latest int64 = math.MinInt64
			found := fv == init
			for _, e := range es {
				if e.value == fv {
					found = true
					if e.ret > latest {
						latest = e.ret
					}
				}
			}
			if !found {
				bad("host %s: final %s %q was never written by any operation", h, reg, fv)
				continue
			}
			for _, e := range es {
				if e.ok && e.value != fv && e.invoke > latest {
					bad("host %s: acknowledged %s %s=%q (op %d) lost: the final value %q comes only from operations that returned before it was invoked",
						h, reg, reg, e.value, e.id, fv)
				}
			}
		}
	}
	// Acks never go back.
	type key struct {
		host, kind string
		index      uint64
	}
	ackedAt := map[key]int64{} // earliest return of a read that showed it acked
	var reads []Op
	for _, op := range ops {
		if op.Kind == OpRead && op.Result == ResultOK && op.Read != nil {
			reads = append(reads, op)
		}
	}
	sort.SliceStable(reads, func(i, j int) bool { return reads[i].Return < reads[j].Return })
	for _, r := range reads {
		for kind, iv := range map[string]*IntentView{"detach": r.Read.Detach, "drain": r.Read.Drain} {
			if iv != nil && iv.Acked {
				k := key{r.Host, kind, iv.Index}
				if t, ok := ackedAt[k]; !ok || r.Return < t {
					ackedAt[k] = r.Return
				}
			}
		}
	}
	for _, r := range reads {
		for kind, iv := range map[string]*IntentView{"detach": r.Read.Detach, "drain": r.Read.Drain} {
			if iv == nil || iv.Acked {
				continue
			}
			if t, ok := ackedAt[key{r.Host, kind, iv.Index}]; ok && r.Invoke > t {
				bad("host %s: %s intent %d was read acknowledged, then unacknowledged by read %d", r.Host, kind, iv.Index, r.ID)
			}
		}
	}
	return out
}

// panicMarks are the lines no process of a run may print.
var panicMarks = []string{"panic:", "fatal error:", "WARNING: DATA RACE"}

// CheckLogs reports every log line in dir/*.log carrying a panic, a Go
// runtime fatal error or a race report.
func CheckLogs(dir string) []Violation {
	var out []Violation
	files, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	sort.Strings(files)
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			out = append(out, Violation{Checker: "logs", What: err.Error()})
			continue
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		n := 0
		for sc.Scan() {
			n++
			line := sc.Text()
			for _, m := range panicMarks {
				if strings.Contains(line, m) {
					out = append(out, Violation{Checker: "logs", What: fmt.Sprintf("%s:%d: %s", filepath.Base(f), n, trim(line, 300))})
				}
			}
		}
		fh.Close()
	}
	return out
}

func trim(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
