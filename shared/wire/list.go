package wire

import "time"

// Paged lists. GET /v1/hosts answers pages when asked with ParamLimit or
// ParamContinue: every page of one list is read at the first page's Raft
// index (List.Index), so a list read page by page is one consistent view
// even while hosts change between pages. A page's List.Continue is the
// token of the next one (absent on the last page); the coordinator
// answers list_expired (410) once it no longer keeps that index's view,
// and the client starts the list again. Filters (rack, state, selector)
// apply before paging: a page holds up to limit matching hosts.
const (
	// DefaultPageSize is the page size of a list asked with continue but
	// without limit, and the one clients (rackfencectl --chunk-size,
	// client.ListHostsPages) use unless told otherwise.
	DefaultPageSize = 500
	// MaxPageSize is the largest limit a list accepts.
	MaxPageSize = 5000
	// MaxAuditPageSize is the largest limit GET /v1/audit accepts.
	MaxAuditPageSize = 1000
)

// ViewSummary is ParamView's one value: items are HostSummary, what the
// host table shows, instead of whole hosts.
const ViewSummary = "summary"

// HostSummary is a host as GET /v1/hosts?view=summary answers it: its
// names, labels, the state columns of rackfencectl's host table, its
// intents and handoff; no BMC, image, hardware or BMC details, operation history or
// state-machine bookkeeping. Its fields have Host's names, so it decodes
// into a Host (the fields it leaves out stay zero).
type HostSummary struct {
	Name              string             `json:"name"`
	Rack              string             `json:"rack"`
	Online            bool               `json:"online"`
	Consumer          string             `json:"consumer"`
	Labels            map[string]string  `json:"labels,omitempty"`
	Status            *HostStatusSummary `json:"status,omitempty"`
	Intents           *Intents           `json:"intents,omitempty"`
	ModifiedIndex     uint64             `json:"modifiedIndex,omitempty"`
	DeletionRequested bool               `json:"deletionRequested,omitempty"`
	PivotedTo         string             `json:"pivotedTo,omitempty"`
	// Handoff: a host pivoted in from another tier, its detach not yet
	// (or already) confirmed by the source (the dashboard shows it).
	Handoff *Handoff `json:"handoff,omitempty"`
}

// HostStatusSummary is the part of HostStatus a HostSummary carries.
type HostStatusSummary struct {
	ProvisioningState string `json:"provisioningState"`
	OperationalStatus string `json:"operationalStatus"`
	ErrorType         string `json:"errorType,omitempty"`
	ErrorCount        int    `json:"errorCount"`
	// ErrorMessage names the operation that failed (host list shows it).
	ErrorMessage string `json:"errorMessage,omitempty"`
	PoweredOn    bool   `json:"poweredOn"`
	PowerState   string `json:"powerState,omitempty"`
	// Health is the hardware health's verdict alone (nil when not read):
	// it decodes into HostStatus.Health with only Health set.
	Health      *HealthSummary `json:"health,omitempty"`
	LastUpdated time.Time      `json:"lastUpdated"`
	health      HealthSummary  // what Health points to (no allocation)
}

// HealthSummary is the part of HardwareHealth a summary carries.
type HealthSummary struct {
	Health string `json:"health"`
}

// Summarize fills s (and st, which s.Status points to when h has a
// status) from h; reusing s and st across a list allocates nothing.
func Summarize(h *Host, s *HostSummary, st *HostStatusSummary) {
	*s = HostSummary{Name: h.Name, Rack: h.Rack, Online: h.Online, Consumer: h.Consumer,
		Labels: h.Labels, Intents: h.Intents, ModifiedIndex: h.ModifiedIndex,
		DeletionRequested: h.DeletionRequested, PivotedTo: h.PivotedTo, Handoff: h.Handoff}
	if hs := h.Status; hs != nil {
		*st = HostStatusSummary{ProvisioningState: hs.ProvisioningState, OperationalStatus: hs.OperationalStatus,
			ErrorType: hs.ErrorType, ErrorCount: hs.ErrorCount, ErrorMessage: hs.ErrorMessage, PoweredOn: hs.PoweredOn,
			PowerState: hs.PowerState, LastUpdated: hs.LastUpdated}
		if hs.Health != nil {
			st.health.Health = hs.Health.Health
			st.Health = &st.health
		}
		s.Status = st
	}
}
