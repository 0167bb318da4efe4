package procnet

import (
	"net"
	"os"
	"testing"
)

// ConnectedTo sees this process's own connection to a listener, and not
// one to a port it is not connected to.
func TestConnectedTo(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	if ConnectedTo(os.Getpid(), port) {
		t.Fatal("connected before dialling")
	}
	c, err := net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if !ConnectedTo(os.Getpid(), port) {
		t.Fatalf("no established connection to port %d seen", port)
	}
	other, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if ConnectedTo(os.Getpid(), other.Addr().(*net.TCPAddr).Port) {
		t.Fatal("reported connected to a port never dialled")
	}
}
