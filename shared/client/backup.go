package client

import (
	"context"
	"io"
	"net/http"
	"time"
)

// BackupTimeout bounds one backup download (100,000 hosts take seconds).
const BackupTimeout = 30 * time.Minute

// Backup streams a backup file of the cluster (GET /v1/cluster/snapshot,
// admin) into w. The answering member forwards to the leader. reset is
// called before each attempt: a retry on another member starts over (e.g.
// truncate the file). Check the file with coordinator.VerifyBackup.
func (c *Client) Backup(ctx context.Context, w io.Writer, reset func() error) error {
	r := request{method: http.MethodGet, path: "/v1/cluster/snapshot", timeout: BackupTimeout,
		sink: func(body io.Reader) error {
			if reset != nil {
				if err := reset(); err != nil {
					return err
				}
			}
			_, err := io.Copy(w, body)
			return err
		}}
	_, err := c.do(ctx, r, nil)
	return err
}
