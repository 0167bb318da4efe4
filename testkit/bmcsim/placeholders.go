package bmcsim

import (
	"fmt"
	"strconv"
	"strings"
)

// Placeholders in fixture strings, substituted per BMC when served:
//
//	{{index}}    the BMC's index, decimal (0, 1, …)
//	{{serial}}   the index as six digits (000001)
//	{{mac}}      the boot MAC of system 0: MACPrefix:HH:LL, HHLL = index
//	{{mac:K}}    the same with K (0..255) added to MACPrefix's last byte:
//	             system j's boot NIC is {{mac:j}}; other NICs use K ≥ 16
//	{{MAC}}, {{MAC:K}} the same in upper case (as Dell and DMTF's mockups
//	             print MACs)
//	{{uuid}}     00000000-0000-4000-8000-IIIIIIIIIIII (I: index, hex)
//	{{uuid:K}}   the same with 80KK (K in hex) as the fourth group
//
// An unknown placeholder is an error when the fixture is loaded.

// vars are one BMC's placeholder values.
type vars struct {
	index  int
	prefix [4]byte
}

func parsePrefix(s string) ([4]byte, error) {
	var p [4]byte
	parts := strings.Split(s, ":")
	if len(parts) != 4 {
		return p, fmt.Errorf("MACPrefix %q: want four hex bytes, e.g. %s", s, DefaultMACPrefix)
	}
	for i, x := range parts {
		v, err := strconv.ParseUint(x, 16, 8)
		if err != nil || len(x) != 2 {
			return p, fmt.Errorf("MACPrefix %q: want four hex bytes, e.g. %s", s, DefaultMACPrefix)
		}
		p[i] = byte(v)
	}
	return p, nil
}

// mac is the MAC {{mac:k}} names.
func (v *vars) mac(k int) string {
	return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", v.prefix[0], v.prefix[1], v.prefix[2], byte(int(v.prefix[3])+k),
		(v.index>>8)&0xff, v.index&0xff)
}

// expand substitutes every {{…}} in s.
func expand(s string, v *vars) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(s, "{{")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		j := strings.Index(s[i:], "}}")
		if j < 0 {
			return "", fmt.Errorf("unterminated placeholder in %q", s)
		}
		b.WriteString(s[:i])
		name := s[i+2 : i+j]
		s = s[i+j+2:]
		name, arg, hasArg := strings.Cut(name, ":")
		k := 0
		if hasArg {
			n, err := strconv.Atoi(arg)
			if err != nil || n < 0 || n > 255 {
				return "", fmt.Errorf("placeholder {{%s:%s}}: want a number 0..255 after the colon", name, arg)
			}
			k = n
		}
		switch {
		case name == "index" && !hasArg:
			b.WriteString(strconv.Itoa(v.index))
		case name == "serial" && !hasArg:
			fmt.Fprintf(&b, "%06d", v.index)
		case name == "mac":
			b.WriteString(v.mac(k))
		case name == "MAC":
			b.WriteString(strings.ToUpper(v.mac(k)))
		case name == "uuid":
			fmt.Fprintf(&b, "00000000-0000-4000-80%02x-%012x", k, v.index)
		default:
			return "", fmt.Errorf("unknown placeholder {{%s}}: use index, serial, mac, mac:K, MAC, MAC:K, uuid, uuid:K", name)
		}
	}
}

// mustExpand is expand for strings checked at load.
func (v *vars) mustExpand(s string) string {
	out, err := expand(s, v)
	if err != nil {
		return s
	}
	return out
}
