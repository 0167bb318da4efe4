package artifact

import (
	"errors"
	"fmt"
	"strings"
)

// Errors of the artifact server. Callers match them with errors.Is; the
// messages around them name the image, the digests and what to do.
var (
	// ErrChecksumMismatch: the image fetched from its origin does not
	// match the spec's checksum; nothing of it is served.
	ErrChecksumMismatch = errors.New("image checksum mismatch")
	// ErrNoChecksum: the image has no checksum, so it cannot be cached
	// (the checksum is its cache key and its verification).
	ErrNoChecksum = errors.New("image has no checksum to cache it by")
	// ErrTooLarge: the image is larger than the whole cache.
	ErrTooLarge = errors.New("image larger than the image cache")
	// ErrNoCache: the server has no image cache (no --image-cache-dir).
	ErrNoCache = errors.New("no image cache")
	// ErrChecksumFile: image.checksum is the URL of a checksum file that
	// was refused (not 200) or has no usable digest for the image.
	ErrChecksumFile = errors.New("image checksum file unusable")
	// ErrOrigin: the image's origin (or its checksum file's) did not serve it.
	ErrOrigin = errors.New("image origin failed")
)

// MismatchError is ErrChecksumMismatch with what was fetched: the
// image's origin, the digest the spec gives (Want) and the one its bytes
// have (Got), both lower-case hex of Algo.
type MismatchError struct {
	Algo, URL, Got, Want string
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("%v: %s from %s is %s, the spec's image.checksum says %s: fix image.checksum or the image at its origin",
		ErrChecksumMismatch, strings.ToUpper(e.Algo), e.URL, e.Got, e.Want)
}

// Is makes errors.Is(err, ErrChecksumMismatch) true.
func (e *MismatchError) Is(target error) bool { return target == ErrChecksumMismatch }
