package bmc

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/guard"
)

// BIOS settings (DMTF Bios, Settings, AttributeRegistry): the system's
// Bios resource shows the current Attributes; @Redfish.Settings names the
// SettingsObject that takes a PATCH of pending values (applied by the BMC
// at the system's next reset), the SupportedApplyTimes, and after a reset
// the Messages of what did not take. The registry the Bios names
// (AttributeRegistry) is found through the Registries collection's
// Location[].Uri.

// BIOSSettings is what BIOS reads.
type BIOSSettings struct {
	URI        string         // the Bios resource
	Registry   string         // its AttributeRegistry ("" none)
	Attributes map[string]any // current values
	// SettingsObject takes the pending values ("" when the BMC names none:
	// BIOS cannot be changed through it).
	SettingsObject string
	ApplyTimes     []string // @Redfish.Settings.SupportedApplyTimes
	Pending        map[string]any
	// Messages and AppliedAt are the last apply's outcome (empty before
	// any).
	Messages  []BIOSMessage
	AppliedAt string
}

// BIOSMessage is one @Redfish.Settings message.
type BIOSMessage struct {
	ID, Text string
	// Attributes are those it is about (RelatedProperties
	// #/Attributes/NAME).
	Attributes []string
}

// BIOSApply is what ApplyBIOS did.
type BIOSApply struct {
	SettingsObject string
	// Changed are the attributes PATCHed (as sent); Unchanged those
	// already at the desired value (nothing sent for them).
	Changed   map[string]any
	Unchanged []string
	// ApplyTime is the @Redfish.SettingsApplyTime sent ("" none).
	ApplyTime string
	// ResetNeeded: something was changed, and takes at the next reset.
	ResetNeeded bool
}

// BIOSResult is the read-back after the reset.
type BIOSResult struct {
	Took []string
	// Unverifiable are Password attributes: a BMC never shows them, so
	// they are sent on every apply and cannot be read back.
	Unverifiable []string
	NotTaken     []BIOSNotTaken
	// AppliedAt is when the BMC last applied settings ("" unknown).
	AppliedAt string
}

// BIOSNotTaken is one desired attribute the BIOS does not show.
type BIOSNotTaken struct {
	Attribute, Want, Have string
	// Pending: still in the settings object (no reset since, or the BMC
	// is waiting for something else).
	Pending bool
	// Message is the BMC's word about it ("" none).
	Message string
}

type rfBiosDoc struct {
	ID                string `json:"@odata.id"`
	AttributeRegistry string
	Attributes        map[string]any
	Settings          struct {
		SettingsObject      rfLink
		SupportedApplyTimes []string
		Messages            []rfMessage
		Time                string
	} `json:"@Redfish.Settings"`
	ApplyTime *struct{ ApplyTime string } `json:"@Redfish.SettingsApplyTime"`
}

// biosDoc reads the system's Bios resource (errclass.ErrUnsupported without one).
// c.mu held.
func (c *Conn) biosDoc(s *rfSession) (*rfBiosDoc, error) {
	d, err := c.discover(s)
	if err != nil {
		return nil, err
	}
	var sys struct{ Bios rfLink }
	if err := rfGet(s.api, d.system, &sys); err != nil {
		return nil, err
	}
	if sys.Bios.ID == "" {
		return nil, fmt.Errorf("%w: %s: %s links no Bios resource: BIOS settings cannot be read or changed through this BMC", errclass.ErrUnsupported, c.addr, short(d.system))
	}
	var b rfBiosDoc
	if err := rfGet(s.api, sys.Bios.ID, &b); err != nil {
		return nil, err
	}
	if b.ID == "" {
		b.ID = sys.Bios.ID
	}
	return &b, nil
}

// BIOS reads the current attributes, the settings object, its pending
// values and the last apply's messages.
func (c *Conn) BIOS(ctx context.Context) (*BIOSSettings, error) {
	if c.proto != "redfish" {
		return nil, fmt.Errorf("%w: BIOS settings need a Redfish BMC; %s is %s", errclass.ErrUnsupported, c.addr, c.proto)
	}
	var out *BIOSSettings
	err := c.rfCall(ctx, "bios read", func(ctx context.Context, s *rfSession) error {
		b, err := c.biosDoc(s)
		if err != nil {
			return err
		}
		out = &BIOSSettings{URI: b.ID, Registry: b.AttributeRegistry, Attributes: b.Attributes,
			SettingsObject: b.Settings.SettingsObject.ID, ApplyTimes: b.Settings.SupportedApplyTimes,
			AppliedAt: b.Settings.Time}
		for _, m := range b.Settings.Messages {
			out.Messages = append(out.Messages, biosMessage(m))
		}
		if out.SettingsObject != "" {
			var p rfBiosDoc
			if err := rfGet(s.api, out.SettingsObject, &p); err != nil {
				return err
			}
			out.Pending = p.Attributes
		}
		return nil
	})
	return out, err
}

