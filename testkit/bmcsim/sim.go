package bmcsim

import (
	"context"
	"crypto/tls"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/rackfence/rackfence/internal/jsonl"
)

// Sim is a running simulator.
type Sim struct {
	cfg   Config
	prof  *profile
	base  int
	bmcs  []*bmc
	lns   []net.Listener
	srv   *http.Server
	audit *jsonl.Writer // the audit file (mode 0600, no rotation); nil when off
	done  chan struct{}
	wg    sync.WaitGroup
	once  sync.Once
	// lnMu guards lns and closed: a BMC rebooting itself closes its
	// listener and opens a new one (reboot.go).
	lnMu   sync.Mutex
	closed bool
	tlsCfg *tls.Config
}

// Start binds Hosts consecutive ports and serves until Close.
func Start(cfg Config) (*Sim, error) {
	cfg = cfg.withDefaults()
	switch {
	case cfg.Hosts < 1 || cfg.Hosts > MaxHosts:
		return nil, fmt.Errorf("%w: Hosts is %d; use 1 to %d", ErrConfig, cfg.Hosts, MaxHosts)
	case cfg.BasePort < 0 || cfg.BasePort+cfg.Hosts-1 > 65535:
		return nil, fmt.Errorf("%w: BasePort %d with %d hosts runs past port 65535", ErrConfig, cfg.BasePort, cfg.Hosts)
	case cfg.Latency < 0 || cfg.Jitter < 0:
		return nil, fmt.Errorf("%w: Latency and Jitter must not be negative", ErrConfig)
	}
	if err := cfg.Knobs.validate(); err != nil {
		return nil, fmt.Errorf("%w: Knobs: %v", ErrConfig, err)
	}
	prof, err := loadProfile(cfg.Profile)
	if err != nil {
		return nil, err
	}
	prefix, err := parsePrefix(cfg.MACPrefix)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	s := &Sim{cfg: cfg, prof: prof, done: make(chan struct{})}
	if cfg.BasePort == 0 {
		for try := 0; try < 50; try++ {
			base := 20000 + rand.N(40000-cfg.Hosts)
			if s.lns, err = listenRange(cfg.Host, base, cfg.Hosts); err == nil {
				s.base = base
				break
			}
		}
	} else {
		s.base = cfg.BasePort
		s.lns, err = listenRange(cfg.Host, cfg.BasePort, cfg.Hosts)
	}
	if err != nil {
		return nil, err
	}
	if cfg.AuditPath != "" {
		if s.audit, err = jsonl.Open(cfg.AuditPath, jsonl.Options{}); err != nil {
			closeAll(s.lns)
			return nil, fmt.Errorf("%w: audit file %s: %v", ErrConfig, cfg.AuditPath, err)
		}
	}
	s.bmcs = make([]*bmc, cfg.Hosts)
	for i := range s.bmcs {
		s.bmcs[i] = newBMC(i, s.base+i, prof, prefix, cfg.PowerOn)
		s.bmcs[i].knobs = cfg.Knobs.withDefaults()
		s.bmcs[i].sim = s
	}
	if cfg.TLS {
		cert, err := selfSigned(cfg.Host)
		if err != nil {
			closeAll(s.lns)
			return nil, fmt.Errorf("bmcsim: TLS certificate: %w", err)
		}
		s.tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	for i, l := range s.lns {
		s.lns[i] = s.wrap(i, l)
	}
	s.srv = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       90 * time.Second,
		ErrorLog:          nil,
	}
	for _, l := range s.lns {
		s.serve(l)
	}
	return s, nil
}

func listenRange(host string, base, n int) ([]net.Listener, error) {
	lns := make([]net.Listener, 0, n)
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(base+i)))
		if err != nil {
			closeAll(lns)
			return nil, fmt.Errorf("%w: %s:%d..%d: %v; pick another --base-port", ErrNoPorts, host, base, base+n-1, err)
		}
		lns = append(lns, l)
	}
	return lns, nil
}

