package bmcaccount

import "errors"

// Errors of the BMC account manager. A rotation that fails leaves the
// coordinator's record with a password that works (the current, or the
// pending one the BMC took).
var (
	// ErrDied is returned by a Config.Step hook to stop the protocol as a
	// killed agent would (tests).
	ErrDied = errors.New("bmcaccount: stopped at a protocol step")
	// ErrOperatorAuth: the BMC refused the operator's credentials (the
	// ones the host names), so the tier's account cannot be managed; the
	// message says what to fix.
	ErrOperatorAuth = errors.New("the BMC refused the operator's credentials")
	// errNotRedfish: the host's BMC is not Redfish (IPMI): the fence at
	// the BMC is off for it.
	errNotRedfish = errors.New("the BMC address is not redfish://")
	// errNoAccountService: the BMC publishes no Redfish AccountService.
	errNoAccountService = errors.New("the BMC publishes no Redfish AccountService (or it has no Accounts collection)")
)

// OffIronic is why the fence at the BMC is off with --provisioner ironic.
const OffIronic = "the fence at the BMC is off with --provisioner ironic: Ironic keeps the BMC password in the node's driver_info and " +
	"makes every BMC call with it, so a rotation would have to change Ironic and the BMC in one protocol, which the agent does not do; " +
	"the operator's credentials are used. Use --provisioner direct for the fence at the BMC"
