package bmc

import "github.com/go-logr/logr"

// logrDiscard keeps bmclib's logr output away: it can be verbose and is not
// structured the way the agent logs.
func logrDiscard() logr.Logger { return logr.Discard() }
