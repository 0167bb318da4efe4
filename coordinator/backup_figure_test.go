package coordinator_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rackfence/rackfence/coordinator"
	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/backupfile"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bench"
	"github.com/rackfence/rackfence/testkit/coordtest"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestBackupFigure measures a backup's save, check and restore at scale
// (a figure, not a check; skipped unless asked):
//
//	RACKFENCE_BACKUP_HOSTS=100000 go test -count=1 -run TestBackupFigure -v -timeout 30m ./coordinator/
//
// Hosts are written in-process through Raft (Store.Apply from 64
// goroutines, batched), 100 per rack, each with a status report carrying
// bmcsim-shaped hardware details, as testkit/bench.Fill does over HTTP.
func TestBackupFigure(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("RACKFENCE_BACKUP_HOSTS"))
	if n <= 0 {
		t.Skip("a figure: set RACKFENCE_BACKUP_HOSTS=100000 to measure backup and restore at that many hosts")
	}
	a := coordtest.Start(t, coordtest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	const perRack = 100
	racks := (n + perRack - 1) / perRack
	epochs := make([]uint64, racks)
	for r := range racks {
		v, err := a.Store.Apply(ctx, fsm.LeaseAcquireCmd{Rack: fmt.Sprintf("fill-%03d", r), Holder: "fill", TTL: time.Hour, Time: time.Now().UTC()})
		if err != nil {
			t.Fatal(err)
		}
		epochs[r] = v.(wire.Lease).Epoch
	}
	start := time.Now()
	jobs := make(chan int)
	var wg sync.WaitGroup
	var once sync.Once
	var fillErr error
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				r := i / perRack
				rack, name := fmt.Sprintf("fill-%03d", r), fmt.Sprintf("fill-%06d", i)
				h := wire.Host{Name: name, Rack: rack, Online: true, Consumer: "figure",
					BMC:            wire.BMC{Address: fmt.Sprintf("redfish+http://127.0.0.1:%d/redfish/v1/Systems/1", 9000+i%1000), Credentials: "bmc"},
					BootMACAddress: fmt.Sprintf("52:54:00:%02x:%02x:%02x", (i>>16)&0xff, (i>>8)&0xff, i&0xff)}
				_, err := a.Store.Apply(ctx, fsm.PutHostCmd{Host: h, Time: time.Now().UTC()})
				if err == nil {
					_, err = a.Store.Apply(ctx, fsm.StatusCmd{Rack: rack, Name: name, Time: time.Now().UTC(), Report: wire.StatusReport{
						Epoch: epochs[r], Status: wire.HostStatus{ProvisioningState: wire.StateAvailable, OperationalStatus: wire.OpOK,
							ProvisioningID: fmt.Sprintf("direct-%06d", i), HardwareDetails: bench.HardwareDetails(i)}}})
				}
				if err != nil {
					once.Do(func() { fillErr = fmt.Errorf("host %s: %w", name, err) })
				}
			}
		}()
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if fillErr != nil {
		t.Fatal(fillErr)
	}
	t.Logf("filled %d hosts (%d racks) in %s", n, racks, time.Since(start).Round(time.Millisecond))

	file := filepath.Join(t.TempDir(), "figure.backup")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if err := a.Admin.Backup(ctx, f, nil); err != nil {
		t.Fatal(err)
	}
	f.Close()
	save := time.Since(start)
	fi, _ := os.Stat(file)

	start = time.Now()
	f, _ = os.Open(file)
	hdr, err := backupfile.Verify(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	verify := time.Since(start)
	if hdr.Hosts != n {
		t.Fatalf("backup holds %d hosts, want %d", hdr.Hosts, n)
	}

	dir := filepath.Join(t.TempDir(), "restored")
	raftAddr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, "127.0.0.1"))
	start = time.Now()
	f, _ = os.Open(file)
	_, err = coordinator.RestoreDataDir(coordinator.RestoreOptions{Backup: f, DataDir: dir, NodeID: "b-1", RaftAddr: raftAddr, Keys: a.Keys, Now: time.Now()})
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	restore := time.Since(start)
	a.Close()
	start = time.Now()
	st, _ := serve(t, dir, "b-1", raftAddr, a.Keys)
	ready := time.Since(start)
	if hosts := st.FSM().HostsView(""); hosts.Len() != n {
		t.Fatalf("restored member holds %d hosts, want %d", hosts.Len(), n)
	}
	t.Logf("FIGURE backup of %d hosts: %.1f MiB; save %s (leader snapshot + stream + write), check %s, restore into a data dir %s, restored member leading %s",
		n, float64(fi.Size())/(1<<20), save.Round(time.Millisecond), verify.Round(time.Millisecond), restore.Round(time.Millisecond), ready.Round(time.Millisecond))
}
