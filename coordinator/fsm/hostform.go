package fsm

import (
	"encoding/gob"

	"github.com/rackfence/rackfence/shared/wire"
)

// hostFull is a host record in wire form: what a version 2 snapshot
// holds (gob, in chunks), what a version 1 snapshot and the state hash
// hold (JSON), whatever the record's form in memory.
type hostFull struct {
	wire.Host
	Events []wire.Event `json:"events,omitempty"`
}

// recOf returns a record holding h (its events packed); h's parts are
// the record's from then on.
func recOf(h *hostFull) *hostRec {
	return &hostRec{Host: h.Host, Events: packEvents(h.Events)}
}

// encodeHost gob-encodes h in wire form under the type name hostRec: gob
// writes a struct's name into the stream, and the records of snapshots
// written before records were packed went by that name, so the same state
// still gives the same snapshot bytes.
func encodeHost(enc *gob.Encoder, h *hostEntry) error {
	type hostRec hostFull
	return enc.Encode((*hostRec)(h.full()))
}
