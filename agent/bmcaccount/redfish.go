package bmcaccount

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// rf is a small Redfish client for the account and session services,
// with HTTP Basic auth (a password change must not depend on a session
// the change may end).
type rf struct {
	base   string // scheme://host:port
	hc     *http.Client
	ua     func(context.Context) string
	readTO time.Duration
}

// httpError is a BMC's non-2xx answer; the message is the BMC's, never
// a request body.
type httpError struct {
	Status    int
	MessageID string
	Message   string
	Path      string
	Method    string
}

func (e *httpError) Error() string {
	msg := e.Message
	if e.MessageID != "" {
		msg = e.MessageID + ": " + msg
	}
	return fmt.Sprintf("%s %s: HTTP %d %s", e.Method, e.Path, e.Status, msg)
}

func statusOf(err error) int {
	if he, ok := err.(*httpError); ok {
		return he.Status
	}
	return 0
}

func newRF(addr string, insecure bool, ua func(context.Context) string, readTO time.Duration) (*rf, error) {
	s, err := wire.ParseBMCAddress(addr)
	if err != nil {
		return nil, err
	}
	if s.Protocol != "redfish" {
		return nil, errNotRedfish
	}
	scheme := "https"
	if s.Insecure {
		scheme = "http"
	}
	hp := s.HostPort()
	if _, _, err := net.SplitHostPort(hp); err != nil {
		hp = net.JoinHostPort(s.Host, "443")
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: insecure} //nolint:gosec // the host's disableCertificateVerification
	tr.MaxIdleConnsPerHost = 1
	return &rf{base: scheme + "://" + hp, hc: &http.Client{Transport: tr}, ua: ua, readTO: readTO}, nil
}

// do sends one request as user/password and decodes a 2xx JSON answer
// into out (nil: discarded). The body is never put in an error.
func (r *rf) do(ctx context.Context, method, path, user, password string, body, out any) (http.Header, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth(user, password)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.ua != nil {
		req.Header.Set("User-Agent", r.ua(ctx))
	}
	resp, err := r.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		he := &httpError{Status: resp.StatusCode, Path: path, Method: method}
		var eb struct {
			Error struct {
				Code    string `json:"code"`
				Message string `json:"message"`
				Info    []struct {
					MessageID string `json:"MessageId"`
					Message   string `json:"Message"`
				} `json:"@Message.ExtendedInfo"`
			} `json:"error"`
		}
		if json.Unmarshal(raw, &eb) == nil {
			he.MessageID, he.Message = eb.Error.Code, eb.Error.Message
			if len(eb.Error.Info) > 0 {
				he.MessageID, he.Message = eb.Error.Info[0].MessageID, eb.Error.Info[0].Message
			}
		}
		return resp.Header, he
	}
	if out != nil && len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			return resp.Header, fmt.Errorf("%s %s: answer is not JSON: %w", method, path, err)
		}
	}
	return resp.Header, nil
}

func (r *rf) read(ctx context.Context, path, user, password string, out any) error {
	ctx, cancel := context.WithTimeout(ctx, r.readTO)
	defer cancel()
	_, err := r.do(ctx, http.MethodGet, path, user, password, nil, out)
	return err
}

type odataRef struct {
	ID string `json:"@odata.id"`
}

// service is what the agent reads of a BMC's account service.
type service struct {
	Accounts odataRef
	Policy   Policy
	sessions string // Links.Sessions of the service root ("" when none)
}

// Policy is a BMC's published password policy.
type Policy struct {
	MinPasswordLength int
	MaxPasswordLength int
	// Specials are the special characters to draw from ("": the default
	// set); IPMI passwords avoid '#', which ipmitool's exec reads as a
	// comment.
	Specials string
}

func (r *rf) service(ctx context.Context, user, password string) (*service, error) {
	var root struct {
		AccountService odataRef
		Links          struct{ Sessions odataRef }
	}
	if err := r.read(ctx, "/redfish/v1/", user, password, &root); err != nil {
		return nil, err
	}
	if root.AccountService.ID == "" {
		return nil, errNoAccountService
	}
	var as struct {
		Accounts          odataRef
		MinPasswordLength int
		MaxPasswordLength int
	}
	if err := r.read(ctx, root.AccountService.ID, user, password, &as); err != nil {
		return nil, err
	}
	if as.Accounts.ID == "" {
		return nil, errNoAccountService
	}
	return &service{Accounts: as.Accounts, Policy: Policy{MinPasswordLength: as.MinPasswordLength, MaxPasswordLength: as.MaxPasswordLength},
		sessions: root.Links.Sessions.ID}, nil
}

// slot is one member of the Accounts collection.
type slot struct {
	path     string
	UserName string
	Enabled  bool
	RoleID   string `json:"RoleId"`
}

// accounts reads every member of the Accounts collection.
func (r *rf) accounts(ctx context.Context, coll, user, password string) ([]slot, error) {
	var c struct{ Members []odataRef }
	if err := r.read(ctx, coll, user, password, &c); err != nil {
		return nil, err
	}
	out := make([]slot, 0, len(c.Members))
	for _, m := range c.Members {
		var s slot
		if err := r.read(ctx, m.ID, user, password, &s); err != nil {
			return nil, err
		}
		s.path = m.ID
		out = append(out, s)
	}
	return out, nil
}

// sessionsOf lists the sessions of account user ("" sessions path: none).
func (r *rf) sessionsOf(ctx context.Context, coll, account, user, password string) ([]string, error) {
	if coll == "" {
		return nil, nil
	}
	var c struct{ Members []odataRef }
	if err := r.read(ctx, coll, user, password, &c); err != nil {
		return nil, err
	}
	var out []string
	for _, m := range c.Members {
		var s struct{ UserName string }
		if err := r.read(ctx, m.ID, user, password, &s); err != nil {
			if statusOf(err) == http.StatusNotFound {
				continue // ended meanwhile
			}
			return nil, err
		}
		if s.UserName == account {
			out = append(out, m.ID)
		}
	}
	return out, nil
}

// loginWorks reports whether user/password is accepted (a GET of the
// service root's Systems; 401 and 403 are "no").
func (r *rf) loginWorks(ctx context.Context, user, password string) (bool, error) {
	err := r.read(ctx, "/redfish/v1/Systems", user, password, nil)
	switch st := statusOf(err); {
	case err == nil:
		return true, nil
	case st == http.StatusUnauthorized || st == http.StatusForbidden:
		return false, nil
	default:
		return false, err
	}
}

func trimID(p string) string { return strings.TrimSuffix(p, "/") }

func itoa(n int) string { return strconv.Itoa(n) }
