package wire

// Names both sides of the API spell: the coordinator reads them and
// shared/client (or the agent) writes them, or the other way round. One
// constant each, so a rename is a compile error on both sides rather than
// a silent mismatch on the wire. Never change a value: it is the contract.

// Query parameters.
const (
	// ParamStale ("true" or "1") on a GET: answer from the member reached,
	// without a read barrier or forwarding; may be behind the leader.
	ParamStale = "stale"
	// ParamRack filters GET /v1/hosts and picks the rack of GET /v1/watch
	// (absent there: every rack).
	ParamRack = "rack"
	// ParamState filters GET /v1/hosts by provisioning state.
	ParamState = "state"
	// ParamSelector filters GET /v1/hosts by labels (ParseSelector).
	ParamSelector = "selector"
	// ParamIndex is the Raft index GET /v1/watch answers after.
	ParamIndex = "index"
	// ParamTimeout is the longest GET /v1/watch holds its answer (a Go
	// duration; capped by the server's watch timeout).
	ParamTimeout = "timeout"
	// ParamBrief ("true") on the fleet watch leaves the inventory out.
	ParamBrief = "brief"
	// ParamStatus ("false") on a rack watch leaves every host's status
	// out of the answer (WatchResponse.StatusOmitted names whose).
	ParamStatus = "status"
	// ParamStream ("true") on GET /v1/watch keeps the answer open: one
	// line of JSON per change (MIMENDJSON) instead of one answer per poll.
	ParamStream = "stream"
	// MIMENDJSON is the content type of a streamed watch: newline-
	// delimited JSON, one answer per line.
	MIMENDJSON = "application/x-ndjson"
	// ParamReveal ("true") on GET /v1/credentials/{name} includes the
	// password (agents of a rack using them; audited).
	ParamReveal = "reveal"
	// ParamForce ("true") on DELETE /v1/hosts/{name} deletes a host while
	// a BMC task of any kind runs on it (refused with bmc_task_running
	// without).
	ParamForce = "force"
	// ParamLimit is the page size of the paged lists (list.go) and of
	// GET /v1/audit, whose first page is the newest records.
	ParamLimit = "limit"
	// ParamContinue is the token of a paged list's next page, as the
	// previous page's List.Continue gave it.
	ParamContinue = "continue"
	// ParamAfter is a host name on GET /v1/hosts: the list starts with the
	// first host named after it (a list that outlived its view goes on
	// there, at a new index). GET /v1/credentials, /v1/tokens and
	// /v1/racks/{rack}/leases take the last item read (list_after.go).
	// It conflicts with ParamContinue.
	ParamAfter = "after"
	// ParamView ("summary") on GET /v1/hosts answers HostSummary items.
	ParamView = "view"
)

// Keys of HostStatus.Extra that another component than agent/hoststate
// (their owner) reads.
const (
	// ExtraRemovalCommitted is "true" once the provisioner's node is gone
	// for a removal drain: the point of no return. The coordinator then
	// refuses to delete the drain intent (a restore).
	ExtraRemovalCommitted = "removalCommitted"
	// ExtraEvents is whether the host's BMC pushes events to its rack
	// agent: "live", or "polling (why)" (agent/events.go); absent when
	// the agent runs without an event listener.
	ExtraEvents = "events"
)
