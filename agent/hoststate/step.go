package hoststate

// Step decides, for one host, what happens next. It is pure and idempotent.
func Step(in Input) Decision {
	st := in.Host.Status
	var d Decision
	if st != nil {
		d.Status = *st
	}
	return d
}
