package provisioner

import (
	"sync"
	"time"
)

// SoftOffMarks remembers the hosts (by a provisioner's key: host name,
// Ironic node UUID) a soft power-off was asked for and that have not been
// seen off since, so a poll does not ask again. A mark older than
// SoftMarkTTL is forgotten (a soft power-off withdrawn while under way
// must not keep a later one from being asked for); an agent restart
// forgets them all: one more request then. The zero value is ready.
type SoftOffMarks struct {
	mu sync.Mutex
	at map[string]time.Time
}

// SoftMarkTTL bounds how long a soft power-off counts as asked for.
const SoftMarkTTL = 10 * time.Minute

// Sent reports whether a soft power-off was asked for key within the TTL.
func (s *SoftOffMarks) Sent(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.at[key]
	return ok && time.Since(at) < SoftMarkTTL
}

// Mark records that a soft power-off is asked for key now.
func (s *SoftOffMarks) Mark(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.at == nil {
		s.at = map[string]time.Time{}
	}
	s.at[key] = time.Now()
}

// Forget drops key's mark (the host was seen off, or the request failed).
func (s *SoftOffMarks) Forget(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.at, key)
}
