package wire

import (
	"errors"
	"testing"
)

func TestValidateReboot(t *testing.T) {
	r := RebootRequest{PowerOff: true}
	if err := ValidateReboot(&r); err != nil || r.Mode != RebootHard || r.Requester != DefaultRequester {
		t.Fatalf("defaults: %v %+v", err, r)
	}
	for _, c := range []struct {
		r     RebootRequest
		field string
	}{
		{RebootRequest{Mode: "gentle"}, "mode"},
		{RebootRequest{PowerOff: true, Requester: "a/b"}, "requester"},
		{RebootRequest{PowerOff: true, Requester: "-x"}, "requester"},
		{RebootRequest{Requester: string(make([]byte, 64))}, "requester"},
		{RebootRequest{Reason: string(make([]byte, 1025))}, "reason"},
	} {
		err := ValidateReboot(&c.r)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%+v: %v, want an error naming %s", c.r, err, c.field)
		}
	}
	for _, ok := range []string{"a", "fw-upgrade", "K.8_s", "x123456789012345678901234567890123456789012345678901234567890ab"} {
		if !ValidRequester(ok) {
			t.Errorf("%q refused", ok)
		}
	}
	var fe *FieldError
	if err := ValidateInspect(&IntentRequest{Wipe: true}); !errors.As(err, &fe) || fe.Field != "wipe" {
		t.Errorf("inspect with wipe: %v", err)
	}
}
