package bmcsim

import (
	"crypto/tls"
	"net"
	"net/http"
	"strconv"
	"time"
)

// A BMC rebooting itself (Knobs.RebootMinutes, halfway through an update):
// its listener is closed, so new connections are refused; a request on a
// connection opened before is answered by closing that connection; every
// session ends. After the reboot a new listener takes the same port.

// wrap adds BMC i's connection counting (and TLS) to a raw listener.
func (s *Sim) wrap(i int, l net.Listener) net.Listener {
	l = countingListener{Listener: l, b: s.bmcs[i]}
	if s.tlsCfg != nil {
		l = tls.NewListener(l, countHandshakes(s.tlsCfg, s.bmcs[i]))
	}
	return l
}

// serve runs the shared server on l until l closes.
func (s *Sim) serve(l net.Listener) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		_ = s.srv.Serve(l)
	}()
}

// rebootBMC takes b off the network for d, if update t still runs.
func (s *Sim) rebootBMC(b *bmc, t *task, d time.Duration) {
	s.lnMu.Lock()
	defer s.lnMu.Unlock()
	b.mu.Lock()
	b.advance(time.Now())
	if s.closed || b.rebooting || !t.running() {
		b.mu.Unlock()
		return
	}
	b.rebooting = true
	b.selfReboots++
	b.sessions = nil
	b.forgetSubscriptions()
	b.mu.Unlock()
	_ = s.lns[b.index].Close()
	time.AfterFunc(d, func() { s.rebooted(b) })
}

// rebooted puts b back on its port (retrying while the port is not free).
func (s *Sim) rebooted(b *bmc) {
	s.lnMu.Lock()
	defer s.lnMu.Unlock()
	if s.closed {
		return
	}
	l, err := net.Listen("tcp", net.JoinHostPort(s.cfg.Host, strconv.Itoa(b.port)))
	if err != nil {
		time.AfterFunc(50*time.Millisecond, func() { s.rebooted(b) })
		return
	}
	s.lns[b.index] = s.wrap(b.index, l)
	b.mu.Lock()
	b.rebooting = false
	b.mu.Unlock()
	s.serve(s.lns[b.index])
}

// dropIfRebooting closes the connection of a request that reached a
// rebooting BMC on a connection opened before; true when it did.
func dropIfRebooting(w http.ResponseWriter, b *bmc) bool {
	b.mu.Lock()
	down := b.rebooting
	b.mu.Unlock()
	if !down {
		return false
	}
	if hj, ok := w.(http.Hijacker); ok {
		if c, _, err := hj.Hijack(); err == nil {
			_ = c.Close()
			return true
		}
	}
	w.Header().Set("Connection", "close")
	writeError(w, http.StatusServiceUnavailable, "Base.1.0.ServiceTemporarilyUnavailable", "the BMC is rebooting")
	return true
}
