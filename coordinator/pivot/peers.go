package pivot

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

// Peers are the other tiers this one may hand hosts to or take them from
// (--peer-tier NAME=URL), each called with an operator token read from a
// file (--peer-token-file NAME=FILE). The file is read at each call, so a
// token can be created in the other tier after this one started, and
// rotated without a restart.
type Peers struct {
	self   string
	urls   map[string]string
	tokens map[string]string // tier → token file
}

// NewPeers checks the configured tiers and token files.
func NewPeers(self string, tiers, tokenFiles map[string]string) (*Peers, error) {
	p := &Peers{self: self, urls: map[string]string{}, tokens: map[string]string{}}
	for name, url := range tiers {
		if err := wire.ValidateName("--peer-tier", name); err != nil {
			return nil, err
		}
		if name == self {
			return nil, fmt.Errorf("--peer-tier: %q is this tier's own name", name)
		}
		if _, err := client.ParseURLs(url); err != nil {
			return nil, fmt.Errorf("--peer-tier %s: %w", name, err)
		}
		p.urls[name] = url
	}
	for name, file := range tokenFiles {
		if _, ok := p.urls[name]; !ok {
			return nil, fmt.Errorf("--peer-token-file names tier %q, which has no --peer-tier", name)
		}
		p.tokens[name] = file
	}
	return p, nil
}

// Tier returns a client of a peer tier, with its token read now.
func (p *Peers) Tier(name string) (*client.Client, error) {
	if p == nil || p.urls[name] == "" {
		return nil, fmt.Errorf("%w %q: configure it with --peer-tier %s=URL and --peer-token-file %s=FILE (known: %s)",
			ErrUnknownTier, name, name, name, strings.Join(p.Names(), ", "))
	}
	tok := ""
	if f := p.tokens[name]; f != "" {
		t, err := client.ReadTokenFile(f)
		if err != nil {
			return nil, fmt.Errorf("token of tier %s: %w", name, err)
		}
		tok = t
	}
	return client.New(client.Config{Coordinator: p.urls[name], Token: tok,
		UserAgent: "rackfence-coordinator/pivot (tier=" + p.self + ")", Timeout: 10 * time.Second, RetryFor: 3 * time.Second})
}

// Names lists the configured peer tiers.
func (p *Peers) Names() []string {
	if p == nil {
		return nil
	}
	var n []string
	for k := range p.urls {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}
