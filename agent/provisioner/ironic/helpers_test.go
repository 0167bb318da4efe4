package ironic_test

import "github.com/rackfence/rackfence/shared/wire"

func apiBMC(addr string) wire.BMC { return wire.BMC{Address: addr} }
