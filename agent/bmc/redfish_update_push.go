package bmc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"path"
	"strings"

	"github.com/rackfence/rackfence/agent/errclass"
)

// The multipart push (UpdateService.MultipartHttpPushUri), for BMCs that
// offer no SimpleUpdate (OpenBMC): the agent fetches the image and sends
// it in the POST.

// pushBody fetches the image at imageURL and builds the multipart body
// of a push to MultipartHttpPushUri: UpdateParameters {Targets,
// @Redfish.OperationApplyTime Immediate} and UpdateFile (the image, named
// as the URL names it).
func pushBody(ctx context.Context, imageURL, target string) ([]byte, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, imageURL, nil)
	if err != nil {
		return nil, "", fmt.Errorf("%w: firmware image %s: %v", errclass.ErrFailed, imageURL, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, "", fmt.Errorf("%w: fetching firmware image %s to push it: %v; check the image server", errclass.ErrTransient, imageURL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		cls := errclass.ErrFailed
		if resp.StatusCode >= 500 {
			cls = errclass.ErrTransient
		}
		return nil, "", fmt.Errorf("%w: fetching firmware image %s to push it: the server answered %s", cls, imageURL, resp.Status)
	}
	img, err := io.ReadAll(io.LimitReader(resp.Body, MaxPushImageBytes+1))
	if err != nil {
		return nil, "", fmt.Errorf("%w: fetching firmware image %s: %v", errclass.ErrTransient, imageURL, err)
	}
	if len(img) > MaxPushImageBytes {
		return nil, "", fmt.Errorf("%w: firmware image %s is larger than %d MiB, more than the agent pushes", errclass.ErrFailed, imageURL, MaxPushImageBytes>>20)
	}
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	params, _ := json.Marshal(map[string]any{"Targets": []string{target}, "@Redfish.OperationApplyTime": "Immediate"})
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="UpdateParameters"`)
	h.Set("Content-Type", "application/json")
	pw, _ := w.CreatePart(h)
	_, _ = pw.Write(params)
	name := path.Base(strings.TrimRight(mustPath(imageURL), "/"))
	if name == "" || name == "." || name == "/" {
		name = "image"
	}
	h = textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="UpdateFile"; filename=%q`, name))
	h.Set("Content-Type", "application/octet-stream")
	fw, _ := w.CreatePart(h)
	_, _ = fw.Write(img)
	if err := w.Close(); err != nil {
		return nil, "", fmt.Errorf("%w: building the push of %s: %v", errclass.ErrFailed, imageURL, err)
	}
	return buf.Bytes(), w.FormDataContentType(), nil
}

func mustPath(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return p.Path
}
