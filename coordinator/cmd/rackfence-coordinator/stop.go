package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/rackfence/rackfence/coordinator"
	"github.com/rackfence/rackfence/internal/daemon"
)

// stopMember is the answer to SIGTERM, all of it within timeout
// (--stop-timeout):
//
//  1. refuse new writes and, when leading, hand leadership to the most
//     up-to-date other voter (at most a quarter of timeout), so the tier
//     has a leader again before this member goes quiet;
//  2. let in-flight API requests finish (at most a quarter of timeout),
//     then close the connections left (long-poll watches);
//  3. shut Raft down and close the stores with what is left of timeout.
//
// When Raft is still stuck at the deadline (replication blocked on a
// follower that stopped reading, say) it logs what Raft waits for and
// returns exit code 1 without closing the stores: the process ending stops
// this member's heartbeats so the others elect a leader, and the Raft log
// and stable store were fsynced at every write and recover as from a
// crash.
func stopMember(store *coordinator.Store, hs *http.Server, timeout time.Duration, log *slog.Logger) error {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	wasLeader := store.IsLeader()
	tctx, tcancel := context.WithTimeout(ctx, timeout/4)
	to, err := store.HandOver(tctx)
	tcancel()
	switch {
	case err != nil:
		log.Warn("leadership not handed over; the other members elect a leader once this one stops", "err", err.Error(), "took", time.Since(start).String())
	case wasLeader:
		log.Info("leadership handed over", "to", to, "took", time.Since(start).String())
	}

	hctx, hcancel := context.WithTimeout(ctx, timeout/4)
	if err := hs.Shutdown(hctx); err != nil {
		_ = hs.Close()
	}
	hcancel()

	if err := store.Shutdown(ctx); err != nil {
		var stuck *coordinator.StuckError
		if !errors.As(err, &stuck) {
			return err
		}
		log.Error("raft did not shut down within --stop-timeout: exiting without closing the Raft stores (every Raft write was fsynced; bolt and raft-wal recover at the next start as after a crash)",
			"stopTimeout", timeout.String(), "took", time.Since(start).String(), "raftWaitsFor", stuck.Waiting)
		return daemon.Exit(daemon.ExitFailed, nil)
	}
	log.Info("stopped", "took", time.Since(start).String())
	return nil
}
