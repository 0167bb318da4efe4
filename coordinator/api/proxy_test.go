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
		method string
		err    error
		want   bool
	}{
		{http.MethodPut, context.DeadlineExceeded, true},
		{http.MethodPut, read, true},
		{http.MethodPost, context.Canceled, true},
		{http.MethodDelete, read, true},
		{http.MethodPut, dial, false},
		{http.MethodGet, context.DeadlineExceeded, false},
		{http.MethodGet, read, false},
	}
	for _, c := range cases {
		if got := mayHaveReachedLeader(c.method, c.err); got != c.want {
			t.Errorf("mayHaveReachedLeader(%s, %v) = %v, want %v", c.method, c.err, got, c.want)
		}
	}
}
