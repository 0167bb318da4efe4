package pivot

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/rackfence/rackfence/shared/api"
	"github.com/rackfence/rackfence/shared/client"
)

// Peers are the other tiers this one may hand hosts to or take them from,
// each with the client (and operator token) used to call it.
type Peers struct {
	self    string
	clients map[string]*client.Client
}

// ParsePeers builds Peers from --peer-tier NAME=URL and --peer-token-file
// NAME=FILE values. A tier without a token file gets no token (its API
// must then accept the request anonymously, which ours does not).
func ParsePeers(self string, tiers, tokenFiles []string) (*Peers, error) {
	p := &Peers{self: self, clients: map[string]*client.Client{}}
	tokens := map[string]string{}
	for _, kv := range tokenFiles {
		name, file, ok := strings.Cut(kv, "=")
		if !ok || name == "" || file == "" {
			return nil, fmt.Errorf("--peer-token-file: %q is not NAME=FILE", kv)
		}
		tok, err := client.ReadTokenFile(file)
		if err != nil {
			return nil, fmt.Errorf("--peer-token-file %s: %w", name, err)
		}
		tokens[name] = tok
	}
	for _, kv := range tiers {
		name, url, ok := strings.Cut(kv, "=")
		if !ok || url == "" {
			return nil, fmt.Errorf("--peer-tier: %q is not NAME=URL", kv)
		}
		if err := api.ValidateName("--peer-tier", name); err != nil {
			return nil, err
		}
		if name == self {
			return nil, fmt.Errorf("--peer-tier: %q is this tier's own name", name)
		}
		c, err := client.New(client.Config{Coordinator: url, Token: tokens[name],
			UserAgent: "rackfence-coordinator/pivot (tier=" + self + ")", Timeout: 10 * time.Second, RetryFor: 5 * time.Second})
		if err != nil {
			return nil, fmt.Errorf("--peer-tier %s: %w", name, err)
		}
		p.clients[name] = c
	}
	for name := range tokens {
		if _, ok := p.clients[name]; !ok {
			return nil, fmt.Errorf("--peer-token-file names tier %q, which has no --peer-tier", name)
		}
	}
	return p, nil
}

// Tier returns the client of a peer tier.
func (p *Peers) Tier(name string) (*client.Client, error) {
	if p != nil {
		if c, ok := p.clients[name]; ok {
			return c, nil
		}
	}
	return nil, fmt.Errorf("%w %q: configure it with --peer-tier %s=URL and --peer-token-file %s=FILE (known: %s)",
		ErrUnknownTier, name, name, name, strings.Join(p.Names(), ", "))
}

// Names lists the configured peer tiers.
func (p *Peers) Names() []string {
	if p == nil {
		return nil
	}
	var n []string
	for k := range p.clients {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// Self is this tier's name.
func (p *Peers) Self() string { return p.self }
