package wire

import (
	"net/url"
	"strings"
)

// ValidateBMCTask checks the body of POST /v1/hosts/{name}/task.
func ValidateBMCTask(r *BMCTaskRequest) error {
	if r.Epoch == 0 {
		return fieldErr("epoch", "is required: the epoch of the rack lease the agent holds")
	}
	if r.CreatedIndex == 0 {
		return fieldErr("createdIndex", "is required: the host's createdIndex as the agent knows it")
	}
	if err := checkOneOf("kind", r.Kind, BMCTaskKinds); err != nil {
		return err
	}
	if r.TaskURI == "" {
		return fieldErr("taskURI", "is required: the BMC's task monitor, which a new lease holder follows")
	}
	if err := validateTaskURI("taskURI", r.TaskURI); err != nil {
		return err
	}
	job := r.Kind == BMCTaskRAID || r.Kind == BMCTaskErase
	switch {
	case r.Kind == BMCTaskFirmware && r.Component == "":
		return fieldErr("component", "is required for a firmware task: the component being updated")
	case r.Kind == BMCTaskBIOS && r.Component != "":
		return fieldErr("component", "only applies to a firmware, raid or erase task")
	case !job && len(r.Component) > maxDayTwoString:
		return fieldErr("component", "is %d characters long; at most %d are allowed", len(r.Component), maxDayTwoString)
	case job && len(r.Component) > 1024:
		return fieldErr("component", "is %d characters long; at most 1024 are allowed (the operation and the URI of the volume or drive)", len(r.Component))
	case job && strings.ContainsAny(r.Component, "\t\r\n"):
		return fieldErr("component", "%q holds a tab or line break: it is the operation and the URI of the volume or drive it acts on (\"Drive.SecureErase /redfish/v1/…/Drives/0\")", r.Component)
	case r.Kind != BMCTaskFirmware && r.FromVersion != "":
		return fieldErr("fromVersion", "only applies to a firmware task")
	case len(r.FromVersion) > maxDayTwoString:
		return fieldErr("fromVersion", "is %d characters long; at most %d are allowed", len(r.FromVersion), maxDayTwoString)
	}
	return nil
}

// ValidateBMCTaskEnd checks the body of DELETE /v1/hosts/{name}/task.
func ValidateBMCTaskEnd(r *BMCTaskEnd) error {
	if r.Epoch == 0 {
		return fieldErr("epoch", "is required: the epoch of the rack lease the agent holds")
	}
	if err := checkOneOf("outcome", r.Outcome, BMCTaskOutcomes); err != nil {
		return err
	}
	if r.TaskURI != "" {
		if err := validateTaskURI("taskURI", r.TaskURI); err != nil {
			return err
		}
	}
	if err := checkLen("message", r.Message, 1024); err != nil {
		return err
	}
	return nil
}

// validateTaskURI accepts a BMC path (/redfish/v1/TaskService/Tasks/7) or
// an absolute http(s) URL, at most 1024 characters.
func validateTaskURI(field, v string) error {
	if err := checkLen(field, v, 1024); err != nil {
		return err
	}
	u, err := url.Parse(v)
	ok := err == nil && (strings.HasPrefix(v, "/") && u.Host == "" ||
		(u.Scheme == "http" || u.Scheme == "https") && u.Host != "")
	if !ok || strings.ContainsAny(v, " \t\r\n") {
		return fieldErr(field, "%q is neither a BMC path (/redfish/v1/TaskService/Tasks/ID) nor an http(s) URL", v)
	}
	return nil
}
