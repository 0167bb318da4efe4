package api

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/rackfence/rackfence/internal/pki"
	"github.com/rackfence/rackfence/shared/wire"
)

// PeerHeader carries, on a request a follower forwards
// to the leader, the client certificate identity the follower verified
// ("agent/RACK/ID", "member/ID" or "none"). The leader believes it only
// from a connection that itself presented a member certificate; from
// anyone else it is ignored, so a client cannot claim an identity by
// sending it.
const PeerHeader = "X-Rackfence-Peer"

// peerOf is the verified client-certificate identity of the request's
// original sender (Kind "" when none).
func peerOf(c echo.Context) pki.Identity {
	r := c.Request()
	id := connIdentity(r)
	if id.Kind == pki.KindMember && r.Header.Get(ForwardedHeader) != "" {
		return parsePeer(r.Header.Get(PeerHeader))
	}
	return id
}

// connIdentity is the identity of the client certificate this connection
// verified against the cluster CA (Kind "" when none).
func connIdentity(r *http.Request) pki.Identity {
	if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 || len(r.TLS.VerifiedChains[0]) == 0 {
		return pki.Identity{}
	}
	id, err := pki.IdentityOf(r.TLS.VerifiedChains[0][0])
	if err != nil {
		return pki.Identity{}
	}
	return id
}

func formatPeer(id pki.Identity) string {
	switch id.Kind {
	case pki.KindAgent:
		return "agent/" + id.Rack + "/" + id.Name
	case pki.KindMember:
		return "member/" + id.Name
	}
	return "none"
}

func parsePeer(v string) pki.Identity {
	parts := strings.SplitN(v, "/", 3)
	switch {
	case len(parts) == 3 && parts[0] == pki.KindAgent:
		return pki.Identity{Kind: pki.KindAgent, Rack: parts[1], Name: parts[2]}
	case len(parts) == 2 && parts[0] == pki.KindMember:
		return pki.Identity{Kind: pki.KindMember, Name: parts[1]}
	}
	return pki.Identity{}
}

// checkPeer ties an agent token to the agent's certificate: with TLS on, a
// request with an agent token must come from a client certificate of this
// cluster naming the token's rack, except the one request that obtains
// that certificate. A stolen agent token alone is then worth nothing.
func (s *Server) checkPeer(c echo.Context, id identity) error {
	if s.cfg.TLS == nil || id.Role != wire.RoleAgent {
		return nil
	}
	if c.Request().Method == http.MethodPost && c.Path() == "/v1/certificates" {
		return nil
	}
	p := peerOf(c)
	if p.Kind != pki.KindAgent {
		return forbidden("an agent token is accepted only with the agent's client certificate, and this request presented none: " +
			"rackfence-agent obtains its certificate with its token at start (POST /v1/certificates)")
	}
	if p.Rack != id.Rack {
		return forbidden("the client certificate names rack %s but the token is scoped to rack %s", p.Rack, id.Rack)
	}
	return nil
}
