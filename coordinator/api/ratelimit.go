package api

import (
	"context"
	"github.com/rackfence/rackfence/internal/pki"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rackfence/rackfence/shared/wire"
)

// Failed authentications are limited per client address, on the member
// that received the client's connection:
//
//   - Every member counts the 401s it answers a client, including those
//     the leader answered to a request this member forwarded (the relayed
//     status is seen here), and after AuthFailLimit of them within
//     AuthFailWindow answers 429 with Retry-After to that address, for
//     every request, until the window ends.
//   - A follower forwards with ClientAddrHeader naming the client. The
//     leader believes that header, and skips its own limit, only when the
//     connection comes from a member (fromMember); otherwise the header is
//     ignored and the connection's address is what counts. So one client
//     spraying bad tokens at a follower never gets the follower's address
//     limited at the leader for everyone behind it, and a client cannot
//     escape the limit by sending the header itself.

// ClientAddrHeader carries, on a request a member
// forwards, the address of the client that sent it.
const ClientAddrHeader = "X-Rackfence-Client-Addr"

// maxTracked bounds how many client addresses the limiter remembers; when
// full (after dropping finished windows) new addresses are not tracked.
const maxTracked = 100_000

type failWindow struct {
	start time.Time
	n     int
}

type authLimiter struct {
	mu     sync.Mutex
	limit  int
	window time.Duration
	m      map[string]*failWindow
}

func newAuthLimiter(limit int, window time.Duration) *authLimiter {
	return &authLimiter{limit: limit, window: window, m: map[string]*failWindow{}}
}

// blocked says how long addr must still wait (ok false: not blocked).
func (l *authLimiter) blocked(addr string, now time.Time) (time.Duration, bool) {
	if l.limit <= 0 {
		return 0, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.m[addr]
	if w == nil || w.n < l.limit {
		return 0, false
	}
	end := w.start.Add(l.window)
	if !now.Before(end) {
		delete(l.m, addr)
		return 0, false
	}
	return end.Sub(now), true
}

// fail counts one failed authentication from addr.
func (l *authLimiter) fail(addr string, now time.Time) {
	if l.limit <= 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.m[addr]
	if w != nil && !now.Before(w.start.Add(l.window)) {
		w = nil
	}
	if w == nil {
		if len(l.m) >= maxTracked {
			for a, o := range l.m {
				if !now.Before(o.start.Add(l.window)) {
					delete(l.m, a)
				}
			}
			if len(l.m) >= maxTracked {
				return
			}
		}
		w = &failWindow{start: now}
		l.m[addr] = w
	}
	w.n++
}

// limitAuth answers 429 to an address over the limit and counts the 401s
// answered to it. It runs before authentication and forwarding.
func (s *Server) limitAuth(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		addr, viaMember := s.clientAddr(c.Request())
		if viaMember {
			return next(c) // the forwarding member limits its clients
		}
		now := time.Now()
		if wait, ok := s.limiter.blocked(addr, now); ok {
			s.rateLimited.Inc()
			secs := int((wait + time.Second - 1) / time.Second)
			c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
			return errf(http.StatusTooManyRequests, wire.CodeTooManyRequests,
				"too many failed authentications from %s (%d within %s); wait %ds, then retry with a valid token (--token-file; the first admin token is DATA-DIR/admin.token, others come from 'rackfencectl token create')",
				addr, s.limiter.limit, s.limiter.window, secs)
		}
		if err := next(c); err != nil {
			c.Error(err)
		}
		if c.Response().Status == http.StatusUnauthorized {
			s.limiter.fail(addr, now)
		}
		return nil
	}
}

// clientAddr is the IP of the client a request comes from, and whether a
// member forwarded it (then the IP is the one the member saw).
func (s *Server) clientAddr(r *http.Request) (string, bool) {
	host := remoteIP(r)
	if r.Header.Get(ForwardedHeader) != "" && s.fromMember(r) {
		if a := r.Header.Get(ClientAddrHeader); a != "" {
			return a, true
		}
		return host, true
	}
	return host, false
}

func remoteIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// fromMember reports whether the connection comes from another member of
// this cluster: its IP is one of the members' Raft or HTTP addresses
// (members dial the leader from their advertised IP, see memberDialer).
// With TLS on, it must also present a member certificate of this
// cluster: an IP alone could be spoofed on a shared network.
func (s *Server) fromMember(r *http.Request) bool {
	if s.cfg.TLS != nil {
		return connIdentity(r).Kind == pki.KindMember
	}
	ip := net.ParseIP(remoteIP(r))
	if ip == nil {
		return false
	}
	for _, m := range s.memberIPs() {
		if m.Equal(ip) {
			return true
		}
	}
	return false
}

// memberIPs are the literal IPs in the members' addresses, refreshed at
// most every 5 s.
func (s *Server) memberIPs() []net.IP {
	s.membersMu.Lock()
	defer s.membersMu.Unlock()
	if time.Since(s.membersAt) < 5*time.Second && s.membersIPs != nil {
		return s.membersIPs
	}
	ms, err := s.store.Members()
	if err != nil {
		return s.membersIPs
	}
	var ips []net.IP
	for _, m := range ms {
		if ip := addrIP(m.RaftAddr); ip != nil {
			ips = append(ips, ip)
		}
		if ip := urlIP(m.HTTPAddr); ip != nil {
			ips = append(ips, ip)
		}
	}
	s.membersIPs, s.membersAt = ips, time.Now()
	return ips
}

func addrIP(hostport string) net.IP {
	h, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return nil
	}
	return net.ParseIP(h)
}

func urlIP(u string) net.IP {
	p, err := url.Parse(u)
	if err != nil {
		return nil
	}
	return net.ParseIP(p.Hostname())
}

// memberDialer dials the leader from this member's advertised IP when it
// is a local, literal one, so the leader recognises the connection as a
// member's (on one host's loopback, 127.0.0.2 would otherwise reach
// 127.0.0.1 from 127.0.0.1). If that bind fails it dials unbound.
type memberDialer struct {
	local net.IP
	d     net.Dialer
}

func newMemberDialer(advertise string, timeout time.Duration) *memberDialer {
	md := &memberDialer{d: net.Dialer{Timeout: timeout, KeepAlive: DefaultForwardKeepAlive}}
	if ip := urlIP(advertise); ip != nil && !ip.IsUnspecified() {
		md.local = ip
	}
	return md
}

func (m *memberDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if m.local != nil {
		d := m.d
		d.LocalAddr = &net.TCPAddr{IP: m.local}
		if conn, err := d.DialContext(ctx, network, addr); err == nil {
			return conn, nil
		}
	}
	return m.d.DialContext(ctx, network, addr)
}
