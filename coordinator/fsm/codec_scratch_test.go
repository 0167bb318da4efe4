package fsm

import (
	"bytes"
	"testing"
)

// TestEncodeOwnsItsEntry: entries are encoded in a reused scratch buffer;
// each returned entry must be its own, unchanged by later encodings, and
// equal to what a second encoding of the same command gives.
func TestEncodeOwnsItsEntry(t *testing.T) {
	cmds := compatCommands()
	var entries [][]byte
	for _, c := range cmds {
		e, err := Encode(c)
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, e)
	}
	for i, c := range cmds {
		again, _ := Encode(c)
		if !bytes.Equal(entries[i], again) {
			t.Fatalf("command %d (%T): entry changed after later encodings:\n%x\nwant\n%x", i, c, entries[i], again)
		}
		if cap(entries[i]) != len(entries[i]) {
			t.Errorf("command %d (%T): entry of %d bytes holds %d", i, c, len(entries[i]), cap(entries[i]))
		}
	}
}
