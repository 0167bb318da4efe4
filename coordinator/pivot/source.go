package pivot

import (
	"context"
	"fmt"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

// Source is what a pivot needs of the source tier's own store.
type Source interface {
	// Host reads a host (linearizable).
	Host(ctx context.Context, name string) (*wire.Host, error)
	// Detach records a detach intent and returns it.
	Detach(ctx context.Context, name, reason string) (*wire.Intent, error)
	// MarkPivoted records that the host now belongs to tier to (it stays
	// detached here), or requests its deletion when deleteSource is set.
	MarkPivoted(ctx context.Context, name, to string, deleteSource bool) error
	// ClusterID is this cluster's ID.
	ClusterID() string
}

// Step advances the pivot of one host as far as it can go now and says
// where it stands. It is idempotent and safe to re-run at any point: the
// host is never created in the destination before its detach here was
// acknowledged, and never re-attached here by a pivot.
func (p *Peers) Step(ctx context.Context, src Source, name string, req wire.PivotRequest) (wire.PivotProgress, error) {
	pr := wire.PivotProgress{Host: name, To: req.To}
	dst, err := p.Tier(req.To)
	if err != nil {
		return pr, err
	}
	h, err := src.Host(ctx, name)
	if err != nil {
		return pr, err
	}
	if h.PivotedTo == req.To {
		return p.checkAdopted(ctx, dst, pr, h)
	}
	if h.Handoff != nil && !h.Handoff.Confirmed {
		return pr, fmt.Errorf("%w: %s is still awaiting its handoff from tier %s", ErrNotConfirmed, name, h.Handoff.SourceTier)
	}
	var d *wire.Intent
	if h.Intents != nil {
		d = h.Intents.Detach
	}
	if d == nil {
		if d, err = src.Detach(ctx, name, "pivot to "+req.To); err != nil {
			return pr, err
		}
	}
	pr.DetachIndex = d.CreatedIndex
	if !d.Acknowledged {
		pr.Phase = wire.PivotDetaching
		pr.Message = "waiting for rack " + h.Rack + "'s lease holder to acknowledge the detach"
		return pr, nil
	}
	pr.Phase = wire.PivotDetached
	out := Outgoing(h, p.self, src.ClusterID(), d.CreatedIndex)
	if _, _, err := dst.ApplyHost(ctx, out); err != nil {
		if client.IsUnreachable(err) {
			pr.Message = fmt.Sprintf("tier %s unreachable (%v); %s stays detached here, re-run the pivot to continue", req.To, err, name)
			return pr, nil
		}
		pr.Message = fmt.Sprintf("tier %s refused the host: %v; %s stays detached here", req.To, err, name)
		return pr, err
	}
	if err := src.MarkPivoted(ctx, name, req.To, req.DeleteSource); err != nil {
		pr.Message = "handed off, but recording it here failed: " + err.Error() + "; re-run the pivot"
		return pr, err
	}
	h.PivotedTo = req.To
	return p.checkAdopted(ctx, dst, pr, h)
}

func (p *Peers) checkAdopted(ctx context.Context, dst *client.Client, pr wire.PivotProgress, h *wire.Host) (wire.PivotProgress, error) {
	pr.Phase = wire.PivotHandedOff
	if h.Intents != nil && h.Intents.Detach != nil {
		pr.DetachIndex = h.Intents.Detach.CreatedIndex
	}
	dh, err := dst.GetHost(ctx, h.Name)
	if err != nil {
		pr.Message = fmt.Sprintf("handed off; cannot read it in tier %s: %v", pr.To, err)
		return pr, nil
	}
	if s := dh.Status; s != nil {
		pr.DestinationState, pr.DestinationStatus = s.ProvisioningState, s.OperationalStatus
		if s.OperationalStatus == wire.OpOK && (s.ProvisioningState == wire.StateExternallyProvisioned ||
			s.ProvisioningState == wire.StateAvailable || s.ProvisioningState == wire.StateProvisioned) {
			pr.Phase, pr.Done = wire.PivotAdopted, true
			return pr, nil
		}
		if s.ErrorMessage != "" {
			pr.Message = s.ErrorType + ": " + s.ErrorMessage
		}
	}
	if pr.Message == "" {
		pr.Message = "waiting for tier " + pr.To + "'s rack agent to register and adopt it"
	}
	return pr, nil
}

// Outgoing is the host as the destination receives it: the spec, marked
// externally provisioned when it was provisioned here (so the destination
// adopts it instead of deploying it), the status it had here (hardware
// details: the destination does not inspect again; the operation history),
// the records its config drive names (they must exist at the destination
// too), and the handoff record.
func Outgoing(h *wire.Host, selfTier, clusterID string, detachIndex uint64) *wire.Host {
	out := &wire.Host{
		Name: h.Name, Rack: h.Rack, BMC: h.BMC, BootMACAddress: h.BootMACAddress, Online: h.Online,
		ExternallyProvisioned: h.ExternallyProvisioned, Image: h.Image, Consumer: h.Consumer, Labels: h.Labels,
		RootDeviceHints: h.RootDeviceHints, BootMode: h.BootMode, BootMethod: h.BootMethod, AutomatedCleaningMode: h.AutomatedCleaningMode,
		UserData: h.UserData, NetworkData: h.NetworkData, MetaData: h.MetaData,
		PreprovisioningNetworkData: h.PreprovisioningNetworkData,
		Handoff:                    &wire.Handoff{SourceTier: selfTier, SourceClusterID: clusterID, DetachIndex: detachIndex},
	}
	if s := h.Status; s != nil {
		switch s.ProvisioningState {
		case wire.StateProvisioned, wire.StateExternallyProvisioned:
			out.ExternallyProvisioned = true
		}
		out.Status = &wire.HostStatus{HardwareDetails: s.HardwareDetails, PoweredOn: s.PoweredOn,
			PowerState: s.PowerState, ProvisioningState: s.ProvisioningState, OperationHistory: s.OperationHistory}
	}
	return out
}
