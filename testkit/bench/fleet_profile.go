package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// Profiles of a fleet run (FleetConfig.ProfileDir): while hosts register,
// ProfileAfter after registration starts, a CPU profile of ProfileFor is
// taken at once from the coordinator, every simulator and the first
// ProfileAgents agents, each through the --pprof-addr it was started
// with. Taken at the same moment, they show where the shared CPU went
// while the machine was busiest, each process beside the others.

// profileDefaults fills in the profile settings left at zero.
func (c *FleetConfig) profileDefaults() {
	if c.ProfileFor <= 0 {
		c.ProfileFor = 20 * time.Second
	}
	if c.ProfileAfter <= 0 {
		c.ProfileAfter = 5 * time.Second
	}
	if c.ProfileAgents <= 0 {
		c.ProfileAgents = 3
	}
}

// pprofArgs gives a process its own --pprof-addr when profiles are taken,
// and records the address under name; none otherwise.
func (f *fleet) pprofArgs(name string) ([]string, error) {
	if f.cfg.ProfileDir == "" {
		return nil, nil
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	f.pprofMu.Lock()
	if f.pprof == nil {
		f.pprof = map[string]string{}
	}
	f.pprof[name] = addr
	f.pprofMu.Unlock()
	return []string{"--pprof-addr", addr}, nil
}

// profiled says whether agent r is among those profiled.
func (f *fleet) profiled(r int) bool { return f.cfg.ProfileDir != "" && r < f.cfg.ProfileAgents }

// startProfiles takes the profiles in the background, from start +
// ProfileAfter; the returned wait blocks until every one is written (or
// failed: a failure is reported through Progress, never fails the run).
func (f *fleet) startProfiles(ctx context.Context, start time.Time) (wait func()) {
	if f.cfg.ProfileDir == "" {
		return func() {}
	}
	if err := os.MkdirAll(f.cfg.ProfileDir, 0o755); err != nil {
		f.say("profiles: %v", err)
		return func() {}
	}
	f.pprofMu.Lock()
	targets := make(map[string]string, len(f.pprof))
	for k, v := range f.pprof {
		targets[k] = v
	}
	f.pprofMu.Unlock()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-time.After(time.Until(start.Add(f.cfg.ProfileAfter))):
		case <-ctx.Done():
			return
		}
		f.say("profiles: %d processes for %s into %s", len(targets), f.cfg.ProfileFor, f.cfg.ProfileDir)
		var each sync.WaitGroup
		for name, addr := range targets {
			each.Add(1)
			go func() {
				defer each.Done()
				if err := f.profile(ctx, name, addr); err != nil {
					f.say("profiles: %s: %v", name, err)
				}
			}()
		}
		each.Wait()
	}()
	return wg.Wait
}

// profile writes name's CPU profile to ProfileDir/name.cpu.pprof.
func (f *fleet) profile(ctx context.Context, name, addr string) error {
	secs := int(f.cfg.ProfileFor.Round(time.Second) / time.Second)
	ctx, cancel := context.WithTimeout(ctx, f.cfg.ProfileFor+time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, max(1, secs)), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("%s answered %s: %s", addr, resp.Status, b)
	}
	out, err := os.Create(filepath.Join(f.cfg.ProfileDir, name+".cpu.pprof"))
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, resp.Body); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
