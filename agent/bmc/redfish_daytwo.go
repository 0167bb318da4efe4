package bmc

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"

	"github.com/stmcginnis/gofish/common"

	"github.com/rackfence/rackfence/agent/errclass"
)

// Helpers shared by the day-two files (redfish_bios.go, redfish_update.go,
// redfish_task.go, redfish_storage.go): the BMC's own words from an error
// answer, the service root's day-two links, matching a resource by Id or
// URI.

// rfMessage is a Redfish Message (Task.Messages, @Redfish.Settings.Messages,
// an error's @Message.ExtendedInfo).
type rfMessage struct {
	MessageID         string `json:"MessageId"`
	Message           string
	MessageArgs       []string
	RelatedProperties []string
	Severity          string
	MessageSeverity   string
}

// text is "MessageId: Message" (or whichever of them is set).
func (m rfMessage) text() string {
	switch {
	case m.MessageID == "":
		return m.Message
	case m.Message == "":
		return m.MessageID
	}
	return m.MessageID + ": " + m.Message
}

func messagesText(ms []rfMessage) string {
	out := make([]string, 0, len(ms))
	for _, m := range ms {
		if t := m.text(); t != "" {
			out = append(out, t)
		}
	}
	return strings.Join(out, "; ")
}

// bmcRefusal is the status and the BMC's message of an error answer
// (gofish's common.Error); ok false when err is not one.
func bmcRefusal(err error) (status int, msg string, ok bool) {
	var ge *common.Error
	if !errors.As(err, &ge) || ge.HTTPReturnedStatusCode == 0 {
		return 0, "", false
	}
	var ms []string
	for _, x := range ge.ExtendedInfos {
		if t := (rfMessage{MessageID: x.MessageID, Message: x.Message}).text(); t != "" {
			ms = append(ms, t)
		}
	}
	switch {
	case len(ms) > 0:
		msg = strings.Join(ms, "; ")
	case ge.Code != "" || ge.Message != "":
		msg = (rfMessage{MessageID: ge.Code, Message: ge.Message}).text()
	}
	msg = strings.Join(strings.Fields(msg), " ")
	if len(msg) > 600 {
		msg = msg[:597] + "..."
	}
	return ge.HTTPReturnedStatusCode, msg, true
}

// refused turns the BMC's refusal of what (a 4xx or 5xx answer) into an
// error of its class quoting the BMC's message. Anything else — no
// answer, and 401/403, which the session layer answers with one re-login —
// is returned as it is for inSession to classify.
func (c *Conn) refused(err error, what string) error {
	status, msg, ok := bmcRefusal(err)
	if !ok || status == http.StatusUnauthorized || status == http.StatusForbidden {
		return err
	}
	if msg == "" {
		msg = "no message"
	}
	switch {
	case status >= 500 && status != http.StatusNotImplemented:
		return fmt.Errorf("%w: %s: %s: the BMC answered %d (%s); retry later", errclass.ErrTransient, c.addr, what, status, msg)
	case status == http.StatusNotFound || status == http.StatusMethodNotAllowed || status == http.StatusNotImplemented:
		return fmt.Errorf("%w: %s: %s: the BMC answered %d: it does not offer this (%s)", errclass.ErrUnsupported, c.addr, what, status, msg)
	}
	return fmt.Errorf("%w: %s: %s: the BMC refused it with %d: %s", errclass.ErrFailed, c.addr, what, status, msg)
}

// readAnswer reads a mutation's answer: its headers and up to 4 MiB of
// body (closed).
func readAnswer(resp *http.Response) (http.Header, []byte) {
	if resp == nil {
		return http.Header{}, nil
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	return resp.Header, body
}

// rfRootLinks are the service root's links day two follows.
type rfRootLinks struct {
	UpdateService rfLink
	Tasks         rfLink
	Registries    rfLink
}

// rootLinks reads the service root's day-two links.
func rootLinks(s *rfSession) (*rfRootLinks, error) {
	var r rfRootLinks
	if err := rfGet(s.api, "/redfish/v1", &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// idOf is a resource's Id, else the last segment of its URI (some BMCs
// list resources without Id).
func idOf(id, uri string) string {
	if id != "" {
		return id
	}
	return path.Base(strings.TrimRight(uri, "/"))
}

// sameRef says whether ref (an Id or a URI, with or without a trailing
// slash) names the resource with id at uri.
func sameRef(ref, id, uri string) bool {
	ref = strings.TrimRight(ref, "/")
	return ref != "" && (ref == strings.TrimRight(uri, "/") || ref == id)
}

// jsonRaw decodes body into v when it is a JSON object; false otherwise.
func jsonRaw(body []byte, v any) bool {
	b := strings.TrimSpace(string(body))
	return strings.HasPrefix(b, "{") && json.Unmarshal(body, v) == nil
}
