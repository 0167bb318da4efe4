package bmcsim

import (
	"bufio"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ServeHTTP serves every BMC: the BMC is found from the local port the
// request arrived on, so one http.Server serves all listeners.
func (s *Sim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b := s.bmcFor(r)
	if b == nil {
		http.Error(w, "no BMC on this port", http.StatusNotFound)
		return
	}
	path := strings.TrimSuffix(r.URL.Path, "/")
	if strings.HasPrefix(path, "/sim/") {
		s.serveSim(w, r, b, path)
		return
	}
	arrived := time.Now()
	if dropIfRebooting(w, b) {
		return
	}

	b.mu.Lock()
	b.advance(arrived)
	during := ""
	if t := b.runningUpdate(); t != nil && r.Method != http.MethodGet && r.Method != http.MethodHead {
		during = t.id
	}
	fault, wake := b.fault, b.faultCh
	b.requests++
	if r.Method == http.MethodGet {
		if b.gets == nil {
			b.gets = map[string]int{}
		}
		key := path
		if x := r.URL.Query().Get("$expand"); x != "" {
			key += "?$expand=" + x
		}
		if x := r.URL.Query().Get("$select"); x != "" {
			key += "?$select=" + x
		}
		b.gets[key]++
	} else {
		if b.calls == nil {
			b.calls = map[string]int{}
		}
		b.calls[r.Method+" "+callPath(b.prof, path)]++
	}
	b.mu.Unlock()
	switch fault {
	case FaultHang:
		// Hold the request until the client gives up, the fault is healed
		// (then answer normally) or the simulator stops.
		select {
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		case <-wake:
		}
	case FaultHTTP500:
		s.delay()
		s.auditCall(b, r, arrived, nil, &statusWriter{status: http.StatusInternalServerError, during: during})
		writeError(w, http.StatusInternalServerError, "Base.1.0.InternalError", "simulated fault: http500")
		return
	}
	s.delay()

	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(io.LimitReader(r.Body, 1<<20))
	}
	rec := &statusWriter{ResponseWriter: w, during: during}
	s.serveRedfish(rec, r, b, path, body)
	b.mu.Lock()
	b.bytesOut += rec.written
	b.mu.Unlock()
	if r.Method != http.MethodGet && r.Method != http.MethodHead && !sessionCall(b.prof, path) {
		s.auditCall(b, r, arrived, body, rec)
	}
}

// sessionCall: a login or logout (or an attempt at one where the BMC has
// no session service): never audited, the body may be a password.
func sessionCall(p *profile, path string) bool {
	return strings.HasPrefix(path, v1+"/SessionService") ||
		p.sessions != "" && (path == p.sessions || strings.HasPrefix(path, p.sessions+"/"))
}

type statusWriter struct {
	http.ResponseWriter
	status int
	// task is the task the request started, during the update task
	// running when it arrived (AuditLine.Task, AuditLine.UpdateRunning).
	task, during string
	// user is the account the request was authenticated as, gen the
	// number of the password it used; setUser and setGen the account
	// whose password it set and that password's number.
	user, setUser string
	gen, setGen   uint64
	// written counts the body bytes written (State.BytesOut).
	written int64
}

// noteTask records, for the audit line, the task a request started.
func noteTask(w http.ResponseWriter, id string) {
	if sw, ok := w.(*statusWriter); ok {
		sw.task = id
	}
}

// notePassword records, for the audit line, the password a request set.
func notePassword(w http.ResponseWriter, user string, gen uint64) {
	if sw, ok := w.(*statusWriter); ok {
		sw.setUser, sw.setGen = user, gen
	}
}

// Hijack lets a rebooting BMC close the connection.
func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, http.ErrNotSupported
	}
	return hj.Hijack()
}

func (w *statusWriter) WriteHeader(c int) {
	if w.status == 0 {
		w.status = c
	}
	w.ResponseWriter.WriteHeader(c)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(p)
	w.written += int64(n)
	return n, err
}

func (w *statusWriter) code() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}

func (s *Sim) bmcFor(r *http.Request) *bmc {
	a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return nil
	}
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return nil
	}
	i := ta.Port - s.base
	if i < 0 || i >= len(s.bmcs) {
		return nil
	}
	return s.bmcs[i]
}

func (s *Sim) delay() {
	d := s.cfg.Latency
	if s.cfg.Jitter > 0 {
		d += rand.N(s.cfg.Jitter)
	}
	if d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-s.done:
			t.Stop()
		}
	}
}

