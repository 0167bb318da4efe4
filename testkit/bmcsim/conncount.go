package bmcsim

import (
	"crypto/tls"
	"net"
)

// countingListener counts the TCP connections one BMC accepts
// (State.Connections).
type countingListener struct {
	net.Listener
	b *bmc
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.b.mu.Lock()
		l.b.conns++
		l.b.mu.Unlock()
	}
	return c, err
}

// countHandshakes returns a copy of tc that counts b's completed TLS
// handshakes, full and resumed (State.TLSHandshakes, State.TLSResumed).
func countHandshakes(tc *tls.Config, b *bmc) *tls.Config {
	c := tc.Clone()
	c.VerifyConnection = func(cs tls.ConnectionState) error {
		b.mu.Lock()
		if cs.DidResume {
			b.tlsResume++
		} else {
			b.tlsFull++
		}
		b.mu.Unlock()
		return nil
	}
	return c
}
