package wire

import (
	"strconv"
	"time"
)

// ParamAfter's value on the lists that take it: the last item already
// read, by the key the list is sorted on. A list that outlived its view
// (list_expired) goes on there, at a new index.

// CredentialsAfter is the after value that goes on after credentials
// record c (GET /v1/credentials, sorted by name): its name.
func CredentialsAfter(c *Credentials) string { return c.Name }

// TokenAfter is the after value that goes on after token k (GET
// /v1/tokens, sorted by creation time, then id): "CREATED,ID", its
// createdAt as RFC 3339 with nanoseconds, a comma, its id.
func TokenAfter(k *Token) string {
	return k.CreatedAt.UTC().Format(time.RFC3339Nano) + "," + k.ID
}

// LeaseAfter is the after value that goes on after lease record r (GET
// /v1/racks/{rack}/leases, sorted by epoch): its epoch.
func LeaseAfter(r *LeaseRecord) string { return strconv.FormatUint(r.Epoch, 10) }
