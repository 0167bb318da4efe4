package testenv

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
			p.logFailure(t)
		}
	})
	return p
}

// failures holds, per failed test, the wait that failed it (Eventually),
// repeated after each process's output so it stays in view.
var failures sync.Map // testing.TB -> string

// failureTailLines is how many of a process's last lines a failed test
// prints. CI shows the end of a run's output, and a member with a full
// disk logs a line per request: printing whole outputs pushed the test's
// own failure message out of view.
const failureTailLines = 10

// failureLineBytes is the most of one line printed (the file keeps all).
const failureLineBytes = 300

// logFailure prints the end of the process's output for a failed test
// and keeps the whole of it in a file under the temporary directory
// (it survives the test's own TempDir).
func (p *Process) logFailure(t testing.TB) {
	out := p.Output()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	kept := ""
	dir, err := os.MkdirTemp("", "rackfence-failed-")
	if err == nil {
		path := filepath.Join(dir, strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()+"-"+p.Name)+".log")
		if err = os.WriteFile(path, []byte(out), 0o644); err == nil {
			kept = "; all of it in " + path
		}
	}
	head := fmt.Sprintf("---- output of %s%s ----", p.Name, kept)
	if len(lines) > failureTailLines {
		head = fmt.Sprintf("---- output of %s: its last %d of %d lines%s ----", p.Name, failureTailLines, len(lines), kept)
		lines = lines[len(lines)-failureTailLines:]
	}
	for i, l := range lines {
		if len(l) > failureLineBytes {
			lines[i] = l[:failureLineBytes] + "…"
		}
	}
	why := ""
	if msg, ok := failures.Load(t); ok {
		why = "\n---- the test failed: " + msg.(string)
	}
	t.Logf("%s\n%s%s", head, strings.Join(lines, "\n"), why)
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
