package fsm

import (
	"reflect"
	"testing"
	"time"
	"unique"
	"unsafe"

	"github.com/rackfence/rackfence/shared/wire"
)

// setField gives v (a field of wire.Host) a non-zero value of its type.
func setField(t *testing.T, v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Uint64:
		v.SetUint(7)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		m.SetMapIndex(reflect.ValueOf("k"), reflect.ValueOf("v"))
		v.Set(m)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
	case reflect.Struct:
		for i := range v.NumField() {
			setField(t, v.Field(i))
		}
	default:
		t.Fatalf("no test value for a %s: extend setField", v.Type())
	}
}

// An entry keeps every field of a host, each one alone and all at once:
// a field wire.Host gains and hostEntry forgets fails here.
func TestHostEntryKeepsEveryField(t *testing.T) {
	typ := reflect.TypeFor[wire.Host]()
	var all wire.Host
	for i := range typ.NumField() {
		var one wire.Host
		setField(t, reflect.ValueOf(&one).Elem().Field(i))
		setField(t, reflect.ValueOf(&all).Elem().Field(i))
		if got := entryOf(&hostRec{Host: one}).host(); !reflect.DeepEqual(got, one) {
			t.Errorf("field %s: stored %+v, read back %+v", typ.Field(i).Name, one, got)
		}
	}
	e := entryOf(&hostRec{Host: all})
	if got := e.host(); !reflect.DeepEqual(got, all) {
		t.Fatalf("every field: stored %+v, read back %+v", all, got)
	}
	if e.task() != all.Task || e.handoff() != all.Handoff || e.pivotedTo() != all.PivotedTo || !reflect.DeepEqual(e.labels(), all.Labels) {
		t.Fatal("an entry's accessors do not read its rare fields")
	}
	// A fleet host (no rare field set) has none.
	if e := entryOf(&hostRec{Host: host("h1", "r1")}); e.rare != nil {
		t.Fatalf("a host with only common fields holds a rare part: %+v", e.rare)
	}
}

// The sizes the memory figures rest on (DESIGN.md, "Memory"): an entry
// fits the 176-byte size class (a wire.Host record took 384), an event 24
// bytes (96 as wire.Event).
func TestHostEntrySize(t *testing.T) {
	if n := unsafe.Sizeof(hostEntry{}); n > 176 {
		t.Errorf("hostEntry is %d bytes, more than 176", n)
	}
	if n := unsafe.Sizeof(eventRec{}); n != 24 {
		t.Errorf("eventRec is %d bytes, not 24", n)
	}
}

// A packed event reads back exactly as it was written, whatever its time
// (UTC, another zone, a monotonic reading, zero, outside the range of Unix
// nanoseconds), and events saying the same thing share their text.
func TestPackedEventReadsBack(t *testing.T) {
	paris := time.FixedZone("CET", 3600)
	for _, at := range []time.Time{t0, t0.In(paris), time.Now(), {}, time.Date(3000, 1, 1, 0, 0, 0, 1, time.UTC),
		time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC), t0.Local()} {
		e := wire.Event{Index: 9, Time: at, Type: wire.EventWarning, Reason: "R", Message: "m", Source: "s"}
		got := packEvent(e).event()
		if !reflect.DeepEqual(got, e) || got.Time != e.Time {
			t.Errorf("event at %v reads back as %+v", at, got)
		}
	}
	a := packEvent(wire.Event{Index: 1, Time: t0, Type: wire.EventNormal, Reason: "Inspected", Message: "m"})
	b := packEvent(wire.Event{Index: 2, Time: t0.Add(time.Second), Type: wire.EventNormal, Reason: "Inspected", Message: "m"})
	if a.text != b.text || a.text == unique.Make(eventText{}) {
		t.Error("two events saying the same thing keep two texts")
	}
	if eventsOf(nil) != nil || packEvents(nil) != nil {
		t.Error("no events is not nil")
	}
}
