package bmcsim

import (
	"bytes"
	crand "crypto/rand"
	"crypto/subtle"
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

	b.mu.Lock()
	fault, wake := b.fault, b.faultCh
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
		s.auditCall(b, r, arrived, nil, http.StatusInternalServerError)
		writeError(w, http.StatusInternalServerError, "Base.1.0.InternalError", "simulated fault: http500")
		return
	}
	s.delay()

	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(io.LimitReader(r.Body, 1<<20))
	}
	rec := &statusWriter{ResponseWriter: w}
	s.serveRedfish(rec, r, b, path, body)
	if r.Method != http.MethodGet && r.Method != http.MethodHead && !strings.HasPrefix(path, v1+"/SessionService") {
		s.auditCall(b, r, arrived, body, rec.code())
	}
}

type statusWriter struct {
	http.ResponseWriter
	status int
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
	return w.ResponseWriter.Write(p)
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
	default:
		http.Error(w, "simulator control: GET /sim/state, PUT /sim/fault", http.StatusNotFound)
	}
}

func validFault(m string) bool {
	switch m {
	case FaultNone, FaultHTTP500, FaultHang, FaultRefuseAuth:
		return true
	}
	return false
}

// authorized checks X-Auth-Token against the BMC's sessions, or basic auth.
func (s *Sim) authorized(r *http.Request, b *bmc) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fault == FaultRefuseAuth {
		return false
	}
	if tok := r.Header.Get("X-Auth-Token"); tok != "" {
		return b.sessionByToken(tok)
	}
	if u, p, ok := r.BasicAuth(); ok {
		return s.credentialsOK(u, p)
	}
	return false
}

func (s *Sim) credentialsOK(u, p string) bool {
	uok := subtle.ConstantTimeCompare([]byte(u), []byte(s.cfg.Username)) == 1
	pok := subtle.ConstantTimeCompare([]byte(p), []byte(s.cfg.Password)) == 1
	return uok && pok
}

func (s *Sim) serveRedfish(w http.ResponseWriter, r *http.Request, b *bmc, path string, body []byte) {
	// Unauthenticated: the service root (Redfish spec) and login.
	switch {
	case (path == "/redfish" || path == v1) && r.Method == http.MethodGet:
		if path == "/redfish" {
			writeJSON(w, http.StatusOK, doc{"v1": v1 + "/"}, "")
			return
		}
		writeJSON(w, http.StatusOK, serviceRoot(), "")
		return
	case path == v1+"/SessionService/Sessions" && r.Method == http.MethodPost:
		s.login(w, b, body)
		return
	}
	if !s.authorized(r, b) {
		w.Header().Set("WWW-Authenticate", `Basic realm="bmcsim"`)
		writeError(w, http.StatusUnauthorized, "Base.1.0.NoValidSession", "log in first: POST "+v1+"/SessionService/Sessions, or use basic auth")
		return
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		s.get(w, b, path)
		return
	}
	s.mutate(w, r, b, path, body)
}

func (s *Sim) login(w http.ResponseWriter, b *bmc, body []byte) {
	var req struct{ UserName, Password string }
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "Base.1.0.MalformedJSON", "body must be {\"UserName\": …, \"Password\": …}")
		return
	}
	b.mu.Lock()
	refuse := b.fault == FaultRefuseAuth
	b.mu.Unlock()
	if refuse || !s.credentialsOK(req.UserName, req.Password) {
		writeError(w, http.StatusUnauthorized, "Base.1.0.InsufficientPrivilege", "wrong user name or password")
		return
	}
	var raw [16]byte
	_, _ = crand.Read(raw[:])
	b.mu.Lock()
	sess := b.addSession(s.cfg.MaxSessions, hex.EncodeToString(raw[:]))
	b.mu.Unlock()
	loc := v1 + "/SessionService/Sessions/" + sess.id
	w.Header().Set("X-Auth-Token", sess.token)
	w.Header().Set("Location", loc)
	writeJSON(w, http.StatusCreated, with(resource(loc, "Session", sess.id, "User Session"), "UserName", req.UserName), "")
}