func biosMessage(m rfMessage) BIOSMessage {
	bm := BIOSMessage{ID: m.MessageID, Text: m.Message}
	for _, r := range m.RelatedProperties {
		if a, ok := strings.CutPrefix(r, "#/Attributes/"); ok {
			bm.Attributes = append(bm.Attributes, a)
		}
	}
	return bm
}

// BIOSRegistry reads the attribute registry the Bios resource names:
// the Registries collection's member whose Registry (or Id) is that name,
// at its Location Uri (English first). Cached per Conn by name.
func (c *Conn) BIOSRegistry(ctx context.Context) (BIOSRegistry, error) {
	if c.proto != "redfish" {
		return nil, fmt.Errorf("%w: BIOS settings need a Redfish BMC; %s is %s", errclass.ErrUnsupported, c.addr, c.proto)
	}
	var reg BIOSRegistry
	err := c.rfCall(ctx, "bios registry", func(ctx context.Context, s *rfSession) error {
		b, err := c.biosDoc(s)
		if err != nil {
			return err
		}
		reg, err = c.biosRegistry(s, b.AttributeRegistry)
		return err
	})
	return reg, err
}

type rfRegistryFile struct {
	ID       string `json:"Id"`
	Registry string
	Location []struct {
		Language string
		URI      string `json:"Uri"`
	}
}

type rfAttributeRegistry struct {
	RegistryEntries struct {
		Attributes []struct {
			AttributeName          string
			Type                   string
			Value                  []struct{ ValueName string }
			LowerBound, UpperBound *int64
			MinLength, MaxLength   *int64
			ReadOnly               bool
			ResetRequired          bool
		}
	}
}

// biosRegistry finds and reads registry name (cached). c.mu held.
func (c *Conn) biosRegistry(s *rfSession, name string) (BIOSRegistry, error) {
	if name == "" {
		return nil, fmt.Errorf("%w: %s: the Bios resource names no AttributeRegistry: its attributes cannot be checked", errclass.ErrUnsupported, c.addr)
	}
	if reg, ok := c.biosRegs[name]; ok {
		return reg, nil
	}
	root, err := rootLinks(s)
	if err != nil {
		return nil, err
	}
	regs := root.Registries.ID
	if regs == "" {
		regs = "/redfish/v1/Registries"
	}
	var col rfCollection
	if err := rfGet(s.api, regs, &col); err != nil {
		return nil, err
	}
	// Members whose path names the registry are read first (a BMC lists
	// a dozen message registries beside it), then the others.
	base := strings.SplitN(name, ".", 2)[0]
	likely := func(m rfLink) bool { return strings.Contains(m.ID, base) }
	members := slices.Concat(slices.DeleteFunc(slices.Clone(col.Members), func(m rfLink) bool { return !likely(m) }),
		slices.DeleteFunc(slices.Clone(col.Members), likely))
	uri := ""
	for _, m := range members {
		var f rfRegistryFile
		if err := rfGet(s.api, m.ID, &f); err != nil {
			return nil, err
		}
		if f.Registry != name && f.ID != name {
			continue
		}
		for _, l := range f.Location {
			if l.URI != "" && (uri == "" || strings.HasPrefix(strings.ToLower(l.Language), "en")) {
				uri = l.URI
			}
		}
		if uri == "" {
			return nil, fmt.Errorf("%w: %s: registry file %s gives no Location Uri for %s (only an archive or a publication address): its attributes cannot be checked", errclass.ErrUnsupported, c.addr, short(m.ID), name)
		}
		break
	}
	if uri == "" {
		return nil, fmt.Errorf("%w: %s: no member of %s is attribute registry %s", errclass.ErrUnsupported, c.addr, short(regs), name)
	}
	var doc rfAttributeRegistry
	if err := rfGet(s.api, uri, &doc); err != nil {
		return nil, err
	}
	reg := BIOSRegistry{}
	for _, a := range doc.RegistryEntries.Attributes {
		ba := BIOSAttribute{Name: a.AttributeName, Type: a.Type, LowerBound: a.LowerBound, UpperBound: a.UpperBound,
			MinLength: a.MinLength, MaxLength: a.MaxLength, ReadOnly: a.ReadOnly, ResetRequired: a.ResetRequired}
		for _, v := range a.Value {
			ba.Values = append(ba.Values, v.ValueName)
		}
		reg[a.AttributeName] = ba
	}
	if len(reg) == 0 {
		return nil, fmt.Errorf("%w: %s: attribute registry %s at %s lists no attributes", errclass.ErrFailed, c.addr, name, short(uri))
	}
	if c.biosRegs == nil {
		c.biosRegs = map[string]BIOSRegistry{}
	}
	c.biosRegs[name] = reg
	return reg, nil
}

