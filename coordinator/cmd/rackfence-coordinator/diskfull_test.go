package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// get answers a GET with its status and body.
func get(url, token string) (int, []byte, error) {
	hc, secret := testenv.ClientForToken(token)
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

func memberHealth(m *member, token string) (int, wire.Health, error) {
	var h wire.Health
	code, b, err := get(m.url()+"/v1/health", token)
	if err == nil {
		err = json.Unmarshal(b, &h)
	}
	return code, h, err
}

func appliedIndex(m *member, token string) (uint64, error) {
	var st wire.ClusterStatus
	code, b, err := get(m.url()+"/v1/status", token)
	if err == nil && code != http.StatusOK {
		err = fmt.Errorf("GET /v1/status: %d %s", code, b)
	}
	if err == nil {
		err = json.Unmarshal(b, &st)
	}
	return st.AppliedIndex, err
}

// diskFullRounds is how often TestFollowerDiskFullCatchesUp fills and
// frees the follower's file system. Raft's AppendEntries pipeline wedged
// in about 1 round of 7 here (a race at the first refused append), so a
// few rounds catch it often; the health check fails every time without
// the fix.
const diskFullRounds = 5

// mountSmallFS mounts a real ext4 file system of size (a loop device
// over an image file) on dir, 0700, and unmounts it when the test ends,
// after the processes the test starts later stopped. ext4 rather than
// tmpfs: its appends cost an fsync, as a member's disk does, so the
// leader has several appends in flight to the member when one fails.
func mountSmallFS(t *testing.T, dir, size string) {
	t.Helper()
	testenv.RequirePeer(t, os.Geteuid() == 0, "root, to mount a small file system as a member's data dir (mount -o loop)")
	img := dir + ".img"
	for _, c := range [][]string{{"truncate", "-s", size, img}, {"mkfs.ext4", "-q", "-F", img}, {"mkdir", "-p", dir}, {"mount", "-o", "loop", img, dir}, {"chmod", "0700", dir}} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			testenv.RequirePeer(t, false, fmt.Sprintf("%s (%v: %s)", strings.Join(c, " "), err, out))
		}
		if c[0] == "mount" {
			t.Cleanup(func() {
				if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
					t.Errorf("umount %s: %v: %s", dir, err, out)
				}
			})
		}
	}
	os.Remove(filepath.Join(dir, "lost+found"))
}

// startDiskTier starts a three-member tier (n1 bootstraps, writing one
// command per log entry, so many appends are in flight to each follower)
// whose member small has its data dir on a 24 MiB file system of its own,
// and returns the members and the admin token once both followers see
// three voters.
func startDiskTier(t *testing.T, small int) ([]*member, string) {
	t.Helper()
	bin := testenv.Binary(t, "rackfence-coordinator")
	return startCluster(t, bin, 3, clusterOpts{prepare: func(m *member) {
		if m.id == fmt.Sprintf("n%d", small+1) {
			mountSmallFS(t, m.dir, "24m")
		}
		if m.id == "n1" {
			m.args = append(m.args, "--max-batch", "1")
		}
	}})
}

// fill writes a file in dir until the file system is full.
func fill(t *testing.T, dir string) string {
	t.Helper()
	name := filepath.Join(dir, "filler")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for i := range buf {
		buf[i] = byte(i)
	}
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling %s: %v", dir, err)
			}
			return name
		}
	}
}

