package hoststate

// row is one rule of the state machine. Outcome rows (on != "") handle the
// result of the action the previous decision asked for; decision rows (on
// == "") decide what to do next. Step applies the first matching outcome
// row, then decision rows in order until one without next matches.
type row struct {
	// name identifies the rule; it is the Reason of the event recorded when
	// the row changes the provisioning state, and the edge label of the
	// diagram.
	name string
	// why states the rule in words an operator reads: it is the message
	// of the row's event and its line in docs/hoststate.md, so it never
	// names our design documents.
	// Where a rule comes from (a seed proposal, BMO) is a comment above
	// its row in table.go: it reaches no event and no doc.
	why string
	// from lists the provisioning states the row applies in; nil = any.
	from []string
	// on is the action whose outcome an outcome row handles (anyAction =
	// every action); "" marks a decision row.
	on Action
	// res is the outcome class an outcome row handles.
	res result
	// when is an extra guard; nil = always.
	when func(*run) bool
	// to is the next provisioning state; "" = unchanged.
	to string
	// remove: the record may be deleted (Decision.Remove).
	remove bool
	// do is the row's effect on the status and decision; nil = none.
	do func(*run)
	// next: keep evaluating the decision rows after this one.
	next bool
}

// anyAction makes an outcome row handle the outcome of every action.
const anyAction Action = "*"

func (w *row) matches(r *run) bool {
	if w.on != "" {
		if r.in.Last == nil || r.res != w.res || (w.on != anyAction && w.on != r.in.Last.Action) {
			return false
		}
	}
	if w.from != nil {
		ok := false
		for _, s := range w.from {
			if s == r.state() {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return w.when == nil || w.when(r)
}

// states is a shorthand for from lists.
func states(s ...string) []string { return s }
