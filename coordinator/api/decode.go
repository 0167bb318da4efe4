package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/rackfence/rackfence/shared/wire"
)

// MaxBody is the largest request body accepted (413 above).
const MaxBody = 1 << 20

// readBody reads the request body, refusing more than MaxBody bytes.
func readBody(c echo.Context) ([]byte, error) {
	return readBodyUpTo(c, MaxBody, "1 MiB")
}

// readBodyUpTo reads the request body, refusing more than limit bytes
// (named in the refusal as size).
func readBodyUpTo(c echo.Context, limit int64, size string) ([]byte, error) {
	r := http.MaxBytesReader(c.Response(), c.Request().Body, limit)
	b, err := readAllSized(r, c.Request().ContentLength, limit)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, errf(http.StatusRequestEntityTooLarge, wire.CodeTooLarge, "request body is larger than %s", size)
		}
		return nil, errf(http.StatusBadRequest, wire.CodeBadRequest, "could not read the request body: %v", err)
	}
	return b, nil
}

// readAllSized reads r to its end. With a declared length n (0 < n <=
// limit) the buffer is allocated once at n+1 bytes (the one extra byte
// finds EOF without growing), instead of io.ReadAll's doublings from 512
// bytes; a body longer than declared still reads whole (up to limit: r is
// a MaxBytesReader).
func readAllSized(r io.Reader, n, limit int64) ([]byte, error) {
	if n <= 0 || n > limit {
		return io.ReadAll(r)
	}
	b := make([]byte, 0, n+1)
	for {
		m, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+m]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // longer than declared: grow as append does
		}
	}
}

// decodeJSON decodes one JSON object into v, rejecting unknown fields by
// name and trailing data. An empty body is allowed when optional.
func decodeJSON(b []byte, v any, optional bool) error {
	if len(bytes.TrimSpace(b)) == 0 {
		if optional {
			return nil
		}
		return badField("", "a JSON body is required")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err, b, v)
	}
	if dec.More() {
		return badField("", "the body has data after its JSON object; send exactly one object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return badField("", "the body has data after its JSON object; send exactly one object")
	}
	return nil
}

// jsonError turns a decoding error into a field error; body and v (the
// decode target) locate an unknown nested field by its path.
func jsonError(err error, body []byte, v any) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "json: unknown field "):
		f := strings.Trim(strings.TrimPrefix(msg, "json: unknown field "), `"`)
		if p := unknownFieldPath(body, v, f); p != "" {
			return badField(p, "unknown field %q", p)
		}
		return badField(f, "unknown field %q", f)
	case errors.As(err, &se):
		return badField("", "the body is not valid JSON (at byte %d): %s", se.Offset, se.Error())
	case errors.As(err, &te):
		f := te.Field
		return badField(f, "must be a JSON %s, not %s", te.Type.String(), te.Value)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return badField("", "the body ends in the middle of its JSON object")
	}
	return badField("", "the body could not be decoded: %s", strings.TrimPrefix(msg, "json: "))
}

// bind reads and decodes the body of c into v.
func bind(c echo.Context, v any, optional bool) error {
	b, err := readBody(c)
	if err != nil {
		return err
	}
	return decodeJSON(b, v, optional)
}
