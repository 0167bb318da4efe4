package ironic

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/noauth"

	"github.com/rackfence/rackfence/agent/provisioner"
)

// Microversion is the one Ironic API microversion this provisioner speaks:
// 1.81 (node inventory, Ironic 21.4 "Zed" serves up to 1.82). It needs node
// names (1.5), manage/provide (1.4), adopt (1.17), interfaces at create
// (1.31), GET /v1/nodes/{id}/inventory (1.81).
const Microversion = "1.81"

// Provisioner drives hosts through OpenStack Ironic. It implements
// provisioner.Provisioner and is safe for concurrent use on different hosts.
type Provisioner struct {
	cfg    Config
	client *gophercloud.ServiceClient
	log    loggerT
	// redfish is what Register and Provision do for redfish nodes.
	redfish redfishChoice
	// soft: nodes asked for a soft power off (softoff.go).
	soft provisioner.SoftOffMarks
	// maxVersion is the highest API microversion Ironic serves.
	maxVersion string
}

var (
	_ provisioner.Provisioner = (*Provisioner)(nil)
	_ provisioner.Servicer    = (*Provisioner)(nil)
)

// New checks the configuration and that Ironic serves Microversion, and
// returns the provisioner. An unreachable Ironic is an error wrapping
// errclass.ErrTransient (try again); an older one wraps ErrMicroversion
// and names both versions.
func New(ctx context.Context, cfg Config) (*Provisioner, error) {
	if cfg.URL == "" {
		return nil, fmt.Errorf("%w: URL is empty: set --ironic-url to Ironic's API endpoint, e.g. http://127.0.0.1:6385", ErrConfig)
	}
	if cfg.Guard == nil {
		return nil, fmt.Errorf("%w: Guard is nil: every mutating Ironic call must go through the agent's guard.Guard", ErrConfig)
	}
	cfg.setDefaults()
	switch cfg.RedfishVirtualMedia {
	case "", "on", "off":
	default:
		return nil, fmt.Errorf("%w: RedfishVirtualMedia %q is not on or off (empty: decided from what Ironic enables)", ErrConfig, cfg.RedfishVirtualMedia)
	}
	switch cfg.RedfishISODownload {
	case "http", "local", "swift":
	default:
		return nil, fmt.Errorf("%w: RedfishISODownload %q is not http, local or swift", ErrConfig, cfg.RedfishISODownload)
	}
	endpoint := strings.TrimSuffix(strings.TrimSuffix(cfg.URL, "/"), "/v1") + "/v1/"
	sc, err := noauth.NewBareMetalNoAuth(noauth.EndpointOpts{IronicEndpoint: endpoint})
	if err != nil {
		return nil, fmt.Errorf("%w: URL %q: %v", ErrConfig, cfg.URL, err)
	}
	sc.Microversion = Microversion
	sc.ProviderClient.HTTPClient = http.Client{Timeout: cfg.Timeout}
	if cfg.Token != "" {
		sc.ProviderClient.SetToken(cfg.Token)
	}
	p := &Provisioner{cfg: cfg, client: sc, log: loggerT{cfg.Logger.With("provisioner", "ironic")}}
	if err := p.checkMicroversion(ctx); err != nil {
		return nil, err
	}
	p.redfish = p.chooseRedfish(ctx)
	return p, nil
}

// Name is "ironic".
func (p *Provisioner) Name() string { return "ironic" }

// checkMicroversion reads GET /v1 and compares its highest microversion
// with Microversion.
func (p *Provisioner) checkMicroversion(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	var body struct {
		Version struct {
			Version    string `json:"version"`
			MinVersion string `json:"min_version"`
		} `json:"version"`
	}
	_, err := p.client.Get(ctx, p.client.Endpoint, &body, &gophercloud.RequestOpts{OkCodes: []int{200}})
	if err != nil {
		return classify(err, "read Ironic's API version at "+p.client.Endpoint)
	}
	have := body.Version.Version
	if have == "" {
		return fmt.Errorf("%w: %s did not report an API version (is it Ironic?); rackfence needs %s", ErrMicroversion, p.client.Endpoint, Microversion)
	}
	if !versionAtLeast(have, Microversion) {
		return fmt.Errorf("%w: Ironic at %s serves API microversions up to %s, rackfence needs %s (Ironic 21.4 \"Zed\" or newer)",
			ErrMicroversion, p.client.Endpoint, have, Microversion)
	}
	if body.Version.MinVersion != "" && !versionAtLeast(Microversion, body.Version.MinVersion) {
		return fmt.Errorf("%w: Ironic at %s serves API microversions from %s, rackfence needs %s",
			ErrMicroversion, p.client.Endpoint, body.Version.MinVersion, Microversion)
	}
	p.maxVersion = have
	p.log.Info("ironic connected", "url", p.client.Endpoint, "max_microversion", have, "microversion", Microversion)
	return nil
}

// versionAtLeast compares "major.minor" versions.
func versionAtLeast(have, want string) bool {
	hm, hn := splitVersion(have)
	wm, wn := splitVersion(want)
	if hm != wm {
		return hm > wm
	}
	return hn >= wn
}

func splitVersion(v string) (int, int) {
	a, b, _ := strings.Cut(v, ".")
	x, _ := strconv.Atoi(a)
	y, _ := strconv.Atoi(b)
	return x, y
}
