package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

// tls says whether the coordinator runs with its default mutual TLS.
func (f *fleet) tls() bool {
	for _, a := range f.cfg.CoordArgs {
		if a == "--insecure-plaintext" || a == "--insecure-plaintext=true" {
			return false
		}
	}
	return true
}

func (f *fleet) startCoordinator(ctx context.Context) error {
	var err error
	if f.port, err = freePort(); err != nil {
		return err
	}
	rp, err := freePort()
	if err != nil {
		return err
	}
	scheme := "https" // the secure default; --plaintext (or --coordinator-arg --insecure-plaintext) measures plain HTTP
	if !f.tls() {
		scheme = "http"
	}
	f.coordURL = fmt.Sprintf("%s://127.0.0.1:%d", scheme, f.port)
	data := filepath.Join(f.cfg.Dir, "coord")
	args := append([]string{"--node-id", "fleet1", "--data-dir", data, "--http-addr", fmt.Sprintf("127.0.0.1:%d", f.port),
		"--raft-addr", fmt.Sprintf("127.0.0.1:%d", rp), "--log-level", "warn"}, f.cfg.CoordArgs...)
	pp, err := f.pprofArgs("coordinator")
	if err != nil {
		return err
	}
	args = append(args, pp...)
	if f.coord, err = startProc(f.cfg.Dir, "coordinator", filepath.Join(f.cfg.Bin, "rackfence-coordinator"), args...); err != nil {
		return err
	}
	f.say("coordinator pid %d at %s", f.coord.pid(), f.coordURL)
	tokFile := filepath.Join(data, "admin.token")
	return f.until(ctx, 60*time.Second, "the coordinator accepting writes", func() error {
		if f.coord.exited() {
			return fmt.Errorf("coordinator exited:\n%s", f.coord.tail())
		}
		tok, err := client.ReadTokenFile(tokFile)
		if err != nil {
			return errRetry
		}
		f.token, f.hc = tok, NewHTTPClientFor(64, tok)
		if f.admin, err = client.New(client.Config{Coordinator: f.coordURL, Token: tok, HTTPClient: NewHTTPClient(64), Timeout: 30 * time.Second}); err != nil {
			return err
		}
		if err := f.admin.SetCredentials(ctx, "bmc", wire.Credentials{Username: "admin", Password: "password"}); err != nil {
			return errRetry
		}
		return nil
	})
}

func (f *fleet) rack(r int) string { return fmt.Sprintf("r%03d", r) }

func (f *fleet) startAgents(ctx context.Context) error {
	for r := 0; r < f.cfg.Racks; r++ {
		tr, err := f.admin.CreateToken(ctx, wire.TokenRequest{Role: wire.RoleAgent, Rack: f.rack(r)})
		if err != nil {
			return fmt.Errorf("agent token for %s: %w", f.rack(r), err)
		}
		tf := filepath.Join(f.cfg.Dir, "agent-"+f.rack(r)+".token")
		if err := os.WriteFile(tf, []byte(tr.Token+"\n"), 0o600); err != nil {
			return err
		}
		args := append([]string{"--coordinator", f.coordURL, "--token-file", tf, "--rack", f.rack(r),
			"--agent-id", "fleet-" + f.rack(r), "--log-level", "warn", "--status-refresh", f.cfg.StatusRefresh.String()}, f.cfg.AgentArgs...)
		if f.profiled(r) {
			pp, err := f.pprofArgs("agent-" + f.rack(r))
			if err != nil {
				return err
			}
			args = append(args, pp...)
		}
		bin, args := f.niceArgs(filepath.Join(f.cfg.Bin, "rackfence-agent"), args)
		p, err := startProcEnv(f.cfg.Dir, "agent-"+f.rack(r), bin, f.cfg.AgentEnv, args...)
		if err != nil {
			return err
		}
		f.agents = append(f.agents, p)
	}
	f.say("%d agents started", f.cfg.Racks)
	// Every agent holds its rack's lease before hosts arrive.
	return f.until(ctx, 120*time.Second, "every agent holding its lease", func() error {
		for _, a := range f.agents {
			if a.exited() {
				return fmt.Errorf("%s exited:\n%s", a.name, a.tail())
			}
		}
		n, err := f.metric("rackfence_leases_held")
		if err != nil || int(n) < f.cfg.Racks {
			return errRetry
		}
		return nil
	})
}

// hostSpec is host i: rack i mod Racks, BMC i of the sims.
func (f *fleet) hostSpec(i int) *wire.Host {
	j, k := i/f.perSim, i%f.perSim
	return &wire.Host{Name: fmt.Sprintf("h%06d", i), Rack: f.rack(i % f.cfg.Racks), Online: true,
		BMC:            wire.BMC{Address: fmt.Sprintf("redfish+http://%s:%d/redfish/v1/Systems/1", f.simAddr[j], f.simBase[j]+k), Credentials: "bmc"},
		BootMACAddress: fmt.Sprintf("52:54:01:%02x:%02x:%02x", j, k>>8, k&0xff)}
}

// applyHost registers host i, trying again on an error (an apply is
// idempotent): at 100,000 hosts on two shared cores a request may outlive
// its 30 s timeout while the agents write their first statuses.
func (f *fleet) applyHost(ctx context.Context, i int) error {
	var err error
	for try, wait := 0, time.Second; try < 5; try, wait = try+1, wait*2 {
		if _, _, err = f.admin.ApplyHost(ctx, f.hostSpec(i)); err == nil || ctx.Err() != nil {
			return err
		}
		f.say("  register h%06d: %v; again in %s", i, err, wait)
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return fmt.Errorf("%w (5 tries)", err)
}

func (f *fleet) register(ctx context.Context) error {
	ch := make(chan int)
	errc := make(chan error, 1)
	var wg sync.WaitGroup
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ch {
				if err := f.applyHost(ctx, i); err != nil {
					select {
					case errc <- fmt.Errorf("register h%06d: %w", i, err):
					default:
					}
				}
			}
		}()
	}
	for i := 0; i < f.cfg.Hosts; i++ {
		select {
		case ch <- i:
		case err := <-errc:
			close(ch)
			wg.Wait()
			return err
		}
	}
	close(ch)
	wg.Wait()
	select {
	case err := <-errc:
		return err
	default:
		return nil
	}
}

func (f *fleet) stopAll() {
	var wg sync.WaitGroup
	for _, p := range append(append([]*proc{}, f.agents...), f.sims...) {
		wg.Add(1)
		go func() { defer wg.Done(); p.stop(5 * time.Second) }()
	}
	wg.Wait()
	if f.coord != nil {
		f.coord.stop(10 * time.Second)
	}
}
