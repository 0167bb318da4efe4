package wire

import (
	"encoding/json"
	"fmt"
	"time"
)

// Duration is a time.Duration that travels as a Go duration string ("10s").
// On input it also accepts a number of seconds.
type Duration time.Duration

// D returns the time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// MarshalJSON writes "10s".
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads "10s" or 10 (seconds).
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("invalid duration %q: %v", s, err)
		}
		*d = Duration(v)
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("duration must be a string like \"10s\" or a number of seconds")
	}
	*d = Duration(f * float64(time.Second))
	return nil
}
