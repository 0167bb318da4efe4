package chaos

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"sort"
	"sync"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

// Operation kinds of the workload.
const (
	OpWrite   = "write" // PUT the host's spec with a new Online and a new tag (Consumer)
	OpRead    = "read"  // GET the host
	OpDetach  = "detach"
	OpAttach  = "attach"
	OpDrain   = "drain" // maintenance mode, forced
	OpRestore = "restore"
	OpResume  = "resume"
)

// Results of an operation, as Jepsen names them.
const (
	ResultOK   = "ok"   // acknowledged
	ResultFail = "fail" // definitely not applied (the coordinator refused it)
	ResultInfo = "info" // unknown: timeout, unreachable, 5xx: may have been applied
)

// Op is one recorded client operation. Times are wall-clock Unix
// nanoseconds on this machine, the clock bmcsim and the coordinators use.
type Op struct {
	ID     int    `json:"id"`
	Client int    `json:"client"`
	Host   string `json:"host"`
	Kind   string `json:"kind"`
	Online bool   `json:"online,omitempty"` // write input
	Tag    string `json:"tag,omitempty"`    // write input: the unique Consumer value
	Invoke int64  `json:"invoke"`
	Return int64  `json:"return"`
	Result string `json:"result"`
	Err    string `json:"err,omitempty"`
	// Read is a read's output, and the host as a successful write or
	// intent call answered it when the API returns it.
	Read *HostView `json:"read,omitempty"`
}

// HostView is what the model and the durability checker look at in a host.
type HostView struct {
	Online bool        `json:"online"`
	Tag    string      `json:"tag"`
	Detach *IntentView `json:"detach,omitempty"`
	Drain  *IntentView `json:"drain,omitempty"`
}

// IntentView is one intent as read.
type IntentView struct {
	Index uint64 `json:"index"`
	Acked bool   `json:"acked"`
}

// ViewOf reduces a host read to a HostView.
func ViewOf(h *wire.Host) *HostView {
	v := &HostView{Online: h.Online, Tag: h.Consumer}
	if h.Intents != nil {
		if d := h.Intents.Detach; d != nil {
			v.Detach = &IntentView{Index: d.CreatedIndex, Acked: d.Acknowledged}
		}
		if d := h.Intents.Drain; d != nil {
			v.Drain = &IntentView{Index: d.CreatedIndex, Acked: d.Acknowledged}
		}
	}
	return v
}

// Classify maps a client error to a result: nil is ok; an answer of 4xx
// is a definite failure; anything else (a timeout, no member reachable,
// "may have been applied", a 5xx) is info.
func Classify(err error) string {
	if err == nil {
		return ResultOK
	}
	if e, ok := client.AsError(err); ok && e.Status >= 400 && e.Status < 500 {
		return ResultFail
	}
	return ResultInfo
}

// History records operations; safe for concurrent use.
type History struct {
	mu  sync.Mutex
	ops []Op
}

// Add records one completed (or given-up) operation and returns its ID.
func (h *History) Add(op Op) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	op.ID = len(h.ops)
	h.ops = append(h.ops, op)
	return op.ID
}

// Ops returns the operations sorted by invoke time.
func (h *History) Ops() []Op {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := append([]Op(nil), h.ops...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Invoke < out[j].Invoke })
	return out
}

// WriteFile writes the history as JSON lines.
func (h *History) WriteFile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, op := range h.Ops() {
		if err := enc.Encode(op); err != nil {
			f.Close()
			return err
		}
	}
	return errors.Join(w.Flush(), f.Close())
}
