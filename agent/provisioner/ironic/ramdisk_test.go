package ironic_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/provisioner/ironic"
)

// agentRamdisk stands in for Ironic's agent ramdisk (IPA) on a simulated
// host: Ironic 21.4 runs its redfish BIOS, RAID and firmware clean steps
// only with the ramdisk booted and calling back, and no host here can
// boot one (the simulator's hosts run no OS; a real IPA on this machine
// would manage its own disks). It speaks the part of IPA's protocol a
// manual clean of out-of-band steps needs: while the node is in clean
// wait it looks the node up by its MAC (GET /v1/lookup: the agent token),
// heartbeats (POST /v1/heartbeat/NODE with its callback URL), and answers
// the conductor's commands (clean.get_clean_steps: no in-band steps;
// GET /v1/commands). After each reboot Ironic drops the token; the next
// heartbeat is refused and the stand-in looks the node up again, as IPA
// does when it boots. Every BIOS, RAID and firmware call the BMC sees
// comes from Ironic's conductor through sushy.
type agentRamdisk struct {
	srv        *httptest.Server
	images     *httptest.Server
	heartbeats atomic.Int64
	node       atomic.Value // string: the node's UUID, once registered
	mu         sync.Mutex
	cmds       []map[string]any
}

// startAgentRamdisk serves the stand-in and the deploy kernel/ramdisk
// Ironic downloads for PXE, and heartbeats for the node follow names
// (boot MAC mac) against Ironic at url until the test ends.
func startAgentRamdisk(t *testing.T, url, mac string) *agentRamdisk {
	t.Helper()
	a := &agentRamdisk{}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	a.images = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "not a kernel: %s\n", r.URL.Path)
	}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.loop(ctx, url, mac)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		a.srv.Close()
		a.images.Close()
	})
	return a
}

// kernel and ramdisk are the URLs to give Ironic as deploy_kernel and
// deploy_ramdisk.
func (a *agentRamdisk) kernel() string  { return a.images.URL + "/ipa.kernel" }
func (a *agentRamdisk) ramdisk() string { return a.images.URL + "/ipa.initramfs" }

func (a *agentRamdisk) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.Method == http.MethodGet {
		a.mu.Lock()
		defer a.mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]any{"commands": append([]map[string]any{}, a.cmds...)})
		return
	}
	var body struct {
		Name   string         `json:"name"`
		Params map[string]any `json:"params"`
	}
	_ = json.NewDecoder(r.Body).Decode(&body)
	result := map[string]any{}
	if body.Name == "clean.get_clean_steps" {
		result = map[string]any{"clean_steps": map[string]any{"GenericHardwareManager": []any{}},
			"hardware_manager_version": map[string]any{"generic_hardware_manager": "1.1"}}
	}
	a.mu.Lock()
	// IPA names a command without its extension ("get_clean_steps").
	_, name, _ := strings.Cut(body.Name, ".")
	c := map[string]any{"id": fmt.Sprint(len(a.cmds) + 1), "command_name": name, "command_status": "SUCCEEDED",
		"command_result": result, "command_error": nil}
	a.cmds = append(a.cmds, c)
	a.mu.Unlock()
	_ = json.NewEncoder(w).Encode(c)
}

// follow makes the stand-in heartbeat for node uuid.
func (a *agentRamdisk) follow(uuid string) { a.node.Store(uuid) }

func (a *agentRamdisk) loop(ctx context.Context, url, mac string) {
	var token string
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
		uuid, _ := a.node.Load().(string)
		if uuid == "" {
			continue
		}
		var n struct {
			ProvisionState string `json:"provision_state"`
		}
		if ironicJSON(ctx, http.MethodGet, url+"/v1/nodes/"+uuid, nil, &n) != http.StatusOK || n.ProvisionState != "clean wait" {
			continue
		}
		hb := map[string]any{"callback_url": a.srv.URL, "agent_version": "8.6.0", "agent_token": token}
		code := ironicJSON(ctx, http.MethodPost, url+"/v1/heartbeat/"+uuid, hb, nil)
		if testing.Verbose() {
			fmt.Fprintf(os.Stderr, "agent ramdisk stand-in: heartbeat %s: %d\n", uuid, code)
		}
		if code == http.StatusAccepted {
			a.heartbeats.Add(1)
			continue
		}
		// A new boot: the token Ironic generated for this one.
		var lk struct {
			Config struct {
				AgentToken string `json:"agent_token"`
			} `json:"config"`
		}
		code = ironicJSON(ctx, http.MethodGet, url+"/v1/lookup?addresses="+mac, nil, &lk)
		if testing.Verbose() {
			fmt.Fprintf(os.Stderr, "agent ramdisk stand-in: lookup %s: %d\n", mac, code)
		}
		if code == http.StatusOK && lk.Config.AgentToken != "******" {
			// A freshly booted agent has run no command yet: Ironic
			// takes an empty list as "rebooted", and continues.
			token = lk.Config.AgentToken
			a.mu.Lock()
			a.cmds = nil
			a.mu.Unlock()
		}
	}
}

// ironicJSON sends one request to Ironic's API and decodes the answer.
func ironicJSON(ctx context.Context, method, url string, in, out any) int {
	var body io.Reader
	if in != nil {
		b, _ := json.Marshal(in)
		body = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return 0
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-OpenStack-Ironic-API-Version", ironic.Microversion)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	if out != nil {
		_ = json.NewDecoder(resp.Body).Decode(out)
	}
	return resp.StatusCode
}
