package wire

import (
	"strings"
	"testing"
)

// The data limits hold at their edges, and every error names the field.
func TestValidateCredentialsData(t *testing.T) {
	fill := func(n int) map[string]string {
		return map[string]string{"userData": strings.Repeat("x", n-len("userData"))}
	}
	if err := ValidateCredentialsData(fill(MaxCredentialsData)); err != nil {
		t.Fatalf("exactly %d bytes refused: %v", MaxCredentialsData, err)
	}
	for _, c := range []struct {
		data  map[string]string
		field string
	}{
		{fill(MaxCredentialsData + 1), "data"},
		{map[string]string{"a/b": "x"}, "data.a/b"},
		{map[string]string{"": "x"}, "data"},
		{map[string]string{strings.Repeat("k", MaxDataKey+1): "x"}, "data"},
	} {
		err := ValidateCredentialsData(c.data)
		fe, ok := err.(*FieldError)
		if !ok || fe.Field != c.field {
			t.Errorf("%.40v: %v, want a FieldError on %s", c.data, err, c.field)
		}
	}
	if err := ValidateCredentialsData(map[string]string{strings.Repeat("k", MaxDataKey): "", "a-b_c.d": "", "value": ""}); err != nil {
		t.Fatal(err)
	}
	h := &Host{Name: "h", Rack: "r", UserData: &SecretReference{Name: "u"}, PreprovisioningNetworkData: &SecretReference{Name: "p"}}
	refs := h.SecretRefs()
	if len(refs) != 2 || refs[0] != (SecretRef{"userData", "u", DataKeyUserData}) || refs[1] != (SecretRef{"preprovisioningNetworkData", "p", DataKeyNetworkData}) {
		t.Fatalf("refs %+v", refs)
	}
	if !h.NamesRecord("p") || h.NamesRecord("x") {
		t.Fatal("NamesRecord")
	}
}
