package provisioner

import (
	"context"

	"github.com/rackfence/rackfence/shared/wire"
)

// HealthReading is one sensor reading of a health read (for metrics):
// Kind wire.HealthTemperature (°C) or wire.HealthFan (the BMC's unit).
type HealthReading struct {
	Kind, Name string
	Value      float64
}

// HealthReader is implemented by a provisioner that reads a host's
// hardware health from its BMC (read-only, not guarded). A nil health and
// no error: the BMC reports none (IPMI).
type HealthReader interface {
	ReadHealth(ctx context.Context, h Host) (*wire.HardwareHealth, []HealthReading, error)
}
