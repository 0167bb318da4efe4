package fsm

import (
	"time"
	"unique"

	"github.com/rackfence/rackfence/shared/wire"
)

// eventRec is one host event as a record keeps it: 24 bytes instead of
// wire.Event's 96. Its index and time stay per event; its text (type,
// reason, message, source) is one interned value shared by every event
// that says the same thing (the same transition on a thousand hosts).
// A time that is not a plain UTC instant in nanoseconds since 1970 (a
// zone, a monotonic reading, a date outside 1678–2262) is kept whole in
// the text, so the event reads back exactly as it was written.
type eventRec struct {
	index uint64
	nanos int64 // Time as Unix nanoseconds, unless text.odd
	text  unique.Handle[eventText]
}

// eventText is what events share.
type eventText struct {
	typ, reason, message, source string
	odd                          bool      // time is the event's time; nanos unused
	time                         time.Time // set only when odd
}

// packEvent returns e in a record's form.
func packEvent(e wire.Event) eventRec {
	t := eventText{typ: e.Type, reason: e.Reason, message: e.Message, source: e.Source}
	nanos := e.Time.UnixNano()
	if time.Unix(0, nanos).UTC() != e.Time {
		t.odd, t.time, nanos = true, e.Time, 0
	}
	return eventRec{index: e.Index, nanos: nanos, text: unique.Make(t)}
}

// event returns e as it was written.
func (e eventRec) event() wire.Event {
	t := e.text.Value()
	at := t.time
	if !t.odd {
		at = time.Unix(0, e.nanos).UTC()
	}
	return wire.Event{Index: e.index, Time: at, Type: t.typ, Reason: t.reason, Message: t.message, Source: t.source}
}

// eventsOf returns a record's events in wire form (nil when none).
func eventsOf(evs []eventRec) []wire.Event {
	if len(evs) == 0 {
		return nil
	}
	out := make([]wire.Event, len(evs))
	for i, e := range evs {
		out[i] = e.event()
	}
	return out
}

// packEvents returns evs in a record's form (nil when none).
func packEvents(evs []wire.Event) []eventRec {
	if len(evs) == 0 {
		return nil
	}
	out := make([]eventRec, len(evs))
	for i, e := range evs {
		out[i] = packEvent(e)
	}
	return out
}
