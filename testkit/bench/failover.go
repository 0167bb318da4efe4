package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"syscall"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// Status reads GET /v1/status from url.
func Status(ctx context.Context, c *http.Client, url, token string) (*wire.ClusterStatus, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/v1/status?stale=true", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("GET %s/v1/status: %d", url, resp.StatusCode)
	}
	var st wire.ClusterStatus
	return &st, json.NewDecoder(resp.Body).Decode(&st)
}

// Failover kills -9 the leader (pids maps member HTTP URL → pid) while
// writes go to the other members, and returns the time from the kill to the
// first write accepted after it.
func Failover(ctx context.Context, c *http.Client, urls []string, token string, pids map[string]int) (time.Duration, string, error) {
	var leader string
	for _, u := range urls {
		st, err := Status(ctx, c, u, token)
		if err == nil && st.Leader != "" {
			leader = st.Leader
			break
		}
	}
	pid, ok := pids[leader]
	if leader == "" || !ok {
		return 0, leader, fmt.Errorf("leader %q not among %v", leader, pids)
	}
	var others []string
	for _, u := range urls {
		if u != leader {
			others = append(others, u)
		}
	}
	// Make sure writes work through the followers before the kill.
	t := &Rackfence{URL: others[0], Token: token, Rack: "failover", Prefix: "fo", Client: c}
	if err := t.Put(ctx, 0); err != nil {
		return 0, leader, fmt.Errorf("write before the kill: %w", err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return 0, leader, err
	}
	t0 := time.Now()
	for i := 1; ctx.Err() == nil; i++ {
		t.URL = others[i%len(others)]
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := t.Put(cctx, i)
		cancel()
		if err == nil {
			return time.Since(t0), leader, nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	return 0, leader, ctx.Err()
}
