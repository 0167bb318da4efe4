package coordinator

func (f *FSM) applyInit(t *tx, c InitCmd) (any, error) {
	if f.s.ClusterID != "" {
		return false, nil
	}
	f.s.ClusterID = c.ClusterID
	if c.AdminTokenHash != "" {
		f.s.Tokens[c.AdminTokenHash] = TokenInfo{Name: "admin", Role: "admin"}
	}
	return true, nil
}

func (f *FSM) applyPutCredentials(t *tx, c PutCredentialsCmd) (any, error) {
	_, existed := f.s.Creds[c.Name]
	f.s.Creds[c.Name] = credRec{Username: c.Username, Password: c.Password, Index: t.index}
	return !existed, nil
}

func (f *FSM) applyPutToken(t *tx, c PutTokenCmd) (any, error) {
	f.s.Tokens[c.Hash] = TokenInfo{Name: c.Name, Role: c.Role, Rack: c.Rack}
	return nil, nil
}
