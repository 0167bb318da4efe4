package wire

// WireErrorFor returns the table's row (the sentinel) of code, nil for a
// code the table does not know.
func WireErrorFor(code string) *WireError { return byCode[code] }
