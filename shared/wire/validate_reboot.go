package wire

// ValidRequester reports whether s can name a power-off requester: 1 to 63
// characters of letters, digits, '.', '_' and '-', starting with a letter
// or digit (it is a path segment of DELETE …/intents/reboot/{requester}).
func ValidRequester(s string) bool {
	if s == "" || len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case i > 0 && (c == '.' || c == '_' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// ValidateReboot checks a reboot request and fills its defaults (mode
// hard, requester "default" for a power-off).
func ValidateReboot(r *RebootRequest) error {
	if err := checkLen("reason", r.Reason, 1024); err != nil {
		return err
	}
	switch r.Mode {
	case "":
		r.Mode = RebootHard
	case RebootHard, RebootSoft:
	default:
		return fieldErr("mode", "%q is not a reboot mode: use hard or soft", r.Mode)
	}
	if r.Requester == "" && r.PowerOff {
		r.Requester = DefaultRequester
	}
	if r.Requester != "" && !ValidRequester(r.Requester) {
		return fieldErr("requester", "%q is not a requester name: 1 to 63 letters, digits, '.', '_' or '-', starting with a letter or digit", r.Requester)
	}
	return nil
}

// ValidateInspect checks the body of POST …/intents/inspect.
func ValidateInspect(r *IntentRequest) error {
	if err := checkLen("reason", r.Reason, 1024); err != nil {
		return err
	}
	switch {
	case r.Mode != "":
		return fieldErr("mode", "does not apply to inspect")
	case r.Force:
		return fieldErr("force", "does not apply to inspect")
	case r.Wipe:
		return fieldErr("wipe", "does not apply to inspect")
	}
	return nil
}
