package direct_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/bmc"
	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/agent/provisioner/direct"
	"github.com/rackfence/rackfence/internal/jsonl"
	"github.com/rackfence/rackfence/shared/fence"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// The profile × operation table: the direct provisioner, through a real
// guard.Guard, against every simulator profile and every system of it.
// Every outcome is read from the simulator's state (sim.State), never from
// our own logs: register learns exactly the profile's BMC details, inspect
// exactly its hardware, provision inserts the image in the profile's device
// (path, Image, Inserted), sets a one-time boot from CD and powers on (the
// host's last boot is Cd), deprovision ejects and powers off; no other
// system of the BMC changes; a system without a CD device is booted once
// from the network instead (UEFI HTTP from the image's URL where the
// system has HttpBootUri, else PXE).
//
//	go test -run TestProfileOperations -v ./agent/provisioner/direct/
func TestProfileOperations(t *testing.T) {
	const image = "http://images.example/os.iso"
	ops := []string{"register", "inspect", "provision", "deprovision"}
	type row struct {
		profile, system string
		cells           map[string]string
	}
	var rows []row
	passed, expected := 0, 0
	for _, prof := range bmcsim.Profiles() {
		audit := filepath.Join(t.TempDir(), prof+"-guard.jsonl")
		bmcAudit := filepath.Join(t.TempDir(), prof+"-bmc.jsonl")
		sim, err := bmcsim.Start(bmcsim.Config{Hosts: 1, Profile: prof, AuditPath: bmcAudit})
		if err != nil {
			t.Fatalf("profile %s: %v", prof, err)
		}
		fa, err := guard.NewFileAudit(audit)
		if err != nil {
			t.Fatal(err)
		}
		holder := fence.NewHolder(nil)
		holder.Set(fence.Lease{Rack: "r1", Holder: "t", Epoch: 11, TTL: time.Hour, Deadline: time.Now().Add(time.Hour)})
		p, err := direct.New(direct.Config{Guard: guard.NewGuard(holder, fa), BMC: bmc.Options{Timeout: 20 * time.Second,
			MutationTimeout: 20 * time.Second, UserAgent: bmc.AgentUserAgent("test", "t", "r1", holder)}})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		if addrs := sim.SystemAddresses(0); len(addrs) > 1 {
			// Several systems and an address naming none: refused, never
			// "the first one" (powering the wrong blade).
			bare := addrs[0][:strings.Index(addrs[0], "/redfish/v1/")]
			_, err := p.Register(ctx, provisioner.Host{Name: prof + "-nopath", Username: "admin", Password: "password", BMC: wire.BMC{Address: bare}})
			expected++
			if !errors.Is(err, errclass.ErrFailed) || !strings.Contains(err.Error(), "bmc.address") {
				t.Errorf("%s: register without a system path: %v; want ErrFailed asking for the system path in bmc.address", prof, err)
			} else {
				passed++
				rows = append(rows, row{profile: prof, system: "(no system path)", cells: map[string]string{"register": "ok (ErrFailed)"}})
			}
		}
		for j, addr := range sim.SystemAddresses(0) {
			r := row{profile: prof, system: addr[strings.Index(addr, "/redfish/v1/")+len("/redfish/v1/"):], cells: map[string]string{}}
			h := provisioner.Host{Name: fmt.Sprintf("%s-%d", prof, j), Username: "admin", Password: "password",
				BMC: wire.BMC{Address: addr}, BootMACAddress: sim.SystemMAC(0, j), Online: true, Image: &wire.Image{URL: image}}
			wantBMC, wantHW := sim.ExpectedBMC(0, j), sim.ExpectedHardware(0, j)
			cell := func(op string, err error) {
				expected++
				if err != nil {
					t.Errorf("%s %s: %s: %v", prof, r.system, op, err)
					r.cells[op] = "FAIL"
					return
				}
				passed++
				r.cells[op] = "ok"
			}

			// register
			res, err := p.Register(ctx, h)
			if err == nil && (res.BMCDetails == nil || !reflect.DeepEqual(*res.BMCDetails, wantBMC)) {
				err = fmt.Errorf("BMC details\n got %+v\nwant %+v", res.BMCDetails, wantBMC)
			}
			// The auth that worked, as the simulator saw it: session logins
			// only where the profile offers sessions.
			if st := sim.State(0); err == nil && (st.Logins > 0) != (wantBMC.Auth == "session") {
				err = fmt.Errorf("the simulator counted %d session logins; the profile's auth is %q", st.Logins, wantBMC.Auth)
			}
			cell("register", err)

			// inspect
			res, err = p.Inspect(ctx, h)
			if err == nil && (res.HardwareDetails == nil || !reflect.DeepEqual(*res.HardwareDetails, wantHW)) {
				err = fmt.Errorf("hardware details\n got %+v\nwant %+v", res.HardwareDetails, wantHW)
			}
			cell("inspect", err)

			// provision
			before, sent := sim.State(0), auditLen(t, bmcAudit)
			_, err = p.Provision(ctx, h)
			after := sim.State(0)
			if err == nil {
				err = onlyOwnPaths(t, bmcAudit, sent, "/redfish/v1/"+r.system, wantBMC.VirtualMedia)
			}
			if wantBMC.VirtualMedia == "" {
				// No device taking CD or DVD: booted once from the network
				// by what the system offers (UEFI HTTP from the image's
				// URL where it has HttpBootUri, else PXE).
				target := netBootTargets[prof]
				if err == nil && target == "" {
					err = fmt.Errorf("profile %s has no virtual media: add the network boot it offers to netBootTargets", prof)
				}
				if err == nil {
					err = checkNetBooted(after, r.system, target, image)
				}
				if err == nil {
					err = othersUnchanged(before, after, "/redfish/v1/"+r.system, "")
				}
				cell("provision", err)
				if err == nil {
					r.cells["provision"] = "ok (" + target + ")"
				}
			} else {
				if err == nil {
					err = checkProvisioned(after, r.system, wantBMC.VirtualMedia, image)
				}
				if err == nil {
					err = othersUnchanged(before, after, "/redfish/v1/"+r.system, wantBMC.VirtualMedia)
				}
				cell("provision", err)
			}

			// deprovision
			before, sent = sim.State(0), auditLen(t, bmcAudit)
			_, err = p.Deprovision(ctx, h)
			after = sim.State(0)
			if err == nil {
				err = onlyOwnPaths(t, bmcAudit, sent, "/redfish/v1/"+r.system, wantBMC.VirtualMedia)
			}
			if err == nil {
				err = checkDeprovisioned(after, r.system, wantBMC.VirtualMedia)
			}
			if err == nil {
				err = othersUnchanged(before, after, "/redfish/v1/"+r.system, wantBMC.VirtualMedia)
			}
			cell("deprovision", err)
			rows = append(rows, r)
		}
		cancel()
		_ = p.Close(context.Background())
		_ = sim.Close()
		if err := fa.Close(); err != nil {
			t.Fatal(err)
		}
		// Every mutation went through the guard, under the lease's epoch.
		recs, err := jsonl.Read[guard.AuditRecord](audit)
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range recs {
			if rec.Epoch != 11 {
				t.Errorf("%s: guard audit record %+v", prof, rec)
			}
		}
	}

	var b strings.Builder
	fmt.Fprintf(&b, "\n%-20s %-26s", "profile", "system")
	for _, op := range ops {
		fmt.Fprintf(&b, " %-20s", op)
	}
	for _, r := range rows {
		fmt.Fprintf(&b, "\n%-20s %-26s", r.profile, r.system)
		for _, op := range ops {
			c := r.cells[op]
			if c == "" {
				c = "-"
			}
			fmt.Fprintf(&b, " %-20s", c)
		}
	}
	fmt.Fprintf(&b, "\ncells passed / expected: %d / %d (%d profiles: %s)", passed, expected, len(bmcsim.Profiles()), strings.Join(bmcsim.Profiles(), ", "))
	t.Log(b.String())
}

