package chaos

import (
	"crypto/sha256"
	"fmt"
	"testing"
	"time"
)

// classicSchedules is the SHA-256 of the classic schedules of seeds 1–50
// (5 minutes, racks r1 and r2) as the harness drew them before the storage
// faults were added: a regression seed must keep replaying the schedule it
// was found with.
const classicSchedules = "7df1be3123c4b27da7a7380fef2b4a8fde9108bf4d8afbcedd83d1ddbf64be21"

func TestClassicSchedulesUnchanged(t *testing.T) {
	h := sha256.New()
	for s := int64(1); s <= 50; s++ {
		fmt.Fprintln(h, Schedule(s, 5*time.Minute, []string{"r1", "r2"}))
	}
	if got := fmt.Sprintf("%x", h.Sum(nil)); got != classicSchedules {
		t.Fatalf("the classic schedules changed (sum %s): earlier seeds no longer replay what they found", got)
	}
}

func TestStorageSchedule(t *testing.T) {
	kinds, err := KindsOf(FaultsStorage)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range ScheduleKinds(1, 60*time.Second, []string{"r1", "r2"}, kinds) {
		seen[f.Kind] = true
		seen[f.Damage] = true
		if f.Kind == FaultDamagedRestart && f.Damage == "" {
			t.Errorf("%s without a damage", f)
		}
	}
	// Seed 1 is the CI storage seed (chaos_test.go): it must draw every
	// storage fault and both damages.
	for _, k := range append(kinds, DamageTruncateLog, DamageDeleteSnapshots) {
		if !seen[k] {
			t.Errorf("seed 1 draws no %s", k)
		}
	}
	if _, err := KindsOf("disk"); err == nil {
		t.Error("an unknown fault set was accepted")
	}
}

func TestProtocolError(t *testing.T) {
	for s, want := range map[string]bool{
		`http2: server sent GOAWAY and closed the connection; LastStreamID=1, ErrCode=COMPRESSION_ERROR, debug=""`: true,
		"dial tcp 10.0.0.1:7480: connect: connection refused":                                                      false,
		"context deadline exceeded (Client.Timeout exceeded while awaiting headers)":                               false,
	} {
		if got := protocolError(fmt.Errorf("%s", s)); got != want {
			t.Errorf("protocolError(%q) = %v, want %v", s, got, want)
		}
	}
}
