package ironic_test

import "github.com/rackfence/rackfence/shared/api"

func apiBMC(addr string) api.BMC { return api.BMC{Address: addr} }