// TestFollowerDiskFullCatchesUp: a follower whose data dir (a real 24 MiB
// ext4) fills up says so on GET /v1/health (503, log_write_failing,
// naming the error and the data dir) while the cluster keeps taking
// writes; once the space is freed it catches up with the leader by itself,
// with no restart of any member.
func TestFollowerDiskFullCatchesUp(t *testing.T) {
	ms, token := startDiskTier(t, 2)
	small := ms[2]
	leader := ms[0]
	var st wire.ClusterStatus
	if _, err := do("GET", leader.url()+"/v1/status", token, nil, &st); err != nil || st.Leader != leader.url() {
		t.Fatalf("n1 does not lead (leader %q, err %v): the test fills a follower's disk", st.Leader, err)
	}
	// Writers through the leader, many at once so the leader has appends
	// in flight to the follower when it first refuses one.
	var mu sync.Mutex
	acked, failed := 0, []string{}
	count := func() int { mu.Lock(); defer mu.Unlock(); return acked }
	writers := func(round int, stop <-chan struct{}) *sync.WaitGroup {
		var wg sync.WaitGroup
		for w := range 32 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					err := putHost(leader, token, fmt.Sprintf("r%d-w%d-%05d", round, w, i))
					mu.Lock()
					if err != nil {
						failed = append(failed, err.Error())
					} else {
						acked++
					}
					mu.Unlock()
				}
			}()
		}
		return &wg
	}

	// Each round fills the follower's file system under load, then frees
	// it: each is a fresh chance for the leader's replication to it to
	// wedge at the first refused append.
	for round := 1; round <= diskFullRounds; round++ {
		refusals := strings.Count(small.proc.Output(), "failed to append to logs")
		stop := make(chan struct{})
		wg := writers(round, stop)
		from := count()
		testenv.Eventually(t, 60*time.Second, "writes flowing", func() error {
			if n := count(); n < from+100 {
				return fmt.Errorf("%d acknowledged", n-from)
			}
			return nil
		})
		filler := fill(t, small.dir)
		testenv.Eventually(t, 120*time.Second, "the follower failing to append", func() error {
			if strings.Count(small.proc.Output(), "failed to append to logs") > refusals {
				return nil
			}
			return fmt.Errorf("%d writes, the follower still appends", count())
		})
		more := count() + 300
		testenv.Eventually(t, 120*time.Second, "300 more writes while the follower refuses them", func() error {
			if n := count(); n < more {
				return fmt.Errorf("%d acknowledged, want %d", n, more)
			}
			return nil
		})
		close(stop)
		wg.Wait()
		if len(failed) > 0 {
			t.Fatalf("%d writes failed while one follower's disk was full (two members can write: want 2xx): %v", len(failed), failed[:min(len(failed), 5)])
		}
		code, h, err := memberHealth(small, token)
		if err != nil || code != http.StatusServiceUnavailable || h.Status != wire.HealthLogWriteFailing ||
			!strings.Contains(h.Reason, "no space left on device") || !strings.Contains(h.Reason, small.dir) {
			t.Errorf("round %d: GET /v1/health of a follower that cannot write its log: %d %q %q (err %v); want 503 %q naming %q and %s",
				round, code, h.Status, h.Reason, err, wire.HealthLogWriteFailing, "no space left on device", small.dir)
		} else if round == 1 {
			t.Logf("health of the full follower: %d %s: %s", code, h.Status, h.Reason)
		}
		_, metrics, _ := get(small.url()+"/metrics", token)
		if !strings.Contains(string(metrics), "rackfence_raft_log_write_failing 1") {
			t.Errorf("round %d: /metrics of the full follower lacks rackfence_raft_log_write_failing 1", round)
		}
		if round == 1 {
			// The leader's view, from its next read of the member's health.
			testenv.Eventually(t, 60*time.Second, "the leader reporting the member unhealthy and lagging", func() error {
				_, m, err := get(leader.url()+"/metrics", token)
				if err != nil {
					return err
				}
				for _, want := range []string{`rackfence_member_healthy{member="n3"} 0`, `rackfence_member_applied_index_lag{member="n3"} `} {
					if !strings.Contains(string(m), want) {
						return fmt.Errorf("the leader's /metrics lack %s", want)
					}
				}
				var st wire.ClusterStatus
				if _, err := do("GET", leader.url()+"/v1/status", token, nil, &st); err != nil {
					return err
				}
				if !strings.Contains(strings.Join(st.Warnings, "\n"), "member n3 cannot write the Raft log in data dir "+small.dir) {
					return fmt.Errorf("the leader's status warnings %q do not name n3's log write failure", st.Warnings)
				}
				return nil
			})
		}

		target, err := appliedIndex(leader, token)
		if err != nil {
			t.Fatal(err)
		}
		was, _ := appliedIndex(small, token)
		if err := os.Remove(filler); err != nil {
			t.Fatal(err)
		}
		freed := time.Now()
		testenv.Eventually(t, 120*time.Second, fmt.Sprintf("round %d: the follower catching up after the space was freed", round), func() error {
			got, err := appliedIndex(small, token)
			if err != nil {
				return err
			}
			if got < target {
				return fmt.Errorf("the follower applied %d, the leader %d (it was at %d when the space was freed)", got, target, was)
			}
			return nil
		})
		t.Logf("round %d: the follower was at %d, the leader at %d when the space was freed; caught up %.1f s later",
			round, was, target, time.Since(freed).Seconds())
		testenv.Eventually(t, 60*time.Second, "the follower's health ok again", func() error {
			code, h, err := memberHealth(small, token)
			if err != nil || code != http.StatusOK || h.Status != wire.HealthOK {
				return fmt.Errorf("%d %+v %v", code, h, err)
			}
			return nil
		})
	}
	for _, m := range ms {
		if m.proc.Exited() {
			t.Fatalf("%s exited:\n%s", m.id, m.proc.Output())
		}
	}
}

// putHostAnswer PUTs a host and returns the status and body.
func putHostAnswer(m *member, token, name string) (int, string, error) {
	b, _ := json.Marshal(wire.Host{Name: name, Rack: "r1", Online: true, Consumer: name})
	hc, secret := testenv.ClientForToken(token)
	req, _ := http.NewRequest(http.MethodPut, m.url()+"/v1/hosts/"+name, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), nil
}

