package fsm

func (f *FSM) applyInit(t *tx, c InitCmd) (any, error) {
	if f.s.ClusterID != "" {
		return false, nil
	}
	f.s.ClusterID = c.ClusterID
	if c.AdminTokenHash != "" {
		f.s.putToken(c.AdminTokenHash, TokenInfo{Name: "admin", Role: "admin", CreatedAt: c.Time})
	}
	return true, nil
}

func (f *FSM) applyPutCredentials(t *tx, c PutCredentialsCmd) (any, error) {
	_, existed := f.s.Creds[c.Name]
	f.s.Creds[c.Name] = credRec{Username: c.Username, Password: c.Password, Index: t.index}
	return !existed, nil
}

func (f *FSM) applySetMember(t *tx, c SetMemberCmd) (any, error) {
	f.s.Members[c.ID] = c.HTTPAddr
	if c.Version != nil {
		f.s.Versions[c.ID] = *c.Version
		f.versionsGen.Add(1)
	}
	return nil, nil
}

func (f *FSM) applyRemoveMember(t *tx, c RemoveMemberCmd) (any, error) {
	delete(f.s.Members, c.ID)
	delete(f.s.Versions, c.ID)
	f.versionsGen.Add(1)
	return nil, nil
}

func (f *FSM) applyNoop(t *tx, c NoopCmd) (any, error) { return nil, nil }