func (s *Sim) serveSim(w http.ResponseWriter, r *http.Request, b *bmc, path string) {
	switch {
	case path == "/sim/state" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, b.state(), "")
	case path == "/sim/totals" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, s.Totals(), "")
	case path == "/sim/fault" && (r.Method == http.MethodPut || r.Method == http.MethodPost):
		var req struct {
			Mode string `json:"mode"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 4096)).Decode(&req); err != nil {
			http.Error(w, `body must be {"mode": "none"|"http500"|"hang"|"refuse-auth"}: `+err.Error(), http.StatusBadRequest)
			return
		}
		if !validFault(req.Mode) {
			http.Error(w, "mode "+strconv.Quote(req.Mode)+` is not one of "none", "http500", "hang", "refuse-auth"`, http.StatusBadRequest)
			return
		}
		b.setFault(req.Mode)
		writeJSON(w, http.StatusOK, b.state(), "")
	case path == "/sim/fault" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, map[string]string{"mode": b.state().Fault}, "")
	case path == "/sim/accounts":
		s.serveSimAccounts(w, r, b)
	case path == "/sim/knobs" && (r.Method == http.MethodGet || r.Method == http.MethodPut || r.Method == http.MethodPost):
		s.serveKnobs(w, r, b)
	case path == "/sim/power" && (r.Method == http.MethodPut || r.Method == http.MethodPost):
		s.serveSimPower(w, r, b)
	default:
		http.Error(w, "simulator control: GET /sim/state, GET /sim/totals, PUT /sim/fault, GET or PUT /sim/knobs, GET or PUT /sim/accounts, POST /sim/power", http.StatusNotFound)
	}
}

func validFault(m string) bool {
	switch m {
	case FaultNone, FaultHTTP500, FaultHang, FaultRefuseAuth:
		return true
	}
	return false
}

// authorized checks X-Auth-Token against the BMC's sessions, or basic auth
// against its account table; it returns the account the request acts as
// and the number of the password it authenticated with (a session's: the
// one it logged in with).
func (s *Sim) authorized(r *http.Request, b *bmc) (string, uint64, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fault == FaultRefuseAuth {
		return "", 0, false
	}
	if tok := r.Header.Get("X-Auth-Token"); tok != "" {
		return b.sessionByToken(tok)
	}
	if u, p, ok := r.BasicAuth(); ok {
		if !b.checkLogin(u, p, time.Now(), r.UserAgent()) {
			return u, 0, false
		}
		return u, b.passwordGen(u), true
	}
	return "", 0, false
}

func (s *Sim) serveRedfish(w http.ResponseWriter, r *http.Request, b *bmc, path string, body []byte) {
	// Unauthenticated: the service root (Redfish spec) and login.
	switch {
	case (path == "/redfish" || path == v1) && r.Method == http.MethodGet:
		if path == "/redfish" {
			writeJSON(w, http.StatusOK, doc{"v1": v1 + "/"}, "")
			return
		}
		s.get(w, b, v1)
		return
	case path == b.prof.sessions && b.prof.sessions != "" && r.Method == http.MethodPost:
		s.login(w, b, body, r.UserAgent())
		return
	case b.prof.sessions == "" && strings.HasPrefix(path, v1+"/SessionService"):
		// No session service: a login attempt finds nothing (HTTP Basic only).
		writeError(w, http.StatusNotFound, "Base.1.0.ResourceMissingAtURI", "no session service on this BMC: use HTTP Basic authentication")
		return
	}
	user, gen, ok := s.authorized(r, b)
	if !ok {
		w.Header().Set("WWW-Authenticate", `Basic realm="bmcsim"`)
		how := "use HTTP Basic authentication"
		if b.prof.sessions != "" {
			how = "log in first (POST " + b.prof.sessions + ") or use HTTP Basic authentication"
		}
		writeError(w, http.StatusUnauthorized, "Base.1.0.NoValidSession", how)
		return
	}
	if sw, ok := w.(*statusWriter); ok {
		sw.user, sw.gen = user, gen
	}
	if isAccountPath(path) {
		s.serveAccounts(w, r, b, path, user, body)
		return
	}
	if isEventPath(path) {
		s.serveEvents(w, r, b, path, body)
		return
	}
	if s.refuseByRole(w, r, b, path, user) {
		return
	}
	if s.serveTask(w, r, b, path) {
		return
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		if q := r.URL.Query(); q.Has("$expand") || q.Has("$select") {
			s.getQuery(w, b, path, q)
			return
		}
		s.get(w, b, path)
		return
	}
	s.mutate(w, r, b, path, body)
}

func (s *Sim) login(w http.ResponseWriter, b *bmc, body []byte, ua string) {
	var req struct{ UserName, Password string }
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "Base.1.0.MalformedJSON", "body must be {\"UserName\": …, \"Password\": …}")
		return
	}
	b.mu.Lock()
	refuse := b.fault == FaultRefuseAuth || !b.checkLogin(req.UserName, req.Password, time.Now(), ua)
	gen := b.passwordGen(req.UserName)
	b.mu.Unlock()
	if refuse {
		writeError(w, http.StatusUnauthorized, "Base.1.0.InsufficientPrivilege", "wrong user name or password")
		return
	}
	var raw [16]byte
	_, _ = crand.Read(raw[:])
	b.mu.Lock()
	sess := b.addSession(s.cfg.MaxSessions, hex.EncodeToString(raw[:]), req.UserName, gen)
	b.logins++
	b.mu.Unlock()
	loc := b.prof.sessions + "/" + sess.id
	w.Header().Set("X-Auth-Token", sess.token)
	w.Header().Set("Location", loc)
	writeJSON(w, http.StatusCreated, doc{"@odata.id": loc, "@odata.type": "#Session.v1_0_0.Session", "Id": sess.id,
		"Name": "User Session", "UserName": req.UserName}, "")
}

func writeJSON(w http.ResponseWriter, code int, v any, etag string) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeBytes(w, code, b, etag)
}

func writeBytes(w http.ResponseWriter, code int, b []byte, etag string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("OData-Version", "4.0")
	if etag != "" {
		h.Set("ETag", etag)
	}
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

func writeError(w http.ResponseWriter, code int, id, msg string) {
	writeErrorRelated(w, code, id, msg)
}

// writeErrorRelated is writeError naming the properties at fault
// (ExtendedInfo RelatedProperties, JSON pointers such as "#/Image").
func writeErrorRelated(w http.ResponseWriter, code int, id, msg string, related ...string) {
	info := doc{"MessageId": id, "Message": msg}
	if len(related) > 0 {
		info["RelatedProperties"] = related
	}
	writeJSON(w, code, doc{"error": doc{"code": id, "message": msg, "@Message.ExtendedInfo": []doc{info}}}, "")
}
