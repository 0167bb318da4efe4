package guard

// Errors is the number of records that could not be written.
func (a *FileAudit) Errors() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.errors
}
