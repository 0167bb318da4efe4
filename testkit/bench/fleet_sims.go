package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// maxSimAddrs is how many loopback addresses (127.0.1.1 …) the simulators
// may take, one each.
const maxSimAddrs = 254

// simsFor is how many bmcsim processes serve hosts BMCs: at least asked,
// and enough that none holds more than bmcsim.MaxHosts BMCs or more than
// its open-files limit allows (one listening socket per BMC plus one
// connection from its agent, and room for the rest).
func simsFor(hosts, asked, nofile int) int {
	per := min(bmcsim.MaxHosts, max(1, (nofile-256)/2))
	return max(1, asked, (hosts+per-1)/per)
}

// simAddr is simulator j's listen address: a loopback address of its own,
// so each simulator has a whole port range and 100,000 BMCs (one listening
// port each) fit where one address holds 64k ports.
func simAddr(j int) string { return fmt.Sprintf("127.0.1.%d", j+1) }

var listeningRe = regexp.MustCompile(`listening on [0-9.]+:(\d+)-`)

func (f *fleet) startSims(ctx context.Context) error {
	f.perSim = (f.cfg.Hosts + f.cfg.Sims - 1) / f.cfg.Sims
	for j := 0; j < f.cfg.Sims; j++ {
		var err error
		// Port ranges below the kernel's ephemeral range (32768+), where
		// outgoing connections do not take ports; another process on this
		// shared machine may still hold one (on 0.0.0.0): then try another
		// range.
		n := min(f.perSim, f.cfg.Hosts-j*f.perSim)
		for try := 0; try < 8; try++ {
			base := 20000
			if try > 0 || base+n > 32768 {
				base = 10000 + rand.IntN(max(1, 32768-10000-n))
			}
			if err = f.startSim(ctx, j, base); err == nil || !strings.Contains(err.Error(), "ports not available") {
				break
			}
		}
		if err != nil {
			return err
		}
	}
	f.say("%d bmcsim processes serving %d BMCs on %s…%s", f.cfg.Sims, f.cfg.Hosts, simAddr(0), simAddr(f.cfg.Sims-1))
	return nil
}

func (f *fleet) startSim(ctx context.Context, j, basePort int) error {
	n := min(f.perSim, f.cfg.Hosts-j*f.perSim)
	pp, err := f.pprofArgs(fmt.Sprintf("bmcsim%d", j))
	if err != nil {
		return err
	}
	bin, args := f.niceArgs(filepath.Join(f.cfg.Bin, "rackfence-bmcsim"),
		append([]string{"--hosts", strconv.Itoa(n), "--host", simAddr(j), "--base-port", strconv.Itoa(basePort),
			"--mac-prefix", fmt.Sprintf("52:54:01:%02x", j), "--log-level", "warn"}, pp...))
	p, err := startProc(f.cfg.Dir, fmt.Sprintf("bmcsim%d", j), bin, args...)
	if err != nil {
		return err
	}
	base := 0
	if err := f.until(ctx, 120*time.Second, "bmcsim "+strconv.Itoa(j)+" listening", func() error {
		if p.exited() {
			return fmt.Errorf("bmcsim exited:\n%s", p.tail())
		}
		m := listeningRe.FindStringSubmatch(p.output())
		if m == nil {
			return errRetry
		}
		base, _ = strconv.Atoi(m[1])
		return nil
	}); err != nil {
		p.stop(time.Second)
		return err
	}
	f.sims = append(f.sims, p)
	f.simAddr = append(f.simAddr, simAddr(j))
	f.simBase = append(f.simBase, base)
	return nil
}
