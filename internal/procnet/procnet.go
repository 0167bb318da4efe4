// Package procnet reads a process's TCP connections from /proc (Linux),
// for tests and the load tool that check who is connected to what.
package procnet

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// SocketInodes returns the socket inodes pid holds open.
func SocketInodes(pid int) map[string]bool {
	out := map[string]bool{}
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return out
	}
	for _, e := range ents {
		l, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err == nil && strings.HasPrefix(l, "socket:[") {
			out[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	return out
}

// EstablishedTo returns the inodes of established IPv4 TCP connections
// whose remote port is port.
func EstablishedTo(port int) map[string]bool {
	out := map[string]bool{}
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return out
	}
	want := fmt.Sprintf(":%04X", port)
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 10 || f[3] != "01" || !strings.HasSuffix(f[2], want) {
			continue
		}
		out[f[9]] = true
	}
	return out
}

// ConnectedTo reports whether pid has an established TCP connection to
// remote port port.
func ConnectedTo(pid, port int) bool {
	est := EstablishedTo(port)
	for ino := range SocketInodes(pid) {
		if est[ino] {
			return true
		}
	}
	return false
}
