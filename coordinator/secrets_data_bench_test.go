package coordinator

import (
	"strings"
	"testing"

	"github.com/rackfence/rackfence/coordinator/fsm"
)

// BenchmarkSealCredentialsData: sealing a record's data on the leader
// (the PUT) and opening it (an agent's reveal), for a typical cloud-config
// (4 KiB) and the largest record allowed (256 KiB).
//
//	go test -run '^$' -bench BenchmarkSealCredentialsData -benchmem ./coordinator/
func BenchmarkSealCredentialsData(b *testing.B) {
	for _, size := range []int{4 << 10, 256<<10 - 64} {
		data := map[string]string{"userData": strings.Repeat("#cloud-config x\n", size/16), "networkData": `{"links":[]}`}
		name := "4KiB"
		if size > 4<<10 {
			name = "256KiB"
		}
		s := &Store{cfg: Config{NodeID: "n1", Secrets: testKeys(b)}, fsm: fsm.NewFSM()}
		b.Run("seal/"+name, func(b *testing.B) {
			b.SetBytes(int64(size))
			for i := 0; i < b.N; i++ {
				if _, err := s.SealCredentialsData("rec", "", "", data); err != nil {
					b.Fatal(err)
				}
			}
		})
		cmd, _ := s.SealCredentialsData("rec", "", "", data)
		st := fsm.StoredCredentials{Sealed: &cmd.Sealed, Data: cmd.Data, DataKeys: cmd.DataKeys}
		b.Run("reveal/"+name, func(b *testing.B) {
			b.SetBytes(int64(size))
			for i := 0; i < b.N; i++ {
				if _, err := s.RevealData("rec", st); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