// TestLeaderDiskFullStepsDown: a leader whose data dir (a real 24 MiB
// ext4) fills up steps down; the write it could not append is answered
// 500 saying so (not applied, the disk error); another member leads, and
// once the space is freed the old leader catches up with no restart.
func TestLeaderDiskFullStepsDown(t *testing.T) {
	ms, token := startDiskTier(t, 0)
	full := ms[0]

	var mu sync.Mutex
	acked := 0
	answers := map[int][]string{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				m := ms[(w+i)%3]
				code, body, err := putHostAnswer(m, token, fmt.Sprintf("w%d-%05d", w, i))
				if err != nil {
					body = m.id + ": " + err.Error()
				}
				mu.Lock()
				if err == nil && code < 300 {
					acked++
				} else {
					answers[code] = append(answers[code], body)
				}
				mu.Unlock()
				if err != nil || code >= 300 {
					time.Sleep(50 * time.Millisecond)
				}
			}
		}()
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return acked }
	testenv.Eventually(t, 60*time.Second, "writes flowing", func() error {
		if n := count(); n < 100 {
			return fmt.Errorf("%d acknowledged", n)
		}
		return nil
	})
	logged := len(full.proc.Output())
	filler := fill(t, full.dir)
	filled := time.Now()
	testenv.Eventually(t, 120*time.Second, "another member leading", func() error {
		var st wire.ClusterStatus
		if _, err := do("GET", ms[1].url()+"/v1/status", token, nil, &st); err != nil {
			return err
		}
		if st.Leader == "" || st.Leader == full.url() {
			return fmt.Errorf("leader %q", st.Leader)
		}
		return nil
	})
	// The old leader cannot write, so it defers standing for leader
	// (coordinator.electionDeferral) and a healthy member wins the first
	// election: before, it won again and again, stepping down at once.
	reelected := strings.Count(full.proc.Output()[logged:], `"this node became the leader"`)
	t.Logf("another member led %.1f s after the disk filled; the old leader was elected %d more times", time.Since(filled).Seconds(), reelected)
	if reelected > 0 {
		t.Errorf("the leader whose disk is full was elected again %d times before another member led", reelected)
	}
	more := count() + 200
	testenv.Eventually(t, 120*time.Second, "200 more writes under the new leader", func() error {
		if n := count(); n < more {
			return fmt.Errorf("%d acknowledged, want %d (not acknowledged so far, by code: %s)", n, more, refusedSoFar(&mu, answers))
		}
		return nil
	})
	close(stop)
	wg.Wait()
	mu.Lock()
	for code, bodies := range answers {
		t.Logf("%d × %d, e.g. %s", len(bodies), code, bodies[0])
	}
	for _, b := range answers[http.StatusInternalServerError] {
		if !strings.Contains(b, "NOT applied") || !strings.Contains(b, "no space left on device") {
			t.Errorf("a 500 does not say the write was not applied and why: %s", b)
		}
	}
	if len(answers[http.StatusInternalServerError]) == 0 {
		t.Errorf("no write was answered 500 when the leader could not append it (answers: %v)", answers)
	}
	mu.Unlock()

	code, h, err := memberHealth(full, token)
	if err != nil || code != http.StatusServiceUnavailable || h.Status != wire.HealthLogWriteFailing {
		t.Errorf("GET /v1/health of the old leader with a full disk: %d %+v %v; want 503 %s", code, h, err, wire.HealthLogWriteFailing)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	target, err := appliedIndex(ms[1], token)
	if err != nil {
		t.Fatal(err)
	}
	freed := time.Now()
	testenv.Eventually(t, 120*time.Second, "the old leader catching up after the space was freed", func() error {
		got, err := appliedIndex(full, token)
		if err != nil {
			return err
		}
		if got < target {
			return fmt.Errorf("it applied %d, the cluster %d", got, target)
		}
		return nil
	})
	t.Logf("the old leader caught up %.1f s after the space was freed", time.Since(freed).Seconds())
	testenv.Eventually(t, 60*time.Second, "the old leader's health ok again", func() error {
		code, h, err := memberHealth(full, token)
		if err != nil || code != http.StatusOK || h.Status != wire.HealthOK {
			return fmt.Errorf("%d %+v %v", code, h, err)
		}
		return nil
	})
	for _, m := range ms {
		if m.proc.Exited() {
			t.Fatalf("%s exited:\n%s", m.id, m.proc.Output())
		}
	}
}

// refusedSoFar counts the writes not acknowledged by answer code (0: no
// answer), with the last answer of each.
func refusedSoFar(mu *sync.Mutex, answers map[int][]string) string {
	mu.Lock()
	defer mu.Unlock()
	var parts []string
	for code, bodies := range answers {
		last := bodies[len(bodies)-1]
		if len(last) > 200 {
			last = last[:200] + "…"
		}
		parts = append(parts, fmt.Sprintf("%d × %d, last %s", len(bodies), code, last))
	}
	return strings.Join(parts, "; ")
}
