package ctl

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/rackfence/rackfence/ctl/importer"
	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

// planItem is one change host apply makes (or would make) for metal3 input.
type planItem struct {
	Object string `json:"object"` // host/NAME, credentials/NAME
	Action string `json:"action"` // create, change, unchanged, set, wait, intent
	Detail string `json:"detail,omitempty"`
	Source string `json:"source,omitempty"`
}

// bmhPlan is host apply's plan for metal3 input; -o json prints it.
type bmhPlan struct {
	DryRun  bool       `json:"dryRun"`
	Items   []planItem `json:"items"`
	Refused []string   `json:"refused,omitempty"`
	// Skipped lists input left out on purpose (an Ironic node's state).
	Skipped []string `json:"skipped,omitempty"`
	Notes   []string `json:"notes,omitempty"`
	// Applied and NotApplied are set after a run that stopped midway.
	Applied    []string `json:"applied,omitempty"`
	NotApplied []string `json:"notApplied,omitempty"`

	steps []applyStep
	// refusedFrom holds the hosts (or nodes) Refused names: the count
	// the refusal reports.
	refusedFrom map[string]bool
}

// refuse records why one source (a host or node) is refused.
func (p *bmhPlan) refuse(source, why string) {
	if p.refusedFrom == nil {
		p.refusedFrom = map[string]bool{}
	}
	p.refusedFrom[source] = true
	p.Refused = append(p.Refused, source+": "+why)
}

// applyStep is one API call of the plan, in order.
type applyStep struct {
	what string
	do   func() error
}

// planBMH compares the input with what the coordinator holds (one list of
// hosts, one list of credentials) and builds the steps: records first,
// then hosts, then intents.
func (x *Ctx) planBMH(cl *client.Client, in *importer.Input, allowMissing bool) (*bmhPlan, error) {
	p := &bmhPlan{Refused: in.Refused, Notes: in.Notes, refusedFrom: map[string]bool{}}
	for _, src := range in.RefusedSources() {
		p.refusedFrom[src] = true
	}
	hl, err := cl.ListHosts(x.ctx, client.HostFilter{})
	if err != nil {
		return nil, err
	}
	have := map[string]wire.Host{}
	for _, h := range hl.Items {
		have[h.Name] = h
	}
	cl2, err := cl.ListCredentials(x.ctx)
	if err != nil {
		return nil, err
	}
	haveRec := map[string]bool{}
	for _, c := range cl2.Items {
		haveRec[c.Name] = true
	}
	stored := storedMachines(hl.Items, in.Hosts)
	var hosts []importer.PlannedHost
	for _, ph := range in.Hosts {
		if o, theirs, ok := stored.Find(ph.Host.BMC.Address); ok && o != ph.Host.Name {
			p.refuse(ph.Source, fmt.Sprintf("bmc.address %q names the same machine as stored host %s (bmc.address %q): %s, or delete host %s first",
				ph.Host.BMC.Address, o, theirs, importer.SameMachineHint, o))
			continue
		}
		var missing []string
		for _, rn := range ph.Secrets {
			if _, ok := in.Records[rn]; !ok && !haveRec[rn] {
				missing = append(missing, rn)
			}
		}
		if len(missing) > 0 && !allowMissing {
			why := fmt.Sprintf("references Secret %s, which is neither in the input nor a credentials record; add the Secret to the input, create the record (rackfencectl credentials set), or pass --allow-missing-secrets", strings.Join(missing, ", "))
			if in.MissingWhy != nil {
				why = in.MissingWhy(missing)
			}
			p.refuse(ph.Source, why)
			continue
		}
		for _, rn := range missing {
			p.Items = append(p.Items, planItem{Object: "credentials/" + rn, Action: "wait", Detail: "missing: the host waits until 'rackfencectl credentials set " + rn + "'", Source: ph.Source})
		}
		hosts = append(hosts, ph)
	}
	names := make([]string, 0, len(in.Records))
	for n := range in.Records {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		cr := in.Records[n]
		d := "created"
		if haveRec[n] {
			d = "overwritten (values are not compared: the coordinator does not reveal them)"
		}
		p.Items = append(p.Items, planItem{Object: "credentials/" + n, Action: "set", Detail: d})
		p.steps = append(p.steps, applyStep{"credentials/" + n, func() error { return cl.SetCredentials(x.ctx, n, cr) }})
	}
	var intents []applyStep
	for _, ph := range hosts {
		h := ph.Host
		old, exists := have[h.Name]
		obj := "host/" + h.Name
		switch {
		case !exists:
			p.Items = append(p.Items, planItem{Object: obj, Action: "create", Source: ph.Source})
		default:
			if diff := specDiff(specOnly(old), h); len(diff) > 0 {
				p.Items = append(p.Items, planItem{Object: obj, Action: "change", Detail: strings.Join(diff, ", "), Source: ph.Source})
			} else {
				p.Items = append(p.Items, planItem{Object: obj, Action: "unchanged", Source: ph.Source})
			}
		}
		if !exists || len(specDiff(specOnly(old), h)) > 0 {
			p.steps = append(p.steps, applyStep{obj, func() error { _, _, err := cl.ApplyHost(x.ctx, &h); return err }})
		}
		var it wire.Intents
		if old.Intents != nil {
			it = *old.Intents
		}
		name := h.Name
		if ph.Detach && it.Detach == nil {
			p.Items = append(p.Items, planItem{Object: obj, Action: "intent", Detail: "detach", Source: ph.Source})
			intents = append(intents, applyStep{obj + " detach", func() error {
				_, err := cl.Detach(x.ctx, name, wire.IntentRequest{Reason: "metal3 annotation " + importer.AnnDetached})
				return err
			}})
		}
		// Power-off holds need a host the rack agent has registered (and
		// not detached): until then they wait for a later run.
		registered := exists && old.Status != nil && old.Status.ProvisioningState != "" && it.Detach == nil && !ph.Detach
		for _, r := range ph.PowerOff {
			if it.PowerOff[r.Requester] != nil {
				continue
			}
			if !registered {
				p.Items = append(p.Items, planItem{Object: obj, Action: "wait", Detail: "power-off hold by " + r.Requester + ": placed by a later run of this command once the rack agent has registered the host (or: rackfencectl reboot " + h.Name + " --hold-off --requester " + r.Requester + ")", Source: ph.Source})
				continue
			}
			p.Items = append(p.Items, planItem{Object: obj, Action: "intent", Detail: "power-off hold by " + r.Requester, Source: ph.Source})
			intents = append(intents, applyStep{obj + " power-off " + r.Requester, func() error { _, err := cl.Reboot(x.ctx, name, r); return err }})
		}
		// One-shot reboot and re-inspection are not carried over: running
		// the same documents again must not reboot again.
		if ph.Reboot != nil {
			p.Notes = append(p.Notes, ph.Source+": annotation "+importer.AnnReboot+" not carried over (a one-shot reboot); run 'rackfencectl reboot "+h.Name+"' if it is still wanted")
		}
		if ph.Inspect {
			p.Notes = append(p.Notes, ph.Source+": annotation "+importer.AnnInspect+" not carried over: a new host is inspected when registered; run 'rackfencectl inspect "+h.Name+"' to inspect an available host again")
		}
	}
	p.steps = append(p.steps, intents...)
	return p, nil
}

