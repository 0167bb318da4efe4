package configdrive

import "errors"

// ErrInvalid is returned when the content cannot go on a config drive
// (meta data that is no JSON object, network data that is no JSON).
var ErrInvalid = errors.New("invalid config drive content")