// secret: name is a Password attribute (never shown: read as null).
func (r BIOSRegistry) secret(name string) bool { return r[name].Type == "Password" }

// valueText compares a BIOS value read (string, JSON number, bool) with
// one desired.
func valueText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case int64:
		return strconv.FormatInt(x, 10)
	}
	return fmt.Sprint(v)
}

// BIOSNames maps named settings (SettingSMT, SettingSRIOV,
// SettingVirtualization) to this BMC's attributes by its vendor (see
// NamedBIOSAttributes).
func (c *Conn) BIOSNames(ctx context.Context, named map[string]bool) (map[string]string, error) {
	if c.proto != "redfish" {
		return nil, fmt.Errorf("%w: BIOS settings need a Redfish BMC; %s is %s", errclass.ErrUnsupported, c.addr, c.proto)
	}
	vendor := ""
	err := c.rfCall(ctx, "bios names", func(ctx context.Context, s *rfSession) error {
		d, err := c.discover(s)
		if err != nil {
			return err
		}
		vendor = d.vendor
		if vendor == "" {
			m, err := c.managerDoc(s, d)
			if err != nil {
				return err
			}
			if m != nil {
				vendor = m.Manufacturer
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return NamedBIOSAttributes(vendor, named)
}

// ApplyBIOS: see DayTwo. Validation and the diff are read before the
// guard; the PATCH and its read-back run inside it.
func (c *Conn) ApplyBIOS(ctx context.Context, g *guard.Guard, host string, desired map[string]string) (*BIOSApply, error) {
	if c.proto != "redfish" {
		return nil, fmt.Errorf("%w: BIOS settings need a Redfish BMC; %s is %s", errclass.ErrUnsupported, c.addr, c.proto)
	}
	if len(desired) == 0 {
		return &BIOSApply{}, nil
	}
	var (
		cur    *rfBiosDoc
		reg    BIOSRegistry
		values map[string]any
	)
	err := c.rfCall(ctx, "bios read", func(ctx context.Context, s *rfSession) error {
		var err error
		if cur, err = c.biosDoc(s); err != nil {
			return err
		}
		if cur.Settings.SettingsObject.ID == "" {
			return fmt.Errorf("%w: %s: %s names no @Redfish.Settings.SettingsObject: BIOS settings cannot be changed through this BMC", errclass.ErrUnsupported, c.addr, short(cur.ID))
		}
		if reg, err = c.biosRegistry(s, cur.AttributeRegistry); err != nil {
			return err
		}
		values, err = BIOSValues(desired, reg)
		if err != nil {
			return fmt.Errorf("%w (%s, registry %s)", err, c.addr, cur.AttributeRegistry)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := &BIOSApply{SettingsObject: cur.Settings.SettingsObject.ID, Changed: map[string]any{}}
	for _, name := range sortedNames(values) {
		if have, ok := cur.Attributes[name]; ok && !reg.secret(name) && valueText(have) == valueText(values[name]) {
			out.Unchanged = append(out.Unchanged, name)
			continue
		}
		out.Changed[name] = values[name]
	}
	if len(out.Changed) == 0 {
		return out, nil
	}
	body := map[string]any{"Attributes": out.Changed}
	if slices.Contains(cur.Settings.SupportedApplyTimes, "OnReset") {
		out.ApplyTime = "OnReset"
		body["@Redfish.SettingsApplyTime"] = map[string]string{"ApplyTime": "OnReset"}
	}
	target := out.SettingsObject
	err = g.Do(ctx, host, "bios apply", c.opts.MutationTimeout, func(ctx context.Context) error {
		return c.rfCall(ctx, "bios apply", func(ctx context.Context, s *rfSession) error {
			resp, err := s.api.Get(target)
			if err != nil {
				return err
			}
			hdr, _ := readAnswer(resp)
			h := map[string]string{}
			if et := hdr.Get("ETag"); et != "" {
				h["If-Match"] = et
			}
			resp, err = s.api.PatchWithHeaders(target, body, h)
			if err != nil {
				return c.refused(err, "PATCH of BIOS settings "+short(target))
			}
			readAnswer(resp)
			var back rfBiosDoc
			if err := rfGet(s.api, target, &back); err != nil {
				return err
			}
			var lost []string
			for _, name := range sortedNames(out.Changed) {
				if !reg.secret(name) && valueText(back.Attributes[name]) != valueText(out.Changed[name]) {
					lost = append(lost, fmt.Sprintf("%s reads back %q, sent %q", name, valueText(back.Attributes[name]), valueText(out.Changed[name])))
				}
			}
			if len(lost) > 0 {
				return fmt.Errorf("%w: %s: the BMC accepted the BIOS settings but %s does not hold them: %s", errclass.ErrFailed, c.addr, short(target), strings.Join(lost, "; "))
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	out.ResetNeeded = true
	return out, nil
}

// BIOSResult: see DayTwo.
func (c *Conn) BIOSResult(ctx context.Context, desired map[string]string) (*BIOSResult, error) {
	if c.proto != "redfish" {
		return nil, fmt.Errorf("%w: BIOS settings need a Redfish BMC; %s is %s", errclass.ErrUnsupported, c.addr, c.proto)
	}
	var (
		b       *rfBiosDoc
		pending map[string]any
		reg     BIOSRegistry
	)
	err := c.rfCall(ctx, "bios result", func(ctx context.Context, s *rfSession) error {
		var err error
		if b, err = c.biosDoc(s); err != nil {
			return err
		}
		if so := b.Settings.SettingsObject.ID; so != "" {
			var p rfBiosDoc
			if err := rfGet(s.api, so, &p); err != nil {
				return err
			}
			pending = p.Attributes
		}
		if b.AttributeRegistry != "" {
			reg, _ = c.biosRegistry(s, b.AttributeRegistry) // only to type the values; none: compare text
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	values, verr := BIOSValues(desired, reg)
	if verr != nil {
		values = map[string]any{}
		for k, v := range desired {
			values[k] = v
		}
	}
	res := &BIOSResult{AppliedAt: b.Settings.Time}
	var probs []string
	for _, name := range sortedNames(values) {
		want := valueText(values[name])
		if reg.secret(name) {
			res.Unverifiable = append(res.Unverifiable, name)
			continue
		}
		have, ok := b.Attributes[name]
		if ok && valueText(have) == want {
			res.Took = append(res.Took, name)
			continue
		}
		nt := BIOSNotTaken{Attribute: name, Want: want, Have: valueText(have)}
		_, nt.Pending = pending[name]
		for _, m := range b.Settings.Messages {
			if slices.Contains(biosMessage(m).Attributes, name) || slices.Contains(m.MessageArgs, name) {
				nt.Message = m.text()
				break
			}
		}
		res.NotTaken = append(res.NotTaken, nt)
		p := fmt.Sprintf("%s is %q, wanted %q", name, nt.Have, want)
		switch {
		case nt.Message != "":
			p += " (the BMC says " + nt.Message + ")"
		case nt.Pending:
			p += " (still pending in " + short(b.Settings.SettingsObject.ID) + ": no reset since, or the BMC has not applied it)"
		}
		probs = append(probs, p)
	}
	if len(probs) > 0 {
		at := ""
		if res.AppliedAt != "" {
			at = " (last applied " + res.AppliedAt + ")"
		}
		return res, fmt.Errorf("%w: %s: %d of %d BIOS settings did not take%s: %s", errclass.ErrFailed, c.addr, len(probs), len(values), at, strings.Join(probs, "; "))
	}
	return res, nil
}