func (s *Sim) get(w http.ResponseWriter, b *bmc, path string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var d doc
	etag := ""
	sys := v1 + "/Systems/1"
	switch path {
	case v1 + "/SessionService":
		d = sessionService()
	case v1 + "/SessionService/Sessions":
		ids := make([]string, 0, len(b.sessions))
		for _, x := range b.sessions {
			ids = append(ids, v1+"/SessionService/Sessions/"+x.id)
		}
		d = collection(path, "SessionCollection", "Sessions", ids...)
	case v1 + "/Systems":
		d = collection(path, "ComputerSystemCollection", "Systems", sys)
	case sys:
		d, etag = b.system(), b.etag()
	case sys + "/Processors":
		d = collection(path, "ProcessorCollection", "Processors", path+"/CPU1", path+"/CPU2")
	case sys + "/Processors/CPU1":
		d = processor(1)
	case sys + "/Processors/CPU2":
		d = processor(2)
	case sys + "/Memory":
		d = collection(path, "MemoryCollection", "Memory", path+"/DIMM1", path+"/DIMM2", path+"/DIMM3", path+"/DIMM4")
	case sys + "/Memory/DIMM1", sys + "/Memory/DIMM2", sys + "/Memory/DIMM3", sys + "/Memory/DIMM4":
		d = dimm(int(path[len(path)-1] - '0'))
	case sys + "/Storage":
		d = collection(path, "StorageCollection", "Storage", path+"/1")
	case sys + "/Storage/1":
		d = storage()
	case sys + "/Storage/1/Drives/Disk1":
		d = drive(b.index)
	case sys + "/EthernetInterfaces":
		d = collection(path, "EthernetInterfaceCollection", "Ethernet Interfaces", path+"/NIC1")
	case sys + "/EthernetInterfaces/NIC1":
		d = b.ethernet()
	case sys + "/NetworkInterfaces":
		d = collection(path, "NetworkInterfaceCollection", "Network Interfaces", path+"/NIC1")
	case sys + "/NetworkInterfaces/NIC1":
		d = networkInterface()
	case sys + "/Bios":
		d = bios()
	case v1 + "/Managers":
		d = collection(path, "ManagerCollection", "Managers", v1+"/Managers/1")
	case v1 + "/Managers/1":
		d = b.manager()
	case v1 + "/Managers/1/VirtualMedia":
		d = collection(path, "VirtualMediaCollection", "Virtual Media", path+"/CD1")
	case v1 + "/Managers/1/VirtualMedia/CD1":
		d = b.virtualMedia()
	case v1 + "/Chassis":
		d = collection(path, "ChassisCollection", "Chassis", v1+"/Chassis/1")
	case v1 + "/Chassis/1":
		d = b.chassis()
	case v1 + "/Chassis/1/Power":
		d = power()
	case v1 + "/Chassis/1/NetworkAdapters":
		d = collection(path, "NetworkAdapterCollection", "Network Adapters", path+"/NIC1")
	case v1 + "/Chassis/1/NetworkAdapters/NIC1":
		d = networkAdapter()
	case v1 + "/Chassis/1/NetworkAdapters/NIC1/NetworkPorts":
		d = collection(path, "NetworkPortCollection", "Network Ports", path+"/NIC1")
	case v1 + "/Chassis/1/NetworkAdapters/NIC1/NetworkPorts/NIC1":
		d = b.networkPort()
	case v1 + "/UpdateService":
		d = updateService()
	case v1 + "/UpdateService/FirmwareInventory":
		d = collection(path, "SoftwareInventoryCollection", "Firmware Inventory", path+"/BIOS", path+"/BMC")
	case v1 + "/UpdateService/FirmwareInventory/BIOS":
		d = firmware("BIOS", "BIOS", "1.2.3")
	case v1 + "/UpdateService/FirmwareInventory/BMC":
		d = firmware("BMC", "BMC Firmware", "2.0.0")
	default:
		if strings.HasPrefix(path, v1+"/SessionService/Sessions/") {
			id := strings.TrimPrefix(path, v1+"/SessionService/Sessions/")
			for _, x := range b.sessions {
				if x.id == id {
					d = resource(path, "Session", id, "User Session")
				}
			}
		}
	}
	if d == nil {
		writeError(w, http.StatusNotFound, "Base.1.0.ResourceMissingAtURI", "no resource at "+path)
		return
	}
	writeJSON(w, http.StatusOK, d, etag)
}

