package api

import "context"

// Write lanes are taken by connection, not by watcher: the watchers of one
// connection (a dashboard's or a tool's HTTP/2 connection carrying many
// streams) write their answers together in one lane, so the connection's
// frames queue together and go out in a few TLS writes instead of one
// write, one flush and one system call per watcher. At most writeLanes
// connections write at once; the other watchers wait parked, so one change
// does not make thousands of handlers runnable ahead of the member's other
// work (a write's network read, its Raft apply, its log fsync).

// connLane is the lane of one connection: open once it took one of the
// hub's lane tokens, given back when its last writer leaves it.
type connLane struct {
	users  int           // watchers writing in it or waiting for it; guarded by watchHub.laneMu
	opened chan struct{} // closed when the lane holds a token
}

// enterLane enters the lane of conn (the watcher's connection), opening
// it when none is open: the first watcher of a connection waits for a
// token (each lane is left within laneHold of its writes starting, so
// that wait is bounded), the others of the same connection wait for it to
// open.
func (h *watchHub) enterLane(ctx context.Context, conn string) (*connLane, error) {
	h.laneMu.Lock()
	l := h.conns[conn]
	opener := l == nil
	if opener {
		l = &connLane{opened: make(chan struct{})}
		h.conns[conn] = l
	}
	l.users++
	h.laneMu.Unlock()
	if opener {
		h.lanes <- struct{}{}
		close(l.opened)
		return l, nil
	}
	select {
	case <-l.opened:
		return l, nil
	case <-ctx.Done():
		h.exitLane(conn, l)
		return nil, ctx.Err()
	}
}

// exitLane leaves l; its last writer gives the token back.
func (h *watchHub) exitLane(conn string, l *connLane) {
	h.laneMu.Lock()
	l.users--
	last := l.users == 0
	if last {
		delete(h.conns, conn)
	}
	h.laneMu.Unlock()
	if last {
		<-h.lanes
	}
}
