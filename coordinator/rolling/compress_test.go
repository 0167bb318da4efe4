package rolling

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// burstHosts is how many hosts a burst writes at once: the leader packs
// them into batch entries of several KiB, large enough to be compressed
// once every voter applies compressed entries.
const burstHosts = 64

// burst writes burstHosts hosts at once through admin and checks that
// every member holds each of them with the burst's consumer. An old
// member that skipped a compressed entry would lack them.
func burst(t *testing.T, admin *client.Client, ms []*member, tok string, step int) {
	t.Helper()
	val := fmt.Sprintf("burst-%d", step)
	var wg sync.WaitGroup
	errs := make([]error, burstHosts)
	for i := 0; i < burstHosts; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, _, errs[i] = admin.ApplyHost(ctx(t), &wire.Host{Name: fmt.Sprintf("burst-%02d", i), Rack: "burst", Consumer: val,
				BMC: wire.BMC{Address: fmt.Sprintf("redfish+http://127.0.0.1:1/redfish/v1/Systems/burst-%02d", i), Credentials: "bmc"}})
		}(i)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("burst %d, host %d: %v", step, i, err)
		}
	}
	for _, m := range ms {
		holdsBurst(t, m, tok, val)
	}
}

// holdsBurst waits until member m holds every host of the burst val.
func holdsBurst(t *testing.T, m *member, tok, val string) {
	t.Helper()
	mc := memberClient(t, m, tok)
	testenv.Eventually(t, 60*time.Second, m.id+" holds burst "+val, func() error {
		l, err := mc.ListHosts(ctx(t), client.HostFilter{Rack: "burst"})
		if err != nil {
			return err
		}
		n := 0
		for _, h := range l.Items {
			if h.Consumer == val {
				n++
			}
		}
		if n != burstHosts {
			return fmt.Errorf("%d of %d hosts at %s", n, burstHosts, val)
		}
		return nil
	})
}

// burstUnderCurrentLeader stops m1 (at the release) so that a current
// member leads while m1, a voter the leader recorded at the release, is
// away: the gate, not the leader's own binary, must keep the burst's
// large entries uncompressed. m1 then restarts at the release and must
// catch up on every one of them.
func burstUnderCurrentLeader(t *testing.T, admin *client.Client, ms []*member, tok string, n int) {
	t.Helper()
	m1, up := ms[0], ms[1:]
	m1.proc.Stop(15 * time.Second)
	testenv.Eventually(t, 60*time.Second, "a current member leads while m1 is down", func() error {
		st, err := admin.Status(ctx(t))
		if err != nil {
			return err
		}
		for _, m := range up {
			if m.url == st.Leader && m.current {
				return nil
			}
		}
		return fmt.Errorf("leader %q", st.Leader)
	})
	burst(t, admin, up, tok, n)
	if got := compressedBytes(t, up); got != 0 {
		t.Fatalf("%v bytes written compressed by a current leader while m1 runs %s", got, oldCommit)
	}
	m1.start(t, false)
	holdsBurst(t, m1, tok, fmt.Sprintf("burst-%d", n))
}

// compressedBytes sums rackfence_log_compressed_input_bytes_total over
// the members (a binary without compressed entries has no such series).
func compressedBytes(t *testing.T, ms []*member) float64 {
	t.Helper()
	sum := 0.0
	for _, m := range ms {
		c := &http.Client{Timeout: 5 * time.Second}
		resp, err := c.Get(m.url + "/metrics")
		if err != nil {
			t.Fatalf("%s metrics: %v", m.id, err)
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "rackfence_log_compressed_input_bytes_total "); ok {
				f, err := strconv.ParseFloat(v, 64)
				if err != nil {
					t.Fatalf("%s metrics: %q: %v", m.id, sc.Text(), err)
				}
				sum += f
			}
		}
		resp.Body.Close()
	}
	return sum
}

// checkCompression bursts and checks what the leader did with the large
// entries: none compressed while some member runs the release (it could
// not apply them), some once every member is current.
func checkCompression(t *testing.T, step string, admin *client.Client, ms []*member, tok string, n int) {
	t.Helper()
	allCurrent := true
	for _, m := range ms {
		allCurrent = allCurrent && m.current
	}
	if !allCurrent {
		burst(t, admin, ms, tok, n)
		if got := compressedBytes(t, ms); got != 0 {
			t.Fatalf("%s: %v bytes written compressed while a member runs %s", step, got, oldCommit)
		}
		return
	}
	// The leader opens the gate once it has recorded every member's
	// version (its peer probe): burst until it has.
	testenv.Eventually(t, 60*time.Second, step+": large entries compressed", func() error {
		burst(t, admin, ms, tok, n)
		n += 1000
		if got := compressedBytes(t, ms); got == 0 {
			return fmt.Errorf("no entry written compressed")
		}
		return nil
	})
}