func auditLen(t *testing.T, path string) int {
	lines, err := bmcsim.ReadAudit(path)
	if err != nil {
		return 0 // nothing written yet
	}
	return len(lines)
}

// onlyOwnPaths: every mutating request the BMC received since line from
// went to the host's system or its virtual media device (the BMC's audit,
// not our logs), with the agent's User-Agent and the lease's epoch.
func onlyOwnPaths(t *testing.T, path string, from int, system, device string) error {
	lines, err := bmcsim.ReadAudit(path)
	if err != nil {
		return err
	}
	if from > len(lines) {
		from = len(lines)
	}
	for _, l := range lines[from:] {
		own := strings.HasPrefix(l.Path, system+"/") || l.Path == system || (device != "" && strings.HasPrefix(l.Path, device))
		if !own {
			return fmt.Errorf("a mutating request went elsewhere than %s and %s: %s %s", system, device, l.Method, l.Path)
		}
		if !strings.Contains(l.UserAgent, "epoch=11") {
			return fmt.Errorf("a mutating request without the lease's epoch: %+v", l)
		}
	}
	return nil
}

func systemState(st bmcsim.State, path string) (bmcsim.SystemState, bool) {
	for _, s := range st.Systems {
		if s.Path == path || strings.TrimPrefix(s.Path, "/redfish/v1/") == path {
			return s, true
		}
	}
	return bmcsim.SystemState{}, false
}

func mediaState(st bmcsim.State, path string) (bmcsim.MediaState, bool) {
	for _, m := range st.VirtualMedia {
		if m.Path == path {
			return m, true
		}
	}
	return bmcsim.MediaState{}, false
}

