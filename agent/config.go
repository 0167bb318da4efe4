package agent

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/rackfence/rackfence/agent/bmcaccount"
	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/agent/hoststate"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/shared/fence"
)

// Defaults of Config.
const (
	// DefaultWorkers is the default size of the worker pool. BMCs answer
	// slowly (hundreds of milliseconds per request) and a host needs a
	// dozen or more requests to become available, so reconciles spend
	// nearly all their time waiting; 256 workers bring 1,000 new hosts to
	// available in well under 30 s against BMCs with 200 ms latency (see
	// docs/performance.md for the measurements) while costing only goroutines.
	DefaultWorkers = 256
	// DefaultStatusWriters is CoordinatorConns minus the watch's and the
	// lease's connections.
	DefaultStatusWriters = CoordinatorConns - 2
	// DefaultLeaseTTL is the rack lease TTL asked for (the fence's default).
	DefaultLeaseTTL = fence.DefaultTTL
	// DefaultStatusRefresh is how often an unchanged status is written
	// again so a stale agent is visible in lastUpdated. Minutes, not
	// seconds: the lease renewal (every TTL/3) is what proves an agent
	// alive, and at 60 s the touches are 6.7 of the 38 requests and Raft
	// entries a second a coordinator of 10,000 hosts in 100 racks answers
	// when nothing changes (docs/performance.md, "Fleet").
	DefaultStatusRefresh = 5 * time.Minute
	// DefaultHealthInterval is how often a registered Redfish host's
	// hardware health is read from its BMC. It is a pace of its own, not
	// the status refresh's: a status refreshed every minute for the
	// coordinator's sake would otherwise read every BMC every minute (3
	// requests a host on the simulator's default profile, more on
	// subsystem BMCs), the agents' and BMCs' largest steady cost
	// (docs/performance.md, "What an available host costs").
	DefaultHealthInterval = 5 * time.Minute
	// DefaultShutdownGrace bounds how long shutdown waits for in-flight
	// calls before abandoning them and releasing the lease.
	DefaultShutdownGrace = 10 * time.Second
	// DefaultActionTimeout bounds one provisioner call.
	DefaultActionTimeout = 2 * time.Minute
	// DefaultWatchTimeout is the long-poll timeout of one watch request.
	DefaultWatchTimeout = 30 * time.Second
	// DefaultWatchCoalesce is the pause after a watch answer that carried
	// changes before the next watch request, so that a rack's changes
	// meanwhile (mostly the agent's own status writes coming back) arrive
	// in one answer, each host once, instead of one answer per Raft apply.
	DefaultWatchCoalesce = 25 * time.Millisecond
	// DefaultMaxProcs is rackfence-agent's GOMAXPROCS (--max-procs). The
	// agent waits on BMCs and the coordinator nearly all the time: one
	// thread running Go code spares the scheduler's cross-thread wake-ups,
	// 18 % of the agents' CPU from registration to available at 10,000
	// hosts (3.66 against 4.46 ms per host), and one core holds a
	// 1,000-host rack's registration several times over.
	DefaultMaxProcs = 1
)

