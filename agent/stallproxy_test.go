package agent_test

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// stallProxy stands between agents and one BMC: it passes every request
// through, except that while holding it keeps each request whose
// User-Agent names agent (and whose path contains pathPart) until
// release, and then delivers it to the BMC whatever became of the agent
// meanwhile: a request held on the management network and delivered
// late (a stalled link, a TCP retransmission after a link flap).
type stallProxy struct {
	t        testing.TB
	target   string // http://127.0.0.1:PORT of the BMC
	agent    string // "(ID;" in the User-Agent
	pathPart string
	srv      *http.Server
	addr     string

	mu       sync.Mutex
	holding  bool
	held     int
	release  chan struct{}
	results  chan int // the BMC's status for each delivered held request
	captured chan struct{}
}

func newStallProxy(t testing.TB, target, agentID, pathPart string) *stallProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &stallProxy{t: t, target: target, agent: "(" + agentID + ";", pathPart: pathPart,
		release: make(chan struct{}), results: make(chan int, 16), captured: make(chan struct{}, 16), addr: ln.Addr().String()}
	p.srv = &http.Server{Handler: p}
	go func() { _ = p.srv.Serve(ln) }()
	t.Cleanup(func() { p.srv.Close() })
	return p
}

// hold starts holding the agent's matching requests.
func (p *stallProxy) hold() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.holding = true
}

// deliver lets every held request through to the BMC.
func (p *stallProxy) deliver() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.holding = false
	close(p.release)
}

func (p *stallProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	p.mu.Lock()
	held := p.holding && r.Method != http.MethodGet && strings.Contains(r.UserAgent(), p.agent) && strings.Contains(r.URL.Path, p.pathPart)
	rel := p.release
	if held {
		p.held++
	}
	p.mu.Unlock()
	if held {
		p.captured <- struct{}{}
		<-rel // the agent may be paused, gone or have given up: delivered anyway
	}
	out, err := http.NewRequest(r.Method, p.target+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	out.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	if held {
		p.results <- resp.StatusCode
	}
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}
