package chaos

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// This file is the storage faults' side of the cluster: each member's data
// dir on a tmpfs of its own (Topology.DataFS), a filler file that takes
// every free byte of it (FaultDiskFull), damaged files at a restart and the
// operator's runbook for them (FaultDamagedRestart).

// fillerName is the file FaultDiskFull writes into a member's file system.
const fillerName = "chaos-filler"

// DamagedExitCode is the exit code a coordinator refusing a damaged or
// missing data file ends with (docs/operator.md, exit codes).
const DamagedExitCode = 6

// refuseWithin bounds how long a member started on a damaged data dir may
// take to refuse (it reads its files and exits; a loaded 2-core machine).
const refuseWithin = 30 * time.Second

func (c *Cluster) mountDataFS() error {
	for i := 0; i < c.Topo.Coordinators; i++ {
		d := c.fsDir(i)
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
		opt := fmt.Sprintf("size=%d,mode=0700", c.Topo.DataFS)
		if err := run("mount", "-t", "tmpfs", "-o", opt, "chaos-"+filepath.Base(d), d); err != nil {
			return err
		}
		c.mounted = append(c.mounted, d)
	}
	return nil
}

// unmountDataFS unmounts the members' file systems, first copying what is
// on them into DATA/cN-kept (the run directory keeps a member's data for a
// post-mortem, as it does without tmpfs). Fillers are not kept.
func (c *Cluster) unmountDataFS() {
	for _, d := range c.mounted {
		_ = os.Remove(filepath.Join(d, fillerName))
		_ = run("cp", "-a", d, strings.TrimSuffix(d, "-fs")+"-kept")
		if err := run("umount", d); err != nil {
			_ = run("umount", "-l", d)
		}
	}
	c.mounted = nil
}

// Fill writes a filler file into member i's file system until it is full
// and returns how many bytes it took.
func (c *Cluster) Fill(i int) (int64, error) {
	if c.Topo.DataFS == 0 {
		return 0, errors.New("disk-full needs the data dirs on their own file systems (Topology.DataFS)")
	}
	f, err := os.OpenFile(filepath.Join(c.fsDir(i), fillerName), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var n int64
	for _, size := range []int{1 << 20, 4096, 1} {
		buf := make([]byte, size)
		for {
			k, err := f.Write(buf)
			n += int64(k)
			if err != nil {
				if errors.Is(err, syscall.ENOSPC) {
					break
				}
				return n, err
			}
		}
	}
	return n, nil
}

// FreeAll removes every member's filler file.
func (c *Cluster) FreeAll() {
	for _, d := range c.mounted {
		_ = os.Remove(filepath.Join(d, fillerName))
	}
}

// Damage does what damage names to member i's data dir (the member is
// stopped) and says what it did.
func (c *Cluster) Damage(i int, damage string) (string, error) {
	dir := c.DataDir(i)
	switch damage {
	case DamageTruncateLog:
		p := filepath.Join(dir, "raft.db")
		st, err := os.Stat(p)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("raft.db cut from %d to %d bytes", st.Size(), st.Size()/2), os.Truncate(p, st.Size()/2)
	case DamageDeleteSnapshots:
		p := filepath.Join(dir, "snapshots")
		ents, _ := os.ReadDir(p)
		return fmt.Sprintf("snapshots/ (%d entries) removed", len(ents)), os.RemoveAll(p)
	}
	return "", fmt.Errorf("unknown damage %q", damage)
}

// SnapshotOn asks member i for a Raft snapshot now.
func (c *Cluster) SnapshotOn(ctx context.Context, i int) error {
	cl, err := c.newClientURLs("", c.admin, 10*time.Second, c.coordURL(i))
	if err != nil {
		return err
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err = cl.Snapshot(sctx)
	return err
}

// Refusal is what a member started on a damaged data dir did.
type Refusal struct {
	Refused  bool   // exited with DamagedExitCode
	ExitCode int    // its exit code (when it exited)
	Running  bool   // still running after refuseWithin: the damage did not stop it
	Message  string // the last lines of its log naming the refusal
}

// StartDamaged starts member i on its (damaged) data dir and waits for it
// to refuse or to keep running.
func (c *Cluster) StartDamaged(i int) (Refusal, error) {
	p := c.Coords[i]
	if err := p.Start(); err != nil {
		return Refusal{}, err
	}
	code, exited := p.Exited(refuseWithin)
	if !exited {
		return Refusal{Running: true}, nil
	}
	return Refusal{Refused: code == DamagedExitCode, ExitCode: code, Message: tailLog(filepath.Join(p.logs, p.Name+".log"), 6)}, nil
}

// Runbook is the operator's way back for member i whose data dir was
// refused (docs/operator.md, "Damaged or missing data files"): remove the
// member from the cluster, move its data dir aside, start it again with an
// empty one to join through a live member. It returns what it did.
func (c *Cluster) Runbook(ctx context.Context, i int) (string, error) {
	via := -1
	for k, p := range c.Coords {
		if k != i && p.Running() {
			via = k
			break
		}
	}
	if via < 0 {
		return "", errors.New("no live member to join through")
	}
	id := fmt.Sprintf("c%d", i+1)
	rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := until(rctx, "remove "+id, func() error { return c.Observer.RemoveMember(rctx, id) }); err != nil {
		return "", err
	}
	aside := c.DataDir(i) + fmt.Sprintf(".damaged-%d", time.Now().UnixNano())
	if err := os.Rename(c.DataDir(i), aside); err != nil {
		return "", err
	}
	c.Coords[i].args = c.joinArgs(i, via)
	if err := c.Coords[i].Start(); err != nil {
		return "", err
	}
	// The aside copy is not needed by the run: free its space (it is on
	// the member's tmpfs).
	_ = os.RemoveAll(aside)
	return fmt.Sprintf("removed %s, data dir moved aside, joined again through c%d", id, via+1), nil
}

// tailLog returns the last n lines of a log file.
func tailLog(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
