package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// apiClient is Call's HTTP client: plain HTTP, a generous timeout.
var apiClient = &http.Client{Timeout: 60 * time.Second}

// Call sends a request to a coordinator's API (plain HTTP: an in-process
// member) and decodes a JSON
// answer below 300 into out (when not nil); it returns the status code and
// the raw body (a transport error: code 0 and the error's text). body is
// nil, a string, a []byte or a value sent as JSON; token, when not empty,
// is sent as a bearer token.
func Call(t testing.TB, method, url, token string, body, out any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := apiClient.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: decode %s: %v", method, url, raw, err)
		}
	}
	return resp.StatusCode, raw
}

// Must is Call that fails the test unless the status code is want.
func Must(t testing.TB, want int, method, url, token string, body, out any) []byte {
	t.Helper()
	code, raw := Call(t, method, url, token, body, out)
	if code != want {
		t.Fatalf("%s %s: want %d, got %d: %s", method, url, want, code, raw)
	}
	return raw
}

// ErrBody decodes an API error answer, failing the test when raw is not one.
func ErrBody(t testing.TB, raw []byte) wire.ErrorDetail {
	t.Helper()
	var eb wire.ErrorBody
	if err := json.Unmarshal(raw, &eb); err != nil || eb.Error.Code == "" {
		t.Fatalf("not an error body: %s", raw)
	}
	return eb.Error
}
