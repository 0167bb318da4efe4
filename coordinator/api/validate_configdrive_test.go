package api

import (
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// A status's config drive: a read drive and an unread one are accepted; a
// size, publication or read that cannot be is refused naming the field.
func TestValidateReportConfigDrive(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		cd    wire.ConfigDriveStatus
		field string // "" accepted
	}{
		{wire.ConfigDriveStatus{Size: 4096, PublishedAt: t0, ReadAt: t0.Add(time.Second)}, ""},
		{wire.ConfigDriveStatus{Size: 4096, PublishedAt: t0}, ""},
		{wire.ConfigDriveStatus{Server: "https://10.0.0.5:7482", Size: 4096, PublishedAt: t0}, ""},
		{wire.ConfigDriveStatus{Server: "10.0.0.5:7482", Size: 4096, PublishedAt: t0}, "status.configDrive.server"},
		{wire.ConfigDriveStatus{Server: "https://10.0.0.5:7482/drives?t=1", Size: 4096, PublishedAt: t0}, "status.configDrive.server"},
		{wire.ConfigDriveStatus{PublishedAt: t0}, "status.configDrive.size"},
		{wire.ConfigDriveStatus{Size: 4096}, "status.configDrive.publishedAt"},
		{wire.ConfigDriveStatus{Size: 4096, PublishedAt: t0, ReadAt: t0.Add(-time.Second)}, "status.configDrive.readAt"},
	} {
		cd := c.cd
		err := validateReport(&wire.StatusReport{Epoch: 1, Status: wire.HostStatus{ProvisioningState: wire.StateProvisioned, ConfigDrive: &cd}})
		if c.field == "" {
			if err != nil {
				t.Errorf("%+v refused: %v", c.cd, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%+v accepted, want a refusal of %s", c.cd, c.field)
		} else if d := refusal(err); d.Field != c.field || d.Code != wire.CodeBadRequest {
			t.Errorf("%+v: %v, want a refusal of %s", c.cd, err, c.field)
		}
	}
}
