// Package version holds the one version of every rackfence binary and
// library User-Agent. make build stamps it:
//
//	go build -ldflags "-X github.com/rackfence/rackfence/internal/version.Version=$(git describe --tags --always --dirty) \
//	  -X github.com/rackfence/rackfence/internal/version.Commit=$(git rev-parse --short HEAD)"
//
// A plain go build leaves Version "dev"; Commit then falls back to the VCS
// revision the Go toolchain recorded (go build inside a git checkout), or
// "unknown".
package version

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
)

// Version is the release (git describe) the binary was built from.
// Set with -ldflags -X; "dev" otherwise.
var Version = "dev"

// Commit is the git commit the binary was built from. Set with -ldflags
// -X; empty means: ask the build info (see Info).
var Commit = ""

// Info is what --version prints, and -o json encodes.
type Info struct {
	Name      string `json:"name"`
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	GoVersion string `json:"goVersion"`
}

// Get returns the version information of binary name.
func Get(name string) Info {
	return Info{Name: name, Version: Version, Commit: commit(), GoVersion: runtime.Version()}
}

// String is the --version line: NAME VERSION (COMMIT, GOVERSION).
func (i Info) String() string {
	return fmt.Sprintf("%s %s (%s, %s)", i.Name, i.Version, i.Commit, i.GoVersion)
}

// JSON is the -o json form of --version, one line.
func (i Info) JSON() string {
	b, _ := json.Marshal(i)
	return string(b)
}

// UserAgent is "NAME/VERSION", the product token of the User-Agent header
// of every HTTP request a rackfence program sends.
func UserAgent(name string) string { return name + "/" + Version }

func commit() string {
	if Commit != "" {
		return Commit
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		rev, dirty := "", false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if rev != "" && dirty {
			rev += "-dirty"
		}
		if rev != "" {
			return rev
		}
	}
	return "unknown"
}
