package wire

// On-demand rotation of the tier's BMC account (POST
// /v1/hosts/{name}/bmc-account/rotation): recorded as the host's
// Intents.RotateCredentials; the rack's lease holder rotates at its next
// look at the host and names the request's createdIndex in its confirm
// (or off) write (BMCAccountWrite.Request), which drops the request.

// IntentRotateCredentials names the on-demand rotation request.
const IntentRotateCredentials = "rotateCredentials"

// ReasonBMCAccountRotationRequested is the host event of a request.
const ReasonBMCAccountRotationRequested = "BMCAccountRotationRequested"

// BMCAccountRotationRequest is the body of POST
// /v1/hosts/{name}/bmc-account/rotation.
type BMCAccountRotationRequest struct {
	Reason string `json:"reason,omitempty"`
}

// ValidateBMCAccountRotationRequest checks a request; errors name the field.
func ValidateBMCAccountRotationRequest(r *BMCAccountRotationRequest) error {
	if len(r.Reason) > 1024 {
		return fieldErr("reason", "is %d characters long; at most 1024 are allowed", len(r.Reason))
	}
	return nil
}
