package ctl

import (
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/spf13/pflag"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

func init() {
	register(&command{
		path:  "token create",
		usage: "--role admin|operator|viewer|agent [--rack R] [--ttl D] [--name N]",
		short: "Create an API token (admin); agent tokens are scoped to one rack",
		long: `Prints only the token on standard output, so it can go straight to a file;
its id and expiry go to standard error (-o json|yaml prints everything):
  rackfencectl token create --role agent --rack r1 --ttl 720h > /etc/rackfence/agent-r1.token
Roles: viewer reads; operator also applies hosts and intents; admin also
manages credentials, tokens and members; agent serves one rack (--rack).
Without --ttl the token never expires. The token is shown only this once;
the cluster keeps its hash. 'token list' shows ids, 'token revoke ID' ends it.`,
		setup: tokenCreate,
	})
	register(&command{
		path:  "token list",
		usage: "[--chunk-size N]",
		short: "List tokens: id, name, role, rack, creation, expiry, last use (admin; never a secret)",
		long: `LAST-USED is the last use the leader recorded, to the minute; it is written
every 30s, and requests a follower answers by itself (status, stale reads)
do not count. The list is read --chunk-size tokens a request (default 500),
rows printing as each page arrives; -o json streams one list, -o yaml prints
once every page is in.`,
		setup: tokenList,
	})
	register(&command{
		path:  "token revoke",
		usage: "ID",
		short: "Revoke a token by id (admin); every member refuses it at once",
		long: `The revocation is a Raft write: each member refuses the token as soon as it
applies it (tens of milliseconds). The last valid admin token cannot be
revoked: create another admin token first.

To rotate an agent's token with no restart:
  rackfencectl token create --role agent --rack r1 > /etc/rackfence/agent-r1.token.new
  mv /etc/rackfence/agent-r1.token.new /etc/rackfence/agent-r1.token   # the agent re-reads it
  rackfencectl token revoke OLD-ID`,
		setup: tokenRevoke,
	})
}

func tokenCreate(fs *pflag.FlagSet) func(*Ctx, []string) error {
	role := fs.String("role", "", "admin, operator, viewer or agent (required)")
	rack := fs.String("rack", "", "rack of an agent token (required with --role agent)")
	ttl := fs.Duration("ttl", 0, "how long the token is valid, e.g. 720h (default: never expires)")
	name := fs.String("name", "", "label shown in 'token list' and the audit trail (default ROLE-ID)")
	return func(x *Ctx, args []string) error {
		if len(args) > 0 {
			return usagef("token create takes no arguments")
		}
		switch *role {
		case wire.RoleAdmin, wire.RoleOperator, wire.RoleViewer:
			if *rack != "" {
				return usagef("--rack applies only to --role agent")
			}
		case wire.RoleAgent:
			if err := wire.ValidateName("--rack", *rack); err != nil {
				return usagef("--role agent needs --rack: %v", err)
			}
		case "":
			return usagef("--role is required: admin, operator, viewer or agent")
		default:
			return usagef("--role %q is not a role: use admin, operator, viewer or agent", *role)
		}
		if *ttl < 0 || (*ttl > 0 && *ttl < time.Second) {
			return usagef("--ttl %s is too short: use at least 1s, or leave it out for a token that never expires", *ttl)
		}
		if *name != "" {
			if err := wire.ValidateName("--name", *name); err != nil {
				return usagef("%v", err)
			}
		}
		req := wire.TokenRequest{Role: *role, Rack: *rack, Name: *name}
		if *ttl > 0 {
			req.TTL = ttl.String()
		}
		cl, err := x.Client()
		if err != nil {
			return err
		}
		t, err := cl.CreateToken(x.ctx, req)
		if err != nil {
			return err
		}
		return x.print(t, func(w io.Writer) {
			fmt.Fprintln(w, t.Token)
			exp := "never expires"
			if !t.ExpiresAt.IsZero() {
				exp = "expires " + t.ExpiresAt.UTC().Format(time.RFC3339)
			}
			fmt.Fprintf(x.io.Stderr, "token %s (%s, role %s%s) created; %s; shown only this once\n", t.ID, t.Name, t.Role, rackSuffix(t.Rack), exp)
		})
	}
}

func rackSuffix(rack string) string {
	if rack == "" {
		return ""
	}
	return ", rack " + rack
}

func tokenList(fs *pflag.FlagSet) func(*Ctx, []string) error {
	ch := chunkFlag(fs, "tokens", wire.DefaultPageSize, wire.MaxPageSize)
	return func(x *Ctx, args []string) error {
		if len(args) > 0 {
			return usagef("token list takes no arguments")
		}
		if err := ch.check(); err != nil {
			return err
		}
		cl, err := x.Client()
		if err != nil {
			return err
		}
		read := func(fn func(*wire.List[wire.Token]) error) error {
			return cl.TokensPages(x.ctx, x.goOnOptions(ch.n), fn)
		}
		return printPages(x, read, listPrint[wire.Token]{
			header: []string{"ID", "NAME", "ROLE", "RACK", "CREATED", "EXPIRES", "LAST-USED"},
			row: func(k *wire.Token) []string {
				exp := "never"
				if !k.ExpiresAt.IsZero() {
					exp = stamp(k.ExpiresAt)
					if k.Expired {
						exp += " (expired)"
					}
				}
				last := "never"
				if !k.LastUsed.IsZero() {
					last = stamp(k.LastUsed)
				}
				return []string{k.ID, k.Name, k.Role, k.Rack, stamp(k.CreatedAt), exp, last}
			},
			empty: "No tokens.",
		})
	}
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func tokenRevoke(fs *pflag.FlagSet) func(*Ctx, []string) error {
	return func(x *Ctx, args []string) error {
		if len(args) != 1 {
			return usagef("expected one token ID ('rackfencectl token list' shows them)")
		}
		id := args[0]
		if _, err := hex.DecodeString(id); err != nil || len(id) != 16 {
			return usagef("%q is not a token id: use the 16 hex digits 'rackfencectl token list' shows", id)
		}
		cl, err := x.Client()
		if err != nil {
			return err
		}
		t, err := cl.RevokeToken(x.ctx, id)
		if err != nil {
			if e, ok := client.AsError(err); ok && e.Status == http.StatusConflict {
				return withHints(err, "create another admin token first: rackfencectl token create --role admin")
			}
			if client.IsNotFound(err) {
				return withHints(err, "rackfencectl token list shows the tokens that exist")
			}
			return err
		}
		return x.print(t, func(w io.Writer) {
			fmt.Fprintf(w, "token %s (%s, role %s%s) revoked\n", t.ID, t.Name, t.Role, rackSuffix(t.Rack))
		})
	}
}
