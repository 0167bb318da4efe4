package ctl

import (
	"regexp"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/shared/client"
)

// TestHelpSaysHTTPS checks the help states the client's real default
// coordinator (https://, TLS being the default) and that no command's help
// shows a coordinator URL with http:// (only --insecure-plaintext clusters
// speak plain HTTP; BMC and image URLs such as redfish+http:// are fine).
func TestHelpSaysHTTPS(t *testing.T) {
	r := runCtl(t, nil, "", nil, "--help")
	if r.code != 0 {
		t.Fatalf("--help: %s", r)
	}
	if want := "default " + client.DefaultCoordinator + ")"; !strings.Contains(strings.Join(strings.Fields(r.stdout), " "), want) {
		t.Errorf("rackfencectl --help does not say %q:\n%s", want, r.stdout)
	}
	plain := regexp.MustCompile(`(^|[^+a-z])http://[^ ]*:7480`)
	texts := []string{globalHelp}
	for p, c := range commands {
		texts = append(texts, p+": "+c.long)
	}
	for _, s := range texts {
		if m := plain.FindString(s); m != "" {
			t.Errorf("help shows a plain-HTTP coordinator URL %q in:\n%s", m, s)
		}
	}
}
