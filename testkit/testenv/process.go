package testenv

import (
	"bytes"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Process is a child process started by a test; its output is kept and
// printed when the test fails. Stop (SIGTERM, then SIGKILL) runs on cleanup.
type Process struct {
	Name string
	Cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
	err  error
}

type lockedWriter struct{ p *Process }

func (w lockedWriter) Write(b []byte) (int, error) {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	return w.p.out.Write(b)
}

// Start starts bin with args and env (added to the current environment).
// Under -short it skips the test (a multi-process test).
func Start(t testing.TB, name, bin string, env []string, args ...string) *Process {
	t.Helper()
	SkipShort(t)
	p := &Process{Name: name, done: make(chan struct{})}
	p.Cmd = exec.Command(bin, args...)
	p.Cmd.Env = append(os.Environ(), env...)
	p.Cmd.Stdout = lockedWriter{p}
	p.Cmd.Stderr = lockedWriter{p}
	p.Cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.Cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() { p.err = p.Cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.Stop(5 * time.Second)
		if t.Failed() {
			t.Logf("---- output of %s ----\n%s", name, p.Output())
		}
	})
	return p
}

// Output returns what the process printed so far.
func (p *Process) Output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// Signal sends sig to the process.
func (p *Process) Signal(sig syscall.Signal) error { return p.Cmd.Process.Signal(sig) }

// Kill sends SIGKILL and waits for the exit.
func (p *Process) Kill() {
	_ = p.Cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// Exited reports whether the process has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Wait waits up to d for the exit and returns its error (nil on exit 0).
func (p *Process) Wait(d time.Duration) (error, bool) {
	select {
	case <-p.done:
		return p.err, true
	case <-time.After(d):
		return nil, false
	}
}

// Stop sends SIGTERM (and SIGCONT, in case it was stopped), then SIGKILL
// after grace.
func (p *Process) Stop(grace time.Duration) {
	if p.Exited() {
		return
	}
	_ = p.Cmd.Process.Signal(syscall.SIGCONT)
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-p.Cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}
