package api

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
)

// A write whose forwarding failed after it was sent may still be applied,
// so the follower must not answer 503 (which clients repeat elsewhere).
func TestMayHaveReachedLeader(t *testing.T) {
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	read := &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset")}
	cases := []struct {
		method    string
		connected bool
		err       error
		want      bool
	}{
		{http.MethodPut, true, context.DeadlineExceeded, true},
		{http.MethodPut, true, read, true},
		{http.MethodPost, true, context.Canceled, true},
		{http.MethodDelete, true, read, true},
		{http.MethodPut, true, dial, false},
		{http.MethodGet, true, context.DeadlineExceeded, false},
		{http.MethodGet, true, read, false},
		// No connection was handed over (dialing, TLS handshake): nothing
		// was written, whatever ended the wait.
		{http.MethodPut, false, context.Canceled, false},
		{http.MethodPost, false, errors.New("net/http: TLS handshake timeout"), false},
	}
	for _, c := range cases {
		if got := mayHaveReachedLeader(c.method, c.connected, c.err); got != c.want {
			t.Errorf("mayHaveReachedLeader(%s, connected %v, %v) = %v, want %v", c.method, c.connected, c.err, got, c.want)
		}
	}
}
