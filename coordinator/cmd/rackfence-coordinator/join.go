package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// joinCluster asks the member at --join to add this node; a follower
// forwards it to the leader. It retries until it succeeds or ctx ends.
func joinCluster(ctx context.Context, o *Config, advertise string, tlsClient *tls.Config, log *slog.Logger) error {
	token, err := joinToken(o)
	if err != nil {
		return err
	}
	token, _ = wire.ParseToken(token)
	body, _ := json.Marshal(wire.JoinRequest{ID: o.nodeID, RaftAddr: o.raftAddr, HTTPAddr: advertise})
	client := &http.Client{Timeout: 40 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsClient}}
	url := strings.TrimRight(o.join, "/") + "/v1/cluster/join"
	for attempt := 1; ; attempt++ {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err == nil {
			msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				log.Info("joined the cluster", "via", o.join)
				return nil
			}
			if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusBadRequest {
				return fmt.Errorf("join via %s refused (%d): %s", o.join, resp.StatusCode, strings.TrimSpace(string(msg)))
			}
			err = fmt.Errorf("%d: %s", resp.StatusCode, strings.TrimSpace(string(msg)))
		}
		log.Warn("join attempt failed; retrying", "via", o.join, "attempt", attempt, "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}