func closeAll(lns []net.Listener) {
	for _, l := range lns {
		_ = l.Close()
	}
}

// Close stops every BMC (hanging requests end) and closes the audit file.
func (s *Sim) Close() error {
	var err error
	s.once.Do(func() {
		s.lnMu.Lock()
		s.closed = true
		s.lnMu.Unlock()
		close(s.done)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if e := s.srv.Shutdown(ctx); e != nil {
			_ = s.srv.Close()
		}
		s.wg.Wait()
		if s.audit != nil {
			err = s.audit.Close()
		}
	})
	return err
}

// Hosts is the number of BMCs.
func (s *Sim) Hosts() int { return len(s.bmcs) }

// BasePort is BMC 0's port.
func (s *Sim) BasePort() int { return s.base }

// Port is BMC i's port.
func (s *Sim) Port(i int) int { return s.base + i }

// URL is BMC i's base URL (http:// or https://), e.g. for /sim/state.
func (s *Sim) URL(i int) string {
	scheme := "http"
	if s.cfg.TLS {
		scheme = "https"
	}
	return fmt.Sprintf("%s://%s", scheme, net.JoinHostPort(s.cfg.Host, strconv.Itoa(s.base+i)))
}

// Profile is the name of the profile every BMC serves.
func (s *Sim) Profile() string { return s.prof.name }

// Address is BMC i's BMC address as a host gives it (redfish+http:// or, with
// TLS, redfish://) pointing at its first system.
func (s *Sim) Address(i int) string {
	return s.SystemAddresses(i)[0]
}

// SystemAddresses are BMC i's host BMC addresses (bmc.address), one per system in the
// profile's order (four with the blade profile).
func (s *Sim) SystemAddresses(i int) []string {
	scheme := "redfish+http"
	if s.cfg.TLS {
		scheme = "redfish"
	}
	hp := net.JoinHostPort(s.cfg.Host, strconv.Itoa(s.base+i))
	out := make([]string, 0, len(s.prof.systems))
	for _, r := range s.prof.systems {
		out = append(out, scheme+"://"+hp+r.path)
	}
	return out
}

// MAC is host i's boot MAC (its first system's): MACPrefix:HH:LL with
// HHLL = i.
func (s *Sim) MAC(i int) string { return s.SystemMAC(i, 0) }

// SystemMAC is the boot MAC of BMC i's system j ("" for a bad index).
func (s *Sim) SystemMAC(i, j int) string {
	if b := s.bmcAt(i); b != nil {
		return b.systemMAC(j)
	}
	return ""
}

// State returns BMC i's state (the zero State for a bad index).
func (s *Sim) State(i int) State {
	if b := s.bmcAt(i); b != nil {
		return b.state()
	}
	return State{}
}

// SetFault sets BMC i's fault mode (none, http500, hang, refuse-auth).
func (s *Sim) SetFault(i int, mode string) error {
	if !validFault(mode) {
		return fmt.Errorf("%w: %q; use none, http500, hang or refuse-auth", ErrFaultMode, mode)
	}
	b := s.bmcAt(i)
	if b == nil {
		return fmt.Errorf("%w: %d (have %d)", ErrIndex, i, len(s.bmcs))
	}
	b.setFault(mode)
	return nil
}

// SetPower sets host i's power directly (as if someone pressed the button),
// without an audit line: every system of BMC i.
func (s *Sim) SetPower(i int, on bool) error {
	b := s.bmcAt(i)
	if b == nil {
		return fmt.Errorf("%w: %d (have %d)", ErrIndex, i, len(s.bmcs))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for j := range b.sys {
		if on && !b.sys[j].power {
			b.powerOn(j)
		} else if !on && b.sys[j].power {
			b.powerOff(j)
		}
	}
	return nil
}

func (s *Sim) bmcAt(i int) *bmc {
	if i < 0 || i >= len(s.bmcs) {
		return nil
	}
	return s.bmcs[i]
}
