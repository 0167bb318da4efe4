package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rackfence/rackfence/testkit/bench"
)

// runWatchers runs one watchers measurement per count of --watchers, each
// with its own coordinator, and prints one line each. A run where a
// watcher missed a change fails the program.
func runWatchers(ctx context.Context, c *Config, emit func(map[string]any, string)) {
	bin := c.binDir
	if bin == "" {
		exe, err := os.Executable()
		if err != nil {
			fail(fmt.Errorf("--bin: %w", err))
		}
		bin = filepath.Dir(exe)
	}
	if c.watchMode != "stream" && c.watchMode != "poll" {
		fail(fmt.Errorf("--watch-mode: %q is not stream or poll", c.watchMode))
	}
	for _, part := range strings.Split(c.watchers, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 0 {
			fail(fmt.Errorf("--watchers: %q is not a count (0 or more)", part))
		}
		dir := c.workDir
		if dir == "" {
			if dir, err = os.MkdirTemp("", "rackfence-watchers."); err != nil {
				fail(err)
			}
		} else {
			dir = filepath.Join(dir, fmt.Sprintf("watchers-%d", n))
			if err := os.MkdirAll(dir, 0o700); err != nil {
				fail(fmt.Errorf("--dir: %w", err))
			}
		}
		start := time.Now()
		r, err := bench.Watchers(ctx, bench.WatchersConfig{Bin: bin, Dir: dir, Watchers: n, Writes: c.writes, Hosts: c.hosts,
			After: c.after, CoordArgs: c.coordArgs, Stream: c.watchMode == "stream", DialFirst: c.dialFirst, CrowdNice: c.crowdNice, WriterBin: filepath.Join(bin, "rackfence-load"),
			Progress: func(s string) { fmt.Fprintf(os.Stderr, "watchers %5.0fs %s\n", time.Since(start).Seconds(), s) }})
		if err != nil {
			fmt.Fprintf(os.Stderr, "watchers: process logs in %s\n", dir)
			fail(err)
		}
		if c.workDir == "" {
			os.RemoveAll(dir)
		}
		emit(map[string]any{"mode": c.watchMode, "dialFirst": c.dialFirst, "watchers": r.Watchers, "writes": r.Writes, "p50ms": ms(r.P50), "p99ms": ms(r.P99), "maxms": ms(r.Max),
			"coordCPUSeconds": r.CPU, "crowdCPUSeconds": r.CrowdCPU, "crowdNice": r.CrowdNice, "gcInWrites": r.GCWrites, "gcPauseMs": ms(r.GCPause), "faultsInWrites": r.FaultsWrites, "sysInWritesSeconds": r.SysWrites,
			"lateP50ms": ms(r.LateP50), "lateP99ms": ms(r.LateP99), "lateMaxms": ms(r.LateMax), "rssStartKiB": r.RSSStart, "rssWatchingKiB": r.RSSWatching, "rssHalfAfterKiB": r.RSSHalfAfter,
			"rssAfterKiB": r.RSSAfter, "answersEncoded": r.Encoded, "answersSent": r.Sent, "missed": r.Missed, "watchErrors": r.Errors, "watchErrorCauses": r.ErrorCauses,
			"memStart": r.MemStart.Map(), "memWatching": r.MemWatching.Map(), "memAfter": r.MemAfter.Map()}, bench.WriteWatchersText(r))
		if r.Missed > 0 {
			fail(fmt.Errorf("%d watchers: %d (watcher, change) pairs never seen: a watcher missed a change", n, r.Missed))
		}
	}
}
