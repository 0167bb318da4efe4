package artifact

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// Checksum files: metal3's image.checksum may be the URL of a file next to
// the image (IMAGE.sha256sum, CHECKSUM, SHA256SUMS) rather than the digest.
// The cache fetches it, takes the line for the image's file name and
// verifies the image against that digest.

// maxChecksumFile bounds what is read of a checksum file.
const maxChecksumFile = 1 << 20

// checksumFileTimeout bounds one fetch of a checksum file.
const checksumFileTimeout = time.Minute

var (
	// HEX  NAME or HEX *NAME (GNU coreutils, text and binary mode).
	gnuLine = regexp.MustCompile(`^([0-9a-fA-F]+)\s+\*?(.+)$`)
	// ALGO (NAME) = HEX (BSD, and GNU's --tag).
	bsdLine = regexp.MustCompile(`^([A-Za-z0-9-]+)\s*\((.+)\)\s*=\s*([0-9a-fA-F]+)$`)
	hexOnly = regexp.MustCompile(`^[0-9a-fA-F]+$`)
)

// bsdAlgos maps a BSD line's tag to a checksum type.
var bsdAlgos = map[string]string{"MD5": wire.ChecksumMD5, "SHA256": wire.ChecksumSHA256, "SHA2-256": wire.ChecksumSHA256,
	"SHA512": wire.ChecksumSHA512, "SHA2-512": wire.ChecksumSHA512}

// ParseChecksumFile returns the digest a checksum file gives for the file
// name (and the algorithm its line names, "" when the line does not):
// GNU lines (HEX  NAME, HEX *NAME), BSD lines (SHA256 (NAME) = HEX), or a
// file holding a single digest and nothing else. A line's name matches
// when it, or its last path element, is name.
func ParseChecksumFile(data []byte, name string) (hex, algo string, err error) {
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), maxChecksumFile)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	if err := sc.Err(); err != nil {
		return "", "", err
	}
	if len(lines) == 1 && hexOnly.MatchString(lines[0]) {
		return lines[0], "", nil
	}
	same := func(n string) bool {
		n = strings.TrimSpace(n)
		return n == name || path.Base(n) == name
	}
	for _, l := range lines {
		if m := bsdLine.FindStringSubmatch(l); m != nil && same(m[2]) {
			a, ok := bsdAlgos[strings.ToUpper(m[1])]
			if !ok {
				return "", "", fmt.Errorf("the line for %s is %s, which rackfence does not verify (md5, sha256, sha512)", name, m[1])
			}
			return m[3], a, nil
		}
		if m := gnuLine.FindStringSubmatch(l); m != nil && same(m[2]) {
			return m[1], "", nil
		}
	}
	return "", "", fmt.Errorf("no line for %s (expected HEX  %s, HEX *%s, ALGO (%s) = HEX, or a single digest)", name, name, name, name)
}

// resolveChecksum returns im with its checksum file's digest in place of
// the file's URL (im itself when the checksum is no URL). Errors name the
// URL: ErrChecksumFile when the file is refused or has no usable line,
// ErrOrigin when it cannot be reached.
func (s *Server) resolveChecksum(ctx context.Context, im *wire.Image) (*wire.Image, error) {
	cu := im.ChecksumURL()
	if cu == "" {
		return im, nil
	}
	out, err := s.readChecksumFile(ctx, im, cu)
	switch {
	case err == nil:
		s.m.checksumFiles.WithLabelValues("ok").Inc()
	case errors.Is(err, ErrOrigin):
		s.m.checksumFiles.WithLabelValues("unreachable").Inc()
	default:
		s.m.checksumFiles.WithLabelValues("refused").Inc()
	}
	if err != nil {
		s.log.Warn("image checksum file not usable", "url", cu, "image", im.URL, "err", err.Error())
	}
	return out, err
}

func (s *Server) readChecksumFile(ctx context.Context, im *wire.Image, cu string) (*wire.Image, error) {
	name := "image"
	if p, err := urlPath(im.URL); err == nil && path.Base(p) != "/" && path.Base(p) != "." {
		name = path.Base(p)
	}
	ctx, cancel := context.WithTimeout(ctx, checksumFileTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cu, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: image.checksum %q: %v", ErrChecksumFile, cu, err)
	}
	resp, err := s.cfg.Origin.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: checksum file GET %s: %v: check that the agent reaches it", ErrOrigin, cu, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: GET %s answered %s: fix image.checksum (the URL of the image's checksum file) or serve the file", ErrChecksumFile, cu, resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxChecksumFile+1))
	if err != nil {
		return nil, fmt.Errorf("%w: checksum file reading %s: %v", ErrOrigin, cu, err)
	}
	if len(data) > maxChecksumFile {
		return nil, fmt.Errorf("%w: %s is more than %d bytes: is it a checksum file?", ErrChecksumFile, cu, maxChecksumFile)
	}
	sum, algo, err := ParseChecksumFile(data, name)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v: fix the file or image.checksum", ErrChecksumFile, cu, err)
	}
	out := *im
	out.Checksum = sum
	if t := im.ChecksumType; t != "" && t != wire.ChecksumAuto {
		if algo != "" && algo != t {
			return nil, fmt.Errorf("%w: %s: the line for %s is %s, image.checksumType says %s", ErrChecksumFile, cu, name, algo, t)
		}
	} else if algo != "" {
		out.ChecksumType = algo
	}
	if a, _ := out.ChecksumAlgo(); a == "" || !keyRE.MatchString(a+"-"+strings.ToLower(sum)) {
		return nil, fmt.Errorf("%w: %s: the digest for %s (%d hex digits) is no %s: fix the file or image.checksumType",
			ErrChecksumFile, cu, name, len(sum), orAlgos(a))
	}
	s.log.Debug("image checksum read from its checksum file", "url", cu, "image", im.URL, "checksum", out.Checksum, "type", out.ChecksumType)
	return &out, nil
}

func orAlgos(a string) string {
	if a == "" {
		return "md5 (32), sha256 (64) or sha512 (128)"
	}
	return a
}
