package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rackfence/rackfence/internal/pki"
	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

// HardwareDetails returns an inventory shaped like rackfence-bmcsim's for
// host i: two sockets, four NICs, two disks, four firmware components.
func HardwareDetails(i int) *wire.HardwareDetails {
	mac := func(n int) string {
		return fmt.Sprintf("52:54:%02x:%02x:%02x:%02x", n, (i>>16)&0xff, (i>>8)&0xff, i&0xff)
	}
	return &wire.HardwareDetails{
		Manufacturer: "rackfence", Model: "bmcsim-2U", SerialNumber: fmt.Sprintf("SIM%08d", i), BIOSVersion: "2.19.1",
		CPUs: []wire.CPU{{Model: "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz", Cores: 32, Threads: 64},
			{Model: "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz", Cores: 32, Threads: 64}},
		MemoryMiB: 524288,
		NICs: []wire.NIC{{Name: "NIC.Integrated.1-1", MAC: mac(0), SpeedMbps: 25000}, {Name: "NIC.Integrated.1-2", MAC: mac(1), SpeedMbps: 25000},
			{Name: "NIC.Slot.3-1", MAC: mac(2), SpeedMbps: 100000}, {Name: "NIC.Slot.3-2", MAC: mac(3), SpeedMbps: 100000}},
		Disks: []wire.Disk{{Name: "Disk.Bay.0", Model: "SAMSUNG MZ7L3960", SizeBytes: 960197124096, Type: "SSD"},
			{Name: "Disk.Bay.1", Model: "SAMSUNG MZ7L3960", SizeBytes: 960197124096, Type: "SSD"}},
		Firmware: []wire.Firmware{{Name: "BIOS", Version: "2.19.1"}, {Name: "BMC", Version: "7.00.00.171"},
			{Name: "NIC.Integrated.1", Version: "22.91.5"}, {Name: "PERC H755", Version: "52.26.0-5179"}},
	}
}

func call(ctx context.Context, c *http.Client, method, url, token string, in, out any) error {
	var body []byte
	if in != nil {
		body, _ = json.Marshal(in)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		var e wire.ErrorBody
		_ = json.NewDecoder(resp.Body).Decode(&e)
		return fmt.Errorf("%s %s: %d %s", method, req.URL.Path, resp.StatusCode, e.Error.Message)
	}
	if out != nil {
		return json.NewDecoder(resp.Body).Decode(out)
	}
	_, _ = io.Copy(io.Discard, resp.Body) // the connection is kept only once its body was read
	return nil
}

// Fill creates hosts hosts (perRack per rack, racks fill-NNN) on the leader
// at url, then, as each rack's agent, reports a status carrying hardware
// details for every host. progress, if set, is called every 10,000 writes.
// Over TLS each rack's writes present an agent certificate of their own
// (a coordinator accepts an agent token only with one).
func Fill(ctx context.Context, c *http.Client, url, admin string, hosts, perRack, workers int, progress func(done int)) error {
	racks := (hosts + perRack - 1) / perRack
	epochs := make([]uint64, racks)
	tokens := make([]string, racks)
	agents := make([]*http.Client, racks)
	for r := 0; r < racks; r++ {
		rack := fmt.Sprintf("fill-%03d", r)
		var tr wire.TokenResponse
		if err := call(ctx, c, http.MethodPost, url+"/v1/tokens", admin, wire.TokenRequest{Role: wire.RoleAgent, Rack: rack}, &tr); err != nil {
			return err
		}
		ac, err := agentClient(ctx, c, url, tr.Token, rack, workers)
		if err != nil {
			return err
		}
		var l wire.Lease
		if err := call(ctx, ac, http.MethodPost, url+"/v1/racks/"+rack+"/lease", tr.Token,
			wire.LeaseRequest{Holder: "rackfence-load", TTL: wire.Duration(300e9)}, &l); err != nil {
			return err
		}
		tokens[r], epochs[r], agents[r] = tr.Token, l.Epoch, ac
	}
	var done atomic.Int64
	jobs := make(chan int)
	errc := make(chan error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				r := i / perRack
				rack := fmt.Sprintf("fill-%03d", r)
				name := fmt.Sprintf("fill-%06d", i)
				var h wire.Host
				if err := json.Unmarshal(HostBody("fill", rack, i), &h); err != nil {
					errc <- err
					return
				}
				if err := call(ctx, c, http.MethodPut, url+"/v1/hosts/"+name, admin, h, nil); err != nil {
					errc <- err
					return
				}
				rep := wire.StatusReport{Epoch: epochs[r], Status: wire.HostStatus{
					ProvisioningState: wire.StateAvailable, OperationalStatus: wire.OpOK, PoweredOn: false,
					ProvisioningID: fmt.Sprintf("direct-%06d", i), HardwareDetails: HardwareDetails(i)}}
				if err := call(ctx, agents[r], http.MethodPut, url+"/v1/hosts/"+name+"/status", tokens[r], rep, nil); err != nil {
					errc <- err
					return
				}
				if n := done.Add(1); progress != nil && n%10000 == 0 {
					progress(int(n))
				}
			}
		}()
	}
	var err error
feed:
	for i := 0; i < hosts; i++ {
		select {
		case jobs <- i:
		case err = <-errc:
			break feed
		case <-ctx.Done():
			err = ctx.Err()
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if err == nil {
		select {
		case err = <-errc:
		default:
		}
	}
	return err
}

// agentClient is the client for rack's agent writes with token: c itself
// in plaintext; over TLS (a token that pins the cluster's CA) a client of
// up to conns connections presenting an agent certificate issued for the
// token (client.IssueAgentCert), as rackfence-agent obtains at start.
func agentClient(ctx context.Context, c *http.Client, url, token, rack string, conns int) (*http.Client, error) {
	_, pin := wire.ParseToken(token)
	if pin == "" {
		return c, nil
	}
	cc, err := client.New(client.Config{Coordinator: url, Token: token, HTTPClient: c, Timeout: 30 * time.Second})
	if err != nil {
		return nil, err
	}
	certPEM, keyPEM, err := cc.IssueAgentCert(ctx, "rackfence-load-"+rack)
	if err != nil {
		return nil, err
	}
	h, err := pki.NewHolder(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("rack %s: the agent certificate issued: %w", rack, err)
	}
	ac := NewHTTPClientFor(conns, token)
	tc := ac.Transport.(*http.Transport).TLSClientConfig
	if tc == nil {
		return nil, fmt.Errorf("rack %s: the token's CA pin %q is not a SHA-256 in hex", rack, pin)
	}
	tc.GetClientCertificate = h.GetClientCertificate
	return ac, nil
}
