package wire

import (
	"fmt"
	"strings"
)

// Label selectors, Kubernetes' syntax (equality- and set-based):
//
//	role=compute         the label is set to the value (== is the same)
//	role!=compute        the label is absent or set to another value
//	role                 the label is set (any value)
//	!role                the label is absent
//	zone in (a,b)        the label is set to one of the values
//	zone notin (a,b)     the label is absent or set to none of the values
//
// Requirements are separated by commas and must all hold (AND). Spaces
// around tokens are ignored. The empty selector matches every host.

// SelectorOp is the operator of one requirement.
type SelectorOp string

// Selector operators ("==" parses as OpEquals).
const (
	OpEquals       SelectorOp = "="
	OpNotEquals    SelectorOp = "!="
	OpExists       SelectorOp = "exists"
	OpDoesNotExist SelectorOp = "!"
	OpIn           SelectorOp = "in"
	OpNotIn        SelectorOp = "notin"
)

// Requirement is one condition on one label key.
type Requirement struct {
	Key string
	Op  SelectorOp
	// Values: one for = and !=, at least one for in and notin, none for
	// exists and !.
	Values []string
}

// Selector is a conjunction of requirements; nil matches everything.
type Selector []Requirement

// Matches reports whether labels satisfy every requirement.
func (s Selector) Matches(labels map[string]string) bool {
	for _, r := range s {
		if !r.Matches(labels) {
			return false
		}
	}
	return true
}

// Matches reports whether labels satisfy r.
func (r Requirement) Matches(labels map[string]string) bool {
	v, ok := labels[r.Key]
	switch r.Op {
	case OpEquals:
		return ok && v == r.Values[0]
	case OpNotEquals:
		return !ok || v != r.Values[0]
	case OpExists:
		return ok
	case OpDoesNotExist:
		return !ok
	case OpIn:
		return ok && contains(r.Values, v)
	case OpNotIn:
		return !ok || !contains(r.Values, v)
	}
	return false
}

func contains(set []string, v string) bool {
	for _, s := range set {
		if s == v {
			return true
		}
	}
	return false
}

// String renders s in the syntax ParseSelector reads.
func (s Selector) String() string {
	parts := make([]string, len(s))
	for i, r := range s {
		parts[i] = r.String()
	}
	return strings.Join(parts, ",")
}

func (r Requirement) String() string {
	switch r.Op {
	case OpEquals, OpNotEquals:
		return r.Key + string(r.Op) + r.Values[0]
	case OpExists:
		return r.Key
	case OpDoesNotExist:
		return "!" + r.Key
	}
	return r.Key + " " + string(r.Op) + " (" + strings.Join(r.Values, ",") + ")"
}

// SelectorError is a selector that does not parse: where and what.
type SelectorError struct {
	Selector string
	Pos      int // byte offset of the problem
	Message  string
}

func (e *SelectorError) Error() string {
	return fmt.Sprintf("%q at character %d: %s", e.Selector, e.Pos+1, e.Message)
}

// selector tokens
type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tNot   // !
	tEq    // = or ==
	tNotEq // !=
	tComma // ,
	tOpen  // (
	tClose // )
)

type token struct {
	kind tokKind
	text string
	pos  int
}

func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "the end"
	case tIdent:
		return fmt.Sprintf("%q", t.text)
	}
	return fmt.Sprintf("'%s'", t.text)
}

// lex splits a selector into tokens; an identifier is a run of anything
// that is not a space or one of !=,() (validated later as key or value).
func lex(s string) []token {
	var out []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '!' && i+1 < len(s) && s[i+1] == '=':
			out = append(out, token{tNotEq, "!=", i})
			i += 2
		case c == '!':
			out = append(out, token{tNot, "!", i})
			i++
		case c == '=' && i+1 < len(s) && s[i+1] == '=':
			out = append(out, token{tEq, "==", i})
			i += 2
		case c == '=':
			out = append(out, token{tEq, "=", i})
			i++
		case c == ',':
			out = append(out, token{tComma, ",", i})
			i++
		case c == '(':
			out = append(out, token{tOpen, "(", i})
			i++
		case c == ')':
			out = append(out, token{tClose, ")", i})
			i++
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\n\r!=,()", rune(s[j])) {
				j++
			}
			out = append(out, token{tIdent, s[i:j], i})
			i = j
		}
	}
	return append(out, token{tEOF, "", len(s)})
}

