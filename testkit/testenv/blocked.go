package testenv

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// WaitBlocked waits until some goroutine of this test process is parked
// (in a select, a channel operation or network I/O) with a frame of the
// function frame (or of a closure in it), e.g. "fsm.(*FSM).Watch": the
// positive marker that a long poll or a hung call has started waiting,
// instead of a fixed sleep that hopes it did. It fails after timeout.
func WaitBlocked(t testing.TB, timeout time.Duration, frame string) {
	t.Helper()
	Eventually(t, timeout, "a goroutine parked in "+frame, func() error {
		if blockedIn(frame) {
			return nil
		}
		return fmt.Errorf("no parked goroutine has %s on its stack", frame)
	})
}

// parked are the goroutine states of a goroutine waiting for an event.
var parked = []string{"[select", "[chan receive", "[chan send", "[IO wait", "[sync.Cond.Wait", "[semacquire"}

func blockedIn(frame string) bool {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	for _, g := range strings.Split(string(buf), "\n\n") {
		header, _, _ := strings.Cut(g, "\n")
		waiting := false
		for _, p := range parked {
			waiting = waiting || strings.Contains(header, p)
		}
		if waiting && hasFrame(g, frame) {
			return true
		}
	}
	return false
}

// hasFrame reports whether the goroutine dump g has a call frame of the
// function frame or of a closure in it ("frame(" or "frame.func"), so
// "(*FSM).Watch" does not match "(*FSM).WatchFleet" nor a "created by"
// line.
func hasFrame(g, frame string) bool {
	for _, line := range strings.Split(g, "\n") {
		if strings.HasPrefix(line, "created by ") {
			continue
		}
		if strings.Contains(line, frame+"(") || strings.Contains(line, frame+".func") {
			return true
		}
	}
	return false
}
