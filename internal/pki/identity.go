package pki

import (
	"crypto/x509"
	"fmt"
	"net/url"
	"strings"
)

// Kinds of identity a certificate can name.
const (
	KindMember = "member"
	KindAgent  = "agent"
)

// Identity is who a certificate names.
type Identity struct {
	Kind string // KindMember or KindAgent
	Name string // member: node ID; agent: agent ID
	Rack string // agents only
}

// URI is the identity as the URI SAN that carries it.
func (id Identity) URI() *url.URL {
	s := "rackfence://" + KindMember + "/" + url.PathEscape(id.Name)
	if id.Kind == KindAgent {
		s = "rackfence://" + KindAgent + "/" + url.PathEscape(id.Rack) + "/" + url.PathEscape(id.Name)
	}
	u, err := url.Parse(s)
	if err != nil { // cannot happen: every part is escaped
		panic(err)
	}
	return u
}

func (id Identity) String() string {
	if id.Kind == KindAgent {
		return "agent " + id.Name + " of rack " + id.Rack
	}
	return id.Kind + " " + id.Name
}

// IdentityOf reads the rackfence identity of a certificate.
func IdentityOf(c *x509.Certificate) (Identity, error) {
	for _, u := range c.URIs {
		if u.Scheme != "rackfence" {
			continue
		}
		parts := strings.Split(strings.TrimPrefix(u.EscapedPath(), "/"), "/")
		for i, p := range parts {
			if q, err := url.PathUnescape(p); err == nil {
				parts[i] = q
			}
		}
		switch {
		case u.Host == KindMember && len(parts) == 1 && parts[0] != "":
			return Identity{Kind: KindMember, Name: parts[0]}, nil
		case u.Host == KindAgent && len(parts) == 2 && parts[0] != "":
			return Identity{Kind: KindAgent, Rack: parts[0], Name: parts[1]}, nil
		}
	}
	return Identity{}, fmt.Errorf("%w (subject %q)", ErrNoIdentity, c.Subject.CommonName)
}
