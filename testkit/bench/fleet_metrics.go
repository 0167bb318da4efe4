package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/rackfence/rackfence/internal/procnet"
)

var errRetry = errors.New("not yet")

func (f *fleet) until(ctx context.Context, d time.Duration, what string, cond func() error) error {
	deadline := time.Now().Add(d)
	for {
		err := cond()
		if err == nil {
			return nil
		}
		if err != errRetry {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("waited %s for %s", d, what)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// metrics scrapes the coordinator's /metrics and calls fn per sample line.
func (f *fleet) metrics(fn func(name, labels string, v float64)) error {
	req, _ := http.NewRequest(http.MethodGet, f.coordURL+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+f.token)
	resp, err := f.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		_, _ = io.Copy(io.Discard, resp.Body)
		return fmt.Errorf("/metrics: %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		if sp < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[sp+1:], 64)
		if err != nil {
			continue
		}
		name, labels := line[:sp], ""
		if b := strings.IndexByte(name, '{'); b >= 0 {
			name, labels = name[:b], name[b:]
		}
		fn(name, labels, v)
	}
	return sc.Err()
}

func (f *fleet) metric(name string) (float64, error) { return f.metricLabel(name, "") }

// metricLabel is the sample of name whose labels contain label ("" = any).
func (f *fleet) metricLabel(name, label string) (float64, error) {
	var v float64
	found := false
	err := f.metrics(func(n, l string, x float64) {
		if n == name && strings.Contains(l, label) {
			v, found = x, true
		}
	})
	if err == nil && !found {
		err = fmt.Errorf("%s%s not on /metrics", name, label)
	}
	return v, err
}

// metricSum adds every sample of name.
func (f *fleet) metricSum(name string) (float64, error) {
	var v float64
	err := f.metrics(func(n, _ string, x float64) {
		if n == name {
			v += x
		}
	})
	return v, err
}

// labelValue is the value of label name in a sample's labels.
func labelValue(labels, name string) (string, bool) {
	_, rest, ok := strings.Cut(labels, name+`="`)
	if !ok {
		return "", false
	}
	v, _, ok := strings.Cut(rest, `"`)
	return v, ok
}

// connsPerAgent counts each agent's established connections to the
// coordinator's API port.
func (f *fleet) connsPerAgent() (maxN int, mean float64) {
	est := procnet.EstablishedTo(f.port)
	total := 0
	for _, a := range f.agents {
		n := 0
		for ino := range procnet.SocketInodes(a.pid()) {
			if est[ino] {
				n++
			}
		}
		total += n
		maxN = max(maxN, n)
	}
	return maxN, float64(total) / float64(len(f.agents))
}