// ParseSelector parses a label selector (syntax above). The empty string
// (or only spaces) is the selector that matches everything.
func ParseSelector(s string) (Selector, error) {
	p := &selParser{src: s, toks: lex(s)}
	var sel Selector
	if p.peek().kind == tEOF {
		return nil, nil
	}
	for {
		r, err := p.requirement()
		if err != nil {
			return nil, err
		}
		sel = append(sel, r)
		switch t := p.next(); t.kind {
		case tEOF:
			return sel, nil
		case tComma:
			if p.peek().kind == tEOF {
				return nil, p.errAt(t, "a ',' must be followed by another requirement")
			}
		default:
			return nil, p.errAt(t, "expected ',' or the end after the requirement %q, found %s", r.String(), t.describe())
		}
	}
}

type selParser struct {
	src  string
	toks []token
	i    int
}

func (p *selParser) peek() token { return p.toks[p.i] }

func (p *selParser) next() token {
	t := p.toks[p.i]
	if p.i < len(p.toks)-1 {
		p.i++
	}
	return t
}

func (p *selParser) errAt(t token, format string, a ...any) error {
	return &SelectorError{Selector: p.src, Pos: t.pos, Message: fmt.Sprintf(format, a...)}
}

const selectorForms = "use key=value, key!=value, key, !key, key in (v1,v2) or key notin (v1,v2)"

func (p *selParser) key() (token, error) {
	t := p.next()
	if t.kind != tIdent {
		return t, p.errAt(t, "expected a label key, found %s (%s)", t.describe(), selectorForms)
	}
	if prob := labelKeyProblem(t.text); prob != "" {
		return t, p.errAt(t, "key %q is not a valid label key: %s", t.text, prob)
	}
	return t, nil
}

func (p *selParser) value(key string) (string, error) {
	t := p.next()
	if t.kind != tIdent {
		return "", p.errAt(t, "expected a value for key %q, found %s", key, t.describe())
	}
	if prob := labelValueProblem(t.text); prob != "" {
		return "", p.errAt(t, "value %q of key %q %s", t.text, key, prob)
	}
	return t.text, nil
}

func (p *selParser) requirement() (Requirement, error) {
	if p.peek().kind == tNot {
		p.next()
		k, err := p.key()
		if err != nil {
			return Requirement{}, err
		}
		return Requirement{Key: k.text, Op: OpDoesNotExist}, nil
	}
	k, err := p.key()
	if err != nil {
		return Requirement{}, err
	}
	r := Requirement{Key: k.text}
	switch t := p.peek(); {
	case t.kind == tEOF || t.kind == tComma:
		r.Op = OpExists
		return r, nil
	case t.kind == tEq || t.kind == tNotEq:
		p.next()
		r.Op = OpEquals
		if t.kind == tNotEq {
			r.Op = OpNotEquals
		}
		// key= (nothing before ',' or the end) selects the empty value.
		if n := p.peek(); n.kind == tEOF || n.kind == tComma {
			r.Values = []string{""}
			return r, nil
		}
		v, err := p.value(k.text)
		if err != nil {
			return r, err
		}
		r.Values = []string{v}
		return r, nil
	case t.kind == tIdent && (t.text == "in" || t.text == "notin"):
		p.next()
		r.Op = SelectorOp(t.text)
		if o := p.next(); o.kind != tOpen {
			return r, p.errAt(o, "expected '(' after %s, found %s (write %s %s (v1,v2))", t.text, o.describe(), k.text, t.text)
		}
		for {
			v, err := p.value(k.text)
			if err != nil {
				return r, err
			}
			r.Values = append(r.Values, v)
			switch c := p.next(); c.kind {
			case tComma:
				continue
			case tClose:
				return r, nil
			default:
				return r, p.errAt(c, "expected ',' or ')' in the values of %q, found %s", k.text, c.describe())
			}
		}
	default:
		return r, p.errAt(t, "expected an operator after key %q, found %s (%s)", k.text, t.describe(), selectorForms)
	}
}