// storedMachines indexes the BMC addresses of the stored hosts the input
// does not hold (the input's own hosts were checked against each other
// with their new addresses).
func storedMachines(stored []wire.Host, input []importer.PlannedHost) *importer.MachineIndex {
	inInput := map[string]bool{}
	for _, ph := range input {
		inInput[ph.Host.Name] = true
	}
	x := importer.NewMachineIndex()
	for _, o := range stored {
		if !inInput[o.Name] {
			x.Add(o.BMC.Address, o.Name)
		}
	}
	return x
}

// specDiff names the top-level spec fields where a and b differ.
func specDiff(a, b wire.Host) []string {
	a.Handoff, b.Handoff = nil, nil
	var ma, mb map[string]json.RawMessage
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	_ = json.Unmarshal(ja, &ma)
	_ = json.Unmarshal(jb, &mb)
	keys := map[string]bool{}
	for k := range ma {
		keys[k] = true
	}
	for k := range mb {
		keys[k] = true
	}
	var out []string
	for k := range keys {
		if string(ma[k]) != string(mb[k]) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// run applies the steps in order; on the first failure it stops and
// records what was applied and what was not.
func (p *bmhPlan) run() error {
	for i, s := range p.steps {
		if err := s.do(); err != nil {
			for _, t := range p.steps[:i] {
				p.Applied = append(p.Applied, t.what)
			}
			for _, t := range p.steps[i:] {
				p.NotApplied = append(p.NotApplied, t.what)
			}
			return fmt.Errorf("%s: %w", s.what, err)
		}
	}
	return nil
}

func (p *bmhPlan) print(w io.Writer) {
	verb := map[string]string{"create": "created", "change": "changed", "unchanged": "unchanged", "set": "set", "wait": "waiting", "intent": "intent"}
	prefix := ""
	if p.DryRun {
		prefix = "(dry run) "
		verb = map[string]string{"create": "would be created", "change": "would change", "unchanged": "unchanged", "set": "would be set", "wait": "would wait", "intent": "would get intent"}
	}
	if len(p.NotApplied) > 0 {
		fmt.Fprintln(w, "plan (stopped midway: what was applied and what was not follows the error):")
	}
	for _, it := range p.Items {
		line := fmt.Sprintf("%s%s %s", prefix, it.Object, verb[it.Action])
		switch {
		case it.Detail == "":
		case it.Action == "change" || it.Action == "set":
			line += ": " + it.Detail
		default:
			line += " " + it.Detail
		}
		fmt.Fprintln(w, line)
	}
	for _, r := range p.Refused {
		fmt.Fprintf(w, "refused: %s\n", r)
	}
	for _, s := range p.Skipped {
		fmt.Fprintf(w, "skipped: %s\n", s)
	}
	for _, n := range p.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

// applyPlan prints the plan and, unless it is a dry run or refuses
// anything, runs it. what names the input's objects in the refusal
// ("BareMetalHost(s)"); fix is the hint that goes with it.
func (x *Ctx) applyPlan(p *bmhPlan, what, fix string) error {
	show := func() error {
		if x.structured() {
			return x.print(p, nil)
		}
		p.print(x.io.Stdout)
		return nil
	}
	if len(p.Refused) > 0 {
		p.DryRun = true
		if err := show(); err != nil {
			return err
		}
		n := len(p.refusedFrom)
		if n == 0 {
			n = len(p.Refused)
		}
		return withHints(fmt.Errorf("%d %s refused; nothing was applied", n, what), fix)
	}
	if p.DryRun {
		return show()
	}
	runErr := p.run()
	if err := show(); err != nil {
		return err
	}
	if runErr != nil {
		if client.IsUnreachable(runErr) {
			return runErr
		}
		return withHints(fmt.Errorf("stopped at %w", runErr),
			fmt.Sprintf("applied: %s", dashIfEmpty(strings.Join(p.Applied, ", "))),
			fmt.Sprintf("not applied: %s", strings.Join(p.NotApplied, ", ")),
			"fix the cause and run the same command again: what was applied shows as unchanged")
	}
	return nil
}
