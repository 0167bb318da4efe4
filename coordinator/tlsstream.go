package coordinator

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// RaftTLS makes the Raft transport mutual TLS. Both configs must admit only
// members of this cluster (pki.MemberVerifier): a peer without a member
// certificate of the cluster's CA cannot complete a handshake, so it cannot
// speak Raft at all.
type RaftTLS struct {
	// Server is used for accepted connections; it must require and verify
	// client certificates.
	Server *tls.Config
	// Client is used to dial other members; it presents this member's
	// certificate.
	Client *tls.Config
}

// handshakeTimeout bounds a peer's TLS handshake on the Raft port.
const handshakeTimeout = 10 * time.Second

// tlsStream is a raft.StreamLayer over TLS.
type tlsStream struct {
	net.Listener
	advertise net.Addr
	cfg       *RaftTLS
	log       *slog.Logger
}

func newTLSStream(bind string, advertise net.Addr, cfg *RaftTLS, log *slog.Logger) (*tlsStream, error) {
	if cfg.Server == nil || cfg.Client == nil {
		return nil, errors.New("raft TLS needs both a server and a client config")
	}
	ln, err := net.Listen("tcp", bind)
	if err != nil {
		return nil, err
	}
	if advertise == nil {
		advertise = ln.Addr()
	}
	if ta, ok := advertise.(*net.TCPAddr); ok && ta.IP.IsUnspecified() {
		ln.Close()
		return nil, fmt.Errorf("raft address %s is not advertisable: bind a specific address", advertise)
	}
	return &tlsStream{Listener: ln, advertise: advertise, cfg: cfg, log: log}, nil
}

// Accept wraps each connection; the handshake runs on the connection's
// first read (in raft's per-connection goroutine), never in the accept
// loop, so a slow or silent peer holds up nobody.
func (s *tlsStream) Accept() (net.Conn, error) {
	c, err := s.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &handshakingConn{Conn: tls.Server(c, s.cfg.Server), log: s.log}, nil
}

// Addr is the advertised address.
func (s *tlsStream) Addr() net.Addr { return s.advertise }

// Dial connects to another member and completes the handshake before
// raft writes anything.
func (s *tlsStream) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	d := &net.Dialer{Timeout: timeout}
	c, err := tls.DialWithDialer(d, "tcp", string(addr), s.cfg.Client)
	if err != nil {
		return nil, fmt.Errorf("raft TLS to %s: %w", addr, err)
	}
	return c, nil
}

// handshakingConn completes the server handshake on first use, with a
// deadline, and logs a refused peer once in plain words (raft itself would
// only report a decode error).
type handshakingConn struct {
	*tls.Conn
	once sync.Once
	err  error
	log  *slog.Logger
}

func (c *handshakingConn) handshake() error {
	c.once.Do(func() {
		_ = c.Conn.SetDeadline(time.Now().Add(handshakeTimeout))
		c.err = c.Conn.Handshake()
		_ = c.Conn.SetDeadline(time.Time{})
		if c.err != nil && c.log != nil {
			c.log.Warn("raft: refused a connection that did not complete mutual TLS as a cluster member",
				"remote", c.RemoteAddr().String(), "err", c.err.Error())
		}
	})
	return c.err
}

func (c *handshakingConn) Read(b []byte) (int, error) {
	if err := c.handshake(); err != nil {
		return 0, err
	}
	return c.Conn.Read(b)
}

func (c *handshakingConn) Write(b []byte) (int, error) {
	if err := c.handshake(); err != nil {
		return 0, err
	}
	return c.Conn.Write(b)
}