func checkProvisioned(st bmcsim.State, system, device, image string) error {
	m, ok := mediaState(st, device)
	if !ok {
		return fmt.Errorf("the simulator has no device %s: %+v", device, st.VirtualMedia)
	}
	if m.Image != image || !m.Inserted {
		return fmt.Errorf("device %s after provision: %+v; want %s inserted", device, m, image)
	}
	s, ok := systemState(st, system)
	if !ok {
		return fmt.Errorf("the simulator has no system %s", system)
	}
	if s.Power != "On" || s.LastBoot != "Cd" || s.BootOverride.Enabled == "Continuous" {
		return fmt.Errorf("system %s after provision: %+v; want On, booted once from Cd", system, s)
	}
	return nil
}

// netBootTargets is the boot target of each profile whose systems have no
// virtual media (the boot method chosen by default).
var netBootTargets = map[string]string{"blade": "UefiHttp", "no-vmedia": "Pxe"}

// checkNetBooted: the system is on and booted once from target; UEFI HTTP
// from the image's URL.
func checkNetBooted(st bmcsim.State, system, target, image string) error {
	s, ok := systemState(st, system)
	if !ok {
		return fmt.Errorf("the simulator has no system %s", system)
	}
	if s.Power != "On" || s.LastBoot != target || s.BootOverride.Enabled == "Continuous" || s.NetBoot.Target != target {
		return fmt.Errorf("system %s after provision: %+v; want On, booted once from %s", system, s, target)
	}
	if target == "UefiHttp" && (s.NetBoot.URL != image || s.BootOverride.HTTPBootURI != image) {
		return fmt.Errorf("system %s booted %q by UEFI HTTP (HttpBootUri %q); want %s", system, s.NetBoot.URL, s.BootOverride.HTTPBootURI, image)
	}
	return nil
}

func checkDeprovisioned(st bmcsim.State, system, device string) error {
	if device != "" {
		if m, ok := mediaState(st, device); !ok || m.Inserted {
			return fmt.Errorf("device %s after deprovision: %+v; want ejected", device, m)
		}
	}
	s, ok := systemState(st, system)
	if !ok || s.Power != "Off" {
		return fmt.Errorf("system %s after deprovision: %+v; want Off", system, s)
	}
	return nil
}

// othersUnchanged: no system but system and no device but device changed.
func othersUnchanged(before, after bmcsim.State, system, device string) error {
	for i, s := range before.Systems {
		if s.Path == system || i >= len(after.Systems) {
			continue
		}
		if after.Systems[i] != s {
			return fmt.Errorf("another system changed: %+v → %+v", s, after.Systems[i])
		}
	}
	for i, m := range before.VirtualMedia {
		if m.Path == device || i >= len(after.VirtualMedia) {
			continue
		}
		if after.VirtualMedia[i] != m {
			return fmt.Errorf("another virtual media device changed: %+v → %+v", m, after.VirtualMedia[i])
		}
	}
	return nil
}

// BenchmarkRegisterInspect: seconds per host (one system) of register +
// inspect through a fresh provisioner (login included), per profile, at
// bmcsim latency 0 and 200 ms:
//
//	go test -run '^$' -bench RegisterInspect -benchtime 1x ./agent/provisioner/direct/
func BenchmarkRegisterInspect(b *testing.B) {
	for _, lat := range []time.Duration{0, 200 * time.Millisecond} {
		for _, prof := range bmcsim.Profiles() {
			b.Run(fmt.Sprintf("latency=%s/profile=%s", lat, prof), func(b *testing.B) {
				sim, err := bmcsim.Start(bmcsim.Config{Hosts: 1, Profile: prof, Latency: lat})
				if err != nil {
					b.Fatal(err)
				}
				defer sim.Close()
				holder := fence.NewHolder(nil)
				holder.Set(fence.Lease{Rack: "r1", Holder: "t", Epoch: 1, TTL: time.Hour, Deadline: time.Now().Add(time.Hour)})
				addrs := sim.SystemAddresses(0)
				ctx := context.Background()
				hosts, spent := 0, time.Duration(0)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					for j, addr := range addrs {
						p, err := direct.New(direct.Config{Guard: guard.NewGuard(holder, nil), BMC: bmc.Options{Timeout: 30 * time.Second}})
						if err != nil {
							b.Fatal(err)
						}
						h := provisioner.Host{Name: fmt.Sprintf("h%d", j), Username: "admin", Password: "password", BMC: wire.BMC{Address: addr}}
						t0 := time.Now()
						if _, err := p.Register(ctx, h); err != nil {
							b.Fatal(err)
						}
						if _, err := p.Inspect(ctx, h); err != nil {
							b.Fatal(err)
						}
						spent += time.Since(t0)
						hosts++
						b.StopTimer()
						_ = p.Close(ctx)
						b.StartTimer()
					}
				}
				per := spent.Seconds() / float64(hosts)
				b.ReportMetric(per, "s/host")
				fmt.Printf("FIGURE register+inspect profile=%s latency=%s s/host=%.3f\n", prof, lat, per)
			})
		}
	}
}
