package testenv

import (
	"testing"
	"time"
)

//go:noinline
func parkHere(ch chan struct{}) { <-ch }

// WaitBlocked sees a goroutine parked in a named function, and does not
// see one that has not started yet.
func TestWaitBlocked(t *testing.T) {
	if blockedIn("testenv.parkHere") {
		t.Fatal("reported parked before the goroutine exists")
	}
	ch := make(chan struct{})
	go parkHere(ch)
	WaitBlocked(t, 10*time.Second, "testenv.parkHere")
	if blockedIn("testenv.park") {
		t.Error("a longer function name (parkHere) matched the frame testenv.park")
	}
	close(ch)
	Eventually(t, 10*time.Second, "the goroutine gone", func() error {
		if blockedIn("testenv.parkHere") {
			return errString("still parked")
		}
		return nil
	})
}

type errString string

func (e errString) Error() string { return string(e) }
