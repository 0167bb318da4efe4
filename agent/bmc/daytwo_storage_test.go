package bmc

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/shared/fence"
	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// Storage on each vendor's shape: controllers, drives and volumes; a
// RAID1 built at once (iLO) or through a job (iDRAC,
// @Redfish.OperationApplyTime Immediate); requests checked before they
// are sent; a drive in a volume refused by the BMC; erase by
// Volume.Initialize and by Drive.SecureErase; OpenBMC's NVMe drive that
// cannot be erased named.
func TestDayTwoStorage(t *testing.T) {
	for _, tc := range []struct {
		profile, storage string
		drives           []string
		applyTime        string
		byTask           bool
	}{
		{"ilo", "DE00A000", []string{"0", "1"}, "", false},
		{"idrac", "RAID.Integrated.1-1", []string{"Disk.Bay.0:Enclosure.Internal.0-1:RAID.Integrated.1-1", "Disk.Bay.1:Enclosure.Internal.0-1:RAID.Integrated.1-1"}, "Immediate", true},
	} {
		t.Run(tc.profile, func(t *testing.T) {
			r := startDayTwo(t, tc.profile, bmcsim.Knobs{Speed: 6000})
			ctx := testCtx(t)
			ctrls, err := r.c.Storage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			sc, err := r.c.pickStorage(ctrls, "")
			if err != nil || sc.ID != tc.storage || len(sc.Drives) != 2 || len(sc.Volumes) != 0 || !strings.Contains(strings.Join(sc.RAIDTypes, ","), "RAID1") {
				t.Fatalf("storage = %+v, %v", sc, err)
			}
			before := len(r.mutations(t))
			for _, bad := range []struct {
				req  VolumeRequest
				says string
			}{
				{VolumeRequest{RAIDType: "RAID50", Drives: tc.drives}, "builds RAID0, RAID1, RAID5, RAID6, RAID10, not RAID50"},
				{VolumeRequest{RAIDType: "RAID1", Drives: []string{tc.drives[0], "Disk.Bay.9"}}, `has no drive "Disk.Bay.9"`},
				{VolumeRequest{Storage: "Nope", RAIDType: "RAID1", Drives: tc.drives}, `no storage controller "Nope"`},
			} {
				if _, err := r.c.CreateVolume(ctx, r.g, "h0", bad.req); !errors.Is(err, errclass.ErrFailed) || !strings.Contains(err.Error(), bad.says) {
					t.Fatalf("CreateVolume(%+v) = %v; want errclass.ErrFailed saying %q", bad.req, err, bad.says)
				}
			}
			if n := len(r.mutations(t)); n != before {
				t.Fatalf("a refused volume request reached the BMC (%d requests, %d before)", n, before)
			}
			// The BMC's own refusal, with its words.
			if _, err := r.c.CreateVolume(ctx, r.g, "h0", VolumeRequest{RAIDType: "RAID5", Drives: tc.drives}); !errors.Is(err, errclass.ErrFailed) ||
				!strings.Contains(err.Error(), "RAID5 needs at least 3 drives") {
				t.Fatalf("RAID5 of 2 drives: %v", err)
			}

			op, err := r.c.CreateVolume(ctx, r.g, "h0", VolumeRequest{Name: "os", RAIDType: "RAID1", Drives: tc.drives})
			if err != nil || op.ApplyTime != tc.applyTime || op.Done == tc.byTask || (op.Task != "") != tc.byTask {
				t.Fatalf("CreateVolume = %+v, %v", op, err)
			}
			if op.Task != "" {
				if st, err := r.c.WaitTask(ctx, op.Task, time.Minute); err != nil || !st.Succeeded() {
					t.Fatalf("volume job: %+v, %v", st, err)
				}
			} else if !strings.HasPrefix(op.Volume, sc.VolumesURI+"/") {
				t.Fatalf("volume made at once: %+v", op)
			}
			ctrls, err = r.c.Storage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			sc, _ = r.c.pickStorage(ctrls, tc.storage)
			if len(sc.Volumes) != 1 || sc.Volumes[0].RAIDType != "RAID1" || len(sc.Volumes[0].Drives) != 2 || len(sc.Drives[0].Volumes) != 1 || sc.Volumes[0].Initialize == "" {
				t.Fatalf("after the create: %+v", sc)
			}
			vol := sc.Volumes[0]

			// The drive offers SecureErase; the BMC refuses it while the
			// drive is in a volume, and says so.
			if _, err := r.c.Erase(ctx, r.g, "h0", tc.drives[0]); !errors.Is(err, errclass.ErrFailed) || !strings.Contains(err.Error(), "delete the volume first") {
				t.Fatalf("erase of a drive in a volume: %v", err)
			}
			if tc.profile == "ilo" { // volume 1 and drive 1: an Id naming both
				if _, err := r.c.Erase(ctx, r.g, "h0", vol.ID); !errors.Is(err, errclass.ErrFailed) ||
					!strings.Contains(err.Error(), `"1" names drive Systems/1/Storage/DE00A000/Drives/1 and volume Systems/1/Storage/DE00A000/Volumes/1: give the URI`) {
					t.Fatalf("erase by an ambiguous Id: %v", err)
				}
			}
			op, err = r.c.Erase(ctx, r.g, "h0", vol.URI)
			if err != nil || op.Method != "Volume.Initialize" || op.InitializeType != "Slow" || op.Task == "" {
				t.Fatalf("erase of the volume: %+v, %v", op, err)
			}
			if st, err := r.c.WaitTask(ctx, op.Task, time.Minute); err != nil || !st.Succeeded() {
				t.Fatalf("initialize: %+v, %v", st, err)
			}
			op, err = r.c.DeleteVolume(ctx, r.g, "h0", vol.URI)
			if err != nil || !op.Done || op.Task != "" {
				t.Fatalf("DeleteVolume = %+v, %v", op, err)
			}
			op, err = r.c.Erase(ctx, r.g, "h0", tc.drives[1])
			if err != nil || op.Method != "Drive.SecureErase" || op.Task == "" {
				t.Fatalf("erase of a free drive: %+v, %v", op, err)
			}
			if st, err := r.c.WaitTask(ctx, op.Task, time.Minute); err != nil || !st.Succeeded() {
				t.Fatalf("secure erase: %+v, %v", st, err)
			}
			st := r.sim.State(0)
			if len(st.Volumes) != 0 || st.Drives[1].Erased != 1 || st.Drives[0].Erased != 0 {
				t.Fatalf("BMC after: volumes %+v drives %+v", st.Volumes, st.Drives)
			}
			for _, l := range r.mutations(t)[before:] {
				if !strings.Contains(l.UserAgent, "epoch=7") {
					t.Fatalf("a mutation without the epoch: %+v", l)
				}
			}
		})
	}
	t.Run("openbmc", func(t *testing.T) {
		r := startDayTwo(t, "openbmc", bmcsim.Knobs{})
		ctx := testCtx(t)
		ctrls, err := r.c.Storage(ctx)
		if err != nil || len(ctrls) != 1 || len(ctrls[0].Drives) != 1 || ctrls[0].Drives[0].ID != "nvme0" || ctrls[0].Drives[0].SecureErase != "" {
			t.Fatalf("storage = %+v, %v", ctrls, err)
		}
		if _, err := r.c.CreateVolume(ctx, r.g, "h0", VolumeRequest{Storage: "1", RAIDType: "RAID0", Drives: []string{"nvme0"}}); !errors.Is(err, errclass.ErrUnsupported) ||
			!strings.Contains(err.Error(), "storage 1 (Storage) has no Volumes collection") {
			t.Fatalf("CreateVolume: %v", err)
		}
		if _, err := r.c.Erase(ctx, r.g, "h0", "nvme0"); !errors.Is(err, errclass.ErrUnsupported) ||
			!strings.Contains(err.Error(), "drive nvme0 (Systems/system/Storage/1/Drives/nvme0) cannot be erased through this BMC: it offers no #Drive.SecureErase and belongs to no volume offering #Volume.Initialize") {
			t.Fatalf("Erase: %v", err)
		}
	})
}

