package main

import (
	"strings"
	"testing"
)

// TestValidateNamesTheFlag: each wrong value or combination is refused
// by Config.Validate (before anything is opened) with the flag's name; the
// defaults pass.
func TestValidateNamesTheFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		flag string
	}{
		{nil, ""},
		{[]string{"--node-id", ""}, "--node-id"},
		{[]string{"--data-dir", ""}, "--data-dir"},
		{[]string{"--http-addr", "7480"}, "--http-addr"},
		{[]string{"--raft-addr", "nowhere"}, "--raft-addr"},
		{[]string{"--bootstrap", "--join", "https://127.0.0.1:7480"}, "--bootstrap and --join"},
		{[]string{"--peer-tier", "site-b"}, "--peer-tier"},
		{[]string{"--peer-token-file", "=x"}, "--peer-token-file"},
		{[]string{"--cert-validity", "10ms"}, "--cert-validity"},
		{[]string{"--max-batch", "0"}, "--max-batch"},
		{[]string{"--raft-log-store", "rocks"}, "--raft-log-store"},
		{[]string{"--stop-timeout", "500ms"}, "--stop-timeout"},
		{[]string{"--insecure-plaintext", "--tls-cert", "c", "--tls-key", "k"}, "--insecure-plaintext"},
		{[]string{"--ca-cert", "ca.crt"}, "--ca-key"},
		{[]string{"--tls-cert", "c"}, "--tls-key"},
		{[]string{"--tls-client-ca", "ca.crt"}, "--tls-client-ca"},
	} {
		var cfg Config
		fs := cfg.Flags()
		if err := fs.Parse(c.args); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		err := cfg.Validate()
		switch {
		case c.flag == "" && err != nil:
			t.Errorf("the defaults fail: %v", err)
		case c.flag != "" && (err == nil || !strings.Contains(err.Error(), c.flag)):
			t.Errorf("%v: Validate said %v; want an error naming %s", c.args, err, c.flag)
		}
	}
}
