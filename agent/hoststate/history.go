package hoststate

import "github.com/rackfence/rackfence/shared/wire"

// operationOf maps the provisioning states that are operations to the
// operation's name in wire.OperationHistory ("" for every other state).
func operationOf(state string) string {
	switch state {
	case sRegistering:
		return wire.OperationRegister
	case sInspecting:
		return wire.OperationInspect
	case sProvisionin:
		return wire.OperationProvision
	case sDeprovision:
		return wire.OperationDeprovision
	}
	return ""
}

// actionOf is the action whose success completes an operation.
var actionOf = map[string]Action{
	wire.OperationRegister:    ActionRegister,
	wire.OperationInspect:     ActionInspect,
	wire.OperationProvision:   ActionProvision,
	wire.OperationDeprovision: ActionDeprovision,
}

// recordTransition keeps status.operationHistory in step with a change of
// provisioning state made by row w: leaving an operation's state because
// its action succeeded (or, for inspection, because the hardware details
// are already known) ends it at Input.Now; entering an operation's state
// starts a new run of it at Input.Now. The history lives in the status the
// coordinator holds, so an agent restart mid-operation keeps the start.
// Leaving for any other reason (the node was lost, the host is deleted,
// detached, or its image removed) keeps the start and leaves the end zero.
func (r *run) recordTransition(w *row, from, to string) {
	now := r.in.Now.UTC()
	if op := operationOf(from); op != "" && r.st.OperationHistory != nil {
		m := r.st.OperationHistory.Metric(op)
		succeeded := (w.on == actionOf[op] && w.res == resOK) ||
			(op == wire.OperationInspect && w.on == ActionReinspect && w.res == resOK) ||
			(op == wire.OperationInspect && w.on == "" && to == sAvailable)
		if succeeded && !m.Start.IsZero() && m.End.IsZero() {
			m.End = now
		}
	}
	if op := operationOf(to); op != "" {
		if r.st.OperationHistory == nil {
			r.st.OperationHistory = &wire.OperationHistory{}
		}
		*r.st.OperationHistory.Metric(op) = wire.OperationMetric{Start: now}
	}
}
