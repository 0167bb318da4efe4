package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

func do(method, url, token string, body any, out any) (int, error) {
	var rd *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	hc, secret := testenv.ClientForToken(token) // the admin token pins the cluster CA
	req, _ := http.NewRequest(method, url, rd)
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if out != nil && resp.StatusCode < 300 {
		return resp.StatusCode, json.NewDecoder(resp.Body).Decode(out)
	}
	return resp.StatusCode, nil
}

// TestKillLeaderDuringWrites starts three rackfence-coordinator processes,
// streams concurrent writes through all members, kills -9 the leader in the
// middle, and checks that every acknowledged write is on the new leader and,
// after a restart from its data dir, on the killed node.
func TestKillLeaderDuringWrites(t *testing.T) {
	bin := testenv.Binary(t, "rackfence-coordinator")
	ms, token := startCluster(t, bin, 3, clusterOpts{})

	// Stream writes through every member until told to stop.
	var mu sync.Mutex
	acked := map[string]bool{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				name := fmt.Sprintf("w%d-%05d", w, i)
				m := ms[(w+i)%3]
				h := wire.Host{Name: name, Rack: fmt.Sprintf("r%d", w), Online: true, Consumer: name}
				code, err := do("PUT", m.url()+"/v1/hosts/"+name, token, h, nil)
				if err == nil && (code == 200 || code == 201) {
					mu.Lock()
					acked[name] = true
					mu.Unlock()
				} else {
					time.Sleep(20 * time.Millisecond)
				}
			}
		}(w)
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }
	testenv.Eventually(t, 60*time.Second, "writes flowing", func() error {
		if n := count(); n < 200 {
			return fmt.Errorf("%d acknowledged", n)
		}
		return nil
	})
	var st wire.ClusterStatus
	if _, err := do("GET", ms[1].url()+"/v1/status", token, nil, &st); err != nil {
		t.Fatal(err)
	}
	var victim *member
	for _, m := range ms {
		if m.url() == st.Leader {
			victim = m
		}
	}
	if victim == nil {
		t.Fatalf("leader %q is not one of ours", st.Leader)
	}
	before := count()
	victim.proc.Kill()
	t.Logf("killed leader %s with %d writes acknowledged", victim.id, before)
	testenv.Eventually(t, 60*time.Second, "writes acknowledged after the kill", func() error {
		if n := count(); n < before+200 {
			return fmt.Errorf("%d acknowledged, %d before the kill", n, before)
		}
		return nil
	})
	close(stop)
	wg.Wait()
	mu.Lock()
	want := acked
	mu.Unlock()
	t.Logf("%d writes acknowledged in total", len(want))

	check := func(url, q string) error {
		var l wire.List[wire.Host]
		code, err := do("GET", url+"/v1/hosts"+q, token, nil, &l)
		if err != nil || code != 200 {
			return fmt.Errorf("list: %d %v", code, err)
		}
		have := map[string]bool{}
		for _, h := range l.Items {
			have[h.Name] = h.Consumer == h.Name
		}
		missing := 0
		for n := range want {
			if !have[n] {
				missing++
			}
		}
		if missing > 0 {
			return fmt.Errorf("%d of %d acknowledged writes missing", missing, len(want))
		}
		return nil
	}
	var survivor *member
	for _, m := range ms {
		if m != victim {
			survivor = m
		}
	}
	testenv.Eventually(t, 60*time.Second, "acknowledged writes on the new leader", func() error { return check(survivor.url(), "") })

	victim.proc = testenv.Start(t, victim.id+"-restarted", bin, []string{"RACKFENCE_TOKEN=" + token}, victim.args...)
	testenv.Eventually(t, 90*time.Second, "acknowledged writes on the restarted node", func() error { return check(victim.url(), "?stale=true") })
}