func (s *Sim) mutate(w http.ResponseWriter, r *http.Request, b *bmc, path string, body []byte) {
	sys := v1 + "/Systems/1"
	cd := v1 + "/Managers/1/VirtualMedia/CD1"
	switch {
	case r.Method == http.MethodDelete && strings.HasPrefix(path, v1+"/SessionService/Sessions/"):
		b.mu.Lock()
		ok := b.dropSession(strings.TrimPrefix(path, v1+"/SessionService/Sessions/"))
		b.mu.Unlock()
		if !ok {
			writeError(w, http.StatusNotFound, "Base.1.0.ResourceMissingAtURI", "no session at "+path)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodPost && path == sys+"/Actions/ComputerSystem.Reset":
		s.resetSystem(w, b, body)
	case r.Method == http.MethodPatch && path == sys:
		s.patchSystem(w, r, b, body)
	case r.Method == http.MethodPost && path == v1+"/Managers/1/Actions/Manager.Reset":
		var req struct{ ResetType string }
		_ = json.Unmarshal(body, &req)
		if req.ResetType != "" && req.ResetType != "GracefulRestart" && req.ResetType != "ForceRestart" {
			writeError(w, http.StatusBadRequest, "Base.1.0.ActionParameterNotSupported", "ResetType "+strconv.Quote(req.ResetType)+" is not one of GracefulRestart, ForceRestart")
			return
		}
		b.mu.Lock()
		b.resets++
		b.mutations++
		b.sessions = nil // a BMC reboot ends every session
		b.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodPost && path == cd+"/Actions/VirtualMedia.InsertMedia":
		var req struct {
			Image    string
			Inserted *bool
		}
		if err := json.Unmarshal(body, &req); err != nil || req.Image == "" {
			writeError(w, http.StatusBadRequest, "Base.1.0.ActionParameterMissing", "InsertMedia needs {\"Image\": URL}")
			return
		}
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.media.Inserted {
			writeError(w, http.StatusConflict, "Base.1.0.ResourceInUse", "a medium is already inserted; eject it first")
			return
		}
		b.media = Media{Image: req.Image, Inserted: req.Inserted == nil || *req.Inserted}
		b.mutations++
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodPost && path == cd+"/Actions/VirtualMedia.EjectMedia":
		b.mu.Lock()
		defer b.mu.Unlock()
		b.media = Media{}
		b.mutations++
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodPatch && path == cd:
		var req struct {
			Image    *string
			Inserted *bool
		}
		if err := json.Unmarshal(body, &req); err != nil {
			writeError(w, http.StatusBadRequest, "Base.1.0.MalformedJSON", err.Error())
			return
		}
		b.mu.Lock()
		defer b.mu.Unlock()
		if req.Image != nil {
			b.media.Image = *req.Image
			b.media.Inserted = *req.Image != ""
		}
		if req.Inserted != nil {
			b.media.Inserted = *req.Inserted
		}
		b.mutations++
		w.WriteHeader(http.StatusNoContent)
	default:
		writeError(w, http.StatusMethodNotAllowed, "Base.1.0.OperationNotAllowed", r.Method+" is not allowed on "+path)
	}
}

func (s *Sim) resetSystem(w http.ResponseWriter, b *bmc, body []byte) {
	var req struct{ ResetType string }
	if len(bytes.TrimSpace(body)) > 0 {
		if err := json.Unmarshal(body, &req); err != nil {
			writeError(w, http.StatusBadRequest, "Base.1.0.MalformedJSON", err.Error())
			return
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch req.ResetType {
	case "On":
		if !b.power {
			b.powerOn()
		}
	case "ForceOff", "GracefulShutdown":
		b.power = false
		b.gen++
	case "PushPowerButton":
		if b.power {
			b.power = false
			b.gen++
		} else {
			b.powerOn()
		}
	case "ForceRestart", "GracefulRestart", "PowerCycle":
		if !b.power && req.ResetType != "PowerCycle" {
			writeError(w, http.StatusConflict, "Base.1.0.ActionNotSupported", req.ResetType+" needs the system on; it is off")
			return
		}
		b.powerOn()
	case "Nmi":
	default:
		writeError(w, http.StatusBadRequest, "Base.1.0.ActionParameterNotSupported",
			"ResetType "+strconv.Quote(req.ResetType)+" is not one of "+strings.Join(resetTypes, ", "))
		return
	}
	b.mutations++
	w.WriteHeader(http.StatusNoContent)
}

func (s *Sim) patchSystem(w http.ResponseWriter, r *http.Request, b *bmc, body []byte) {
	var req struct {
		Boot *struct {
			BootSourceOverrideTarget  *string
			BootSourceOverrideEnabled *string
			BootSourceOverrideMode    *string
		}
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "Base.1.0.MalformedJSON", err.Error())
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if im := r.Header.Get("If-Match"); im != "" && im != "*" && im != b.etag() {
		writeError(w, http.StatusPreconditionFailed, "Base.1.0.PreconditionFailed",
			"If-Match "+im+" does not match the current ETag "+b.etag()+"; GET the system again")
		return
	}
	if req.Boot == nil {
		writeError(w, http.StatusBadRequest, "Base.1.0.PropertyUnknown", "only Boot can be patched")
		return
	}
	nb := b.boot
	if t := req.Boot.BootSourceOverrideTarget; t != nil {
		if !contains(bootTargets, *t) {
			writeError(w, http.StatusBadRequest, "Base.1.0.PropertyValueNotInList",
				"BootSourceOverrideTarget "+strconv.Quote(*t)+" is not one of "+strings.Join(bootTargets, ", "))
			return
		}
		nb.Target = *t
	}
	if e := req.Boot.BootSourceOverrideEnabled; e != nil {
		if *e != "Disabled" && *e != "Once" && *e != "Continuous" {
			writeError(w, http.StatusBadRequest, "Base.1.0.PropertyValueNotInList", "BootSourceOverrideEnabled must be Disabled, Once or Continuous")
			return
		}
		nb.Enabled = *e
	}
	if m := req.Boot.BootSourceOverrideMode; m != nil {
		if *m != "UEFI" && *m != "Legacy" {
			writeError(w, http.StatusBadRequest, "Base.1.0.PropertyValueNotInList", "BootSourceOverrideMode must be UEFI or Legacy")
			return
		}
		nb.Mode = *m
	}
	b.boot = nb
	b.gen++
	b.mutations++
	w.Header().Set("ETag", b.etag())
	w.WriteHeader(http.StatusNoContent)
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func writeJSON(w http.ResponseWriter, code int, v any, etag string) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
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
	writeJSON(w, code, doc{"error": doc{"code": id, "message": msg,
		"@Message.ExtendedInfo": []doc{{"MessageId": id, "Message": msg}}}}, "")
}
