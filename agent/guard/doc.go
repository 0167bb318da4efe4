// Package guard is the agent's fencing: the one path every mutating call on
// a BMC or a provisioner takes (Guard.Do), the refusal it answers when the
// rack lease does not cover the call (ErrFenced), and the audit of every
// guarded call, run or refused (AuditRecord, Auditor, FileAudit).
//
// It sits below the layers that mutate: agent/bmc and the provisioners
// (agent/provisioner/direct, agent/provisioner/ironic) import it, it
// imports only shared/fence (the lease) and internal/jsonl (the audit file).
// The guard is about the lease, not about BMC access, so it is not part of
// agent/bmc: the Ironic provisioner guards its calls without depending on
// the BMC adapter. See DESIGN.md.
package guard