// Config configures an Agent. Client, Rack, Holder, Guard and Provisioner
// are required.
type Config struct {
	// Client talks to the coordinator: a *client.Client (several member
	// URLs, failover) in production. It must return shared/client's
	// errors (see Coordinator).
	Client Coordinator
	// Rack is the rack this agent manages.
	Rack string
	// AgentID is the lease holder ID (default: hostname + pid, set by
	// the caller).
	AgentID string
	// Workers is the number of concurrent host reconciles (DefaultWorkers
	// when zero).
	Workers int
	// LeaseTTL is the rack lease TTL asked for (DefaultLeaseTTL when zero).
	LeaseTTL time.Duration
	// StatusRefresh is how often an unchanged status is written again
	// (DefaultStatusRefresh when zero).
	StatusRefresh time.Duration
	// HealthInterval is how often a registered Redfish host's hardware
	// health is read from its BMC (DefaultHealthInterval when zero).
	HealthInterval time.Duration
	// StatusPerHost writes every status with its own request (PUT
	// /v1/hosts/{name}/status), never per rack (reporter.go).
	StatusPerHost bool
	// ShutdownGrace bounds the wait for in-flight calls on shutdown
	// (DefaultShutdownGrace when zero).
	ShutdownGrace time.Duration
	// ActionTimeout bounds one provisioner call (DefaultActionTimeout when
	// zero).
	ActionTimeout time.Duration
	// StatusWriters bounds the status writes in flight at once
	// (DefaultStatusWriters when zero), so that with CoordinatorTransport's
	// connection bound the watch and the lease renewals never wait behind
	// status writes. Workers beyond it wait for a slot.
	StatusWriters int
	// WatchTimeout is the long-poll timeout of one watch request
	// (DefaultWatchTimeout when zero).
	WatchTimeout time.Duration
	// WatchCoalesce is the pause after a watch answer carrying changes
	// (DefaultWatchCoalesce when zero, none when negative): it bounds what
	// it adds to the agent's reaction to a change.
	WatchCoalesce time.Duration
	// Holder keeps the rack lease; the Guard and the Provisioner must
	// check the same Holder.
	Holder *fence.Holder
	// Guard is the mutation guard every mutating call goes through; the
	// agent blocks and unblocks hosts on it.
	Guard *guard.Guard
	// BMCAccounts, when set, hands every host's BMC calls the tier's own
	// account, rotated when the lease moves (agent/bmcaccount); nil: the
	// operator's credentials, as the host names them.
	BMCAccounts *bmcaccount.Manager
	// Provisioner drives the hosts (direct or ironic).
	Provisioner provisioner.Provisioner
	// StateMachine holds the host state machine's tunables (zero value =
	// its defaults).
	StateMachine hoststate.Config
	// Metrics receives the agent's metrics; nil creates an unregistered set.
	Metrics *Metrics
	// Logger receives structured logs; nil discards them.
	Logger *slog.Logger
	// EventsURL is the https:// base URL at which BMCs reach the agent's
	// event listener (EventsHandler under /events/); "" subscribes no BMC.
	EventsURL string
	// EventsSilence: a subscription with no event for that long falls
	// back to polling (DefaultEventsSilence when zero).
	EventsSilence time.Duration
	// PowerPoll is how often a registered host's power is read from its
	// BMC; zero: StatusRefresh when EventsURL is set, no poll otherwise.
	PowerPoll time.Duration
	// EventsSlowdown divides the power poll's pace while a host's events
	// are live (DefaultEventsSlowdown when zero).
	EventsSlowdown int
	// OnRunning is called once when the agent runs (holding the lease or
	// standing by), e.g. to send sd_notify READY=1. May be nil.
	OnRunning func()
}

func (c *Config) setDefaults() error {
	switch {
	case c.Client == nil:
		return fmt.Errorf("agent config: Client is required (the coordinator API client)")
	case c.Rack == "":
		return fmt.Errorf("agent config: Rack is required (--rack)")
	case c.Holder == nil:
		return fmt.Errorf("agent config: Holder is required (the lease holder shared with the guard)")
	case c.Guard == nil:
		return fmt.Errorf("agent config: Guard is required (guard.NewGuard over Holder)")
	case c.Provisioner == nil:
		return fmt.Errorf("agent config: Provisioner is required (--provisioner direct|ironic)")
	case c.AgentID == "":
		return fmt.Errorf("agent config: AgentID is required (--agent-id)")
	}
	if c.Workers <= 0 {
		c.Workers = DefaultWorkers
	}
	if c.LeaseTTL <= 0 {
		c.LeaseTTL = DefaultLeaseTTL
	}
	if c.StatusRefresh <= 0 {
		c.StatusRefresh = DefaultStatusRefresh
	}
	if c.HealthInterval <= 0 {
		c.HealthInterval = DefaultHealthInterval
	}
	if c.ShutdownGrace <= 0 {
		c.ShutdownGrace = DefaultShutdownGrace
	}
	if c.ActionTimeout <= 0 {
		c.ActionTimeout = DefaultActionTimeout
	}
	if c.StatusWriters <= 0 {
		c.StatusWriters = DefaultStatusWriters
	}
	if c.WatchCoalesce == 0 {
		c.WatchCoalesce = DefaultWatchCoalesce
	}
	if c.WatchTimeout <= 0 {
		c.WatchTimeout = DefaultWatchTimeout
	}
	if c.Metrics == nil {
		c.Metrics = NewMetrics()
	}
	if c.EventsSilence <= 0 {
		c.EventsSilence = DefaultEventsSilence
	}
	if c.EventsSlowdown <= 0 {
		c.EventsSlowdown = DefaultEventsSlowdown
	}
	if c.PowerPoll <= 0 && c.EventsURL != "" {
		c.PowerPoll = c.StatusRefresh
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}