// Drives a storage links under Chassis, served without Id (several BMCs
// do; no simulator profile does): listed with their path's last segment
// as Id, and erased by their SecureErase action.
func TestDayTwoStorageChassisDrives(t *testing.T) {
	const (
		sys   = "/redfish/v1/Systems/1"
		drive = "/redfish/v1/Chassis/1/Drives/Disk0"
	)
	f := newFakeRF(t, map[string]map[string]any{"/redfish/v1": fakeRoot(false),
		sys + "/Storage":      coll(sys + "/Storage/SATA"),
		sys + "/Storage/SATA": {"@odata.id": sys + "/Storage/SATA", "Name": "SATA", "Drives": odatas(drive)},
		drive: {"@odata.id": drive, "Name": "Disk 0", "CapacityBytes": 480103981056, "MediaType": "SSD",
			"Actions": map[string]any{"#Drive.SecureErase": map[string]any{"target": drive + "/Actions/Drive.SecureErase"}}},
	})
	fakeSystem(f, sys, "/redfish/v1/Managers/1", map[string]any{"Storage": odata(sys + "/Storage")})
	f.actions[drive+"/Actions/Drive.SecureErase"] = func(*fakeRF, map[string]any) int { return http.StatusNoContent }
	c, err := Dial(testCtx(t), Target{Address: f.addr(sys), Username: "admin", Password: "password"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctrls, err := c.Storage(testCtx(t))
	if err != nil || len(ctrls) != 1 || ctrls[0].ID != "SATA" || len(ctrls[0].Drives) != 1 {
		t.Fatalf("Storage = %+v, %v", ctrls, err)
	}
	if d := ctrls[0].Drives[0]; d.ID != "Disk0" || d.URI != drive || d.CapacityBytes != 480103981056 {
		t.Fatalf("drive = %+v", d)
	}
	g, _ := leasedGuard(time.Minute, nil)
	op, err := c.Erase(testCtx(t), g, "h0", "Disk0")
	if err != nil || op.Method != "Drive.SecureErase" || !op.Done || op.Target != drive {
		t.Fatalf("Erase = %+v, %v", op, err)
	}
	if len(f.patches) != 1 || f.patches[0].Path != drive+"/Actions/Drive.SecureErase" {
		t.Fatalf("requests sent: %+v", f.patches)
	}
}

// Every day-two mutation goes through the guard: without a lease each is
// refused with ErrFenced and nothing reaches the BMC.
func TestDayTwoMutationsNeedTheLease(t *testing.T) {
	r := startDayTwo(t, "ilo", bmcsim.Knobs{})
	ctx := testCtx(t)
	g := guard.NewGuard(fence.NewHolder(nil), nil)
	before := r.sim.State(0).Mutations
	for name, call := range map[string]func() error{
		"ApplyBIOS": func() error {
			_, err := r.c.ApplyBIOS(ctx, g, "h0", map[string]string{"Sriov": "Disabled"})
			return err
		},
		"StartUpdate": func() error {
			_, err := r.c.StartUpdate(ctx, g, "h0", UpdateRequest{Component: "2", ImageURL: "http://images/U46_v1.80.bin"})
			return err
		},
		"CreateVolume": func() error {
			_, err := r.c.CreateVolume(ctx, g, "h0", VolumeRequest{RAIDType: "RAID1", Drives: []string{"0", "1"}})
			return err
		},
		"Erase":        func() error { _, err := r.c.Erase(ctx, g, "h0", "0"); return err },
		"DeleteVolume": func() error { _, err := r.c.DeleteVolume(ctx, g, "h0", "nope"); return err },
	} {
		err := call()
		if name == "DeleteVolume" { // no such volume: refused before the guard
			if !errors.Is(err, errclass.ErrFailed) {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		if !errors.Is(err, guard.ErrFenced) {
			t.Errorf("%s without a lease: %v; want ErrFenced", name, err)
		}
	}
	if st := r.sim.State(0); st.Mutations != before || len(st.Tasks) != 0 {
		t.Fatalf("refused calls reached the BMC: mutations %d → %d, tasks %+v", before, st.Mutations, st.Tasks)
	}
}

// Over IPMI every day-two call is errclass.ErrUnsupported, at once.
func TestDayTwoOverIPMIUnsupported(t *testing.T) {
	c := &Conn{proto: "ipmi", addr: "10.0.0.1:623", opts: Options{}.withDefaults()}
	ctx := testCtx(t)
	g, _ := leasedGuard(time.Minute, nil)
	var d DayTwo = c
	for name, call := range map[string]func() error{
		"BIOS":              func() error { _, err := d.BIOS(ctx); return err },
		"BIOSRegistry":      func() error { _, err := d.BIOSRegistry(ctx); return err },
		"BIOSNames":         func() error { _, err := d.BIOSNames(ctx, map[string]bool{SettingSMT: true}); return err },
		"ApplyBIOS":         func() error { _, err := d.ApplyBIOS(ctx, g, "h0", map[string]string{"X": "1"}); return err },
		"BIOSResult":        func() error { _, err := d.BIOSResult(ctx, map[string]string{"X": "1"}); return err },
		"FirmwareInventory": func() error { _, err := d.FirmwareInventory(ctx); return err },
		"StartUpdate": func() error {
			_, err := d.StartUpdate(ctx, g, "h0", UpdateRequest{Component: "BIOS", ImageURL: "http://i/b.bin"})
			return err
		},
		"FinishUpdate": func() error {
			_, err := d.FinishUpdate(ctx, &Update{Component: "/x", Task: "/t"}, time.Minute)
			return err
		},
		"Task":     func() error { _, err := d.Task(ctx, "/t"); return err },
		"WaitTask": func() error { _, err := d.WaitTask(ctx, "/t", time.Minute); return err },
		"Storage":  func() error { _, err := d.Storage(ctx); return err },
		"CreateVolume": func() error {
			_, err := d.CreateVolume(ctx, g, "h0", VolumeRequest{RAIDType: "RAID1", Drives: []string{"0"}})
			return err
		},
		"DeleteVolume": func() error { _, err := d.DeleteVolume(ctx, g, "h0", "1"); return err },
		"Erase":        func() error { _, err := d.Erase(ctx, g, "h0", "0"); return err },
	} {
		if err := call(); !errors.Is(err, errclass.ErrUnsupported) || !strings.Contains(err.Error(), "10.0.0.1:623") {
			t.Errorf("%s over IPMI: %v; want errclass.ErrUnsupported naming the BMC", name, err)
		}
	}
}
