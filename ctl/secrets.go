package ctl

import (
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rackfence/rackfence/shared/seal"
)

func init() {
	register(&command{
		path:  "secrets status",
		usage: "",
		short: "Show the secrets keys and how many credentials each seals (admin)",
		long: `Answered by the leader about its own key file; with --stale by the member
reached (use it against each member in turn to check every key file).
A key marked "missing" seals credentials but is not in that member's key
file: add it there and send SIGHUP before it has to reveal them.
Never shows key material.`,
		setup: secretsStatus,
	})
	register(&command{
		path:  "secrets reencrypt",
		usage: "",
		short: "Re-seal every credentials record under the primary key (admin)",
		long: `Run after adding a new key (last line of every member's key file, then
SIGHUP): records sealed under older keys, and plaintext records written by
versions before sealing, are sealed under the new primary key. Then the
old key can be removed. Exit 1 if any record could not be re-sealed.`,
		setup: secretsReencrypt,
	})
	register(&command{
		path:  "secrets keygen",
		usage: "--key-file PATH",
		short: "Create a secrets key file, or add a new primary key to one (local, no coordinator)",
		long: `Works on the file only: it never contacts the coordinator. Prints the new
key's ID, never the key. Copy the resulting file to every member (mode
0600), send each SIGHUP, then run "rackfencectl secrets reencrypt".

Example (rotation):
  rackfencectl secrets keygen --key-file /var/lib/rackfence/secrets.key`,
		setup: secretsKeygen,
	})
}

func secretsStatus(fs *pflag.FlagSet) func(*Ctx, []string) error {
	stale := fs.Bool("stale", false, "ask the member reached about its own key file instead of the leader")
	return func(x *Ctx, args []string) error {
		if len(args) > 0 {
			return usagef("secrets status takes no arguments")
		}
		cl, err := x.Client()
		if err != nil {
			return err
		}
		st, err := cl.WithStale(*stale).SecretsStatus(x.ctx)
		if err != nil {
			return err
		}
		return x.print(st, func(w io.Writer) {
			k := &kv{}
			k.add("Member", st.NodeID)
			k.add("Key file", st.KeyFile)
			k.add("Primary key", st.Primary)
			k.add("Credentials", strconv.Itoa(st.Credentials))
			k.add("Plaintext (legacy)", strconv.Itoa(st.Plaintext))
			k.write(w)
			fmt.Fprintln(w)
			t := &table{header: []string{"KEY", "PRIMARY", "IN KEY FILE", "CREDENTIALS"}}
			for _, key := range st.Keys {
				p, loaded := "", "yes"
				if key.Primary {
					p = "yes"
				}
				if !key.Loaded {
					loaded = "MISSING"
				}
				t.add(key.ID, p, loaded, strconv.Itoa(key.Credentials))
			}
			if len(st.Keys) == 0 {
				fmt.Fprintln(w, "No keys on this member.")
				return
			}
			t.write(w, x.tableWidth())
		})
	}
}

func secretsReencrypt(fs *pflag.FlagSet) func(*Ctx, []string) error {
	return func(x *Ctx, args []string) error {
		if len(args) > 0 {
			return usagef("secrets reencrypt takes no arguments")
		}
		cl, err := x.Client()
		if err != nil {
			return err
		}
		res, err := cl.Reencrypt(x.ctx)
		if err != nil {
			return err
		}
		if err := x.print(res, func(w io.Writer) {
			fmt.Fprintf(w, "re-sealed %d, already under %s %d, changed meanwhile %d, failed %d\n",
				res.Resealed, res.Primary, res.Unchanged, res.Skipped, len(res.Failed))
			for _, f := range res.Failed {
				fmt.Fprintf(w, "  %s: %s\n", f.Name, f.Error)
			}
		}); err != nil {
			return err
		}
		if len(res.Failed) > 0 {
			names := make([]string, len(res.Failed))
			for i, f := range res.Failed {
				names[i] = f.Name
			}
			return failf("%d credentials records were not re-sealed (%s): add the keys they name to the leader's key file, send it SIGHUP and run this again",
				len(res.Failed), strings.Join(names, ", "))
		}
		return nil
	}
}

func secretsKeygen(fs *pflag.FlagSet) func(*Ctx, []string) error {
	file := fs.String("key-file", "", "key file to create, or to add a new primary key to (required)")
	return func(x *Ctx, args []string) error {
		if len(args) > 0 {
			return usagef("secrets keygen takes no arguments")
		}
		if *file == "" {
			return usagef("--key-file is required (a member's --secrets-key-file, by default DATA/secrets.key)")
		}
		k, err := seal.Load(*file)
		created := false
		switch {
		case err == nil:
			k, err = k.WithNewKey()
		case errors.Is(err, iofs.ErrNotExist):
			created = true
			k, err = seal.Generate()
		}
		if err != nil {
			return failf("%v", err)
		}
		if err := k.Save(*file); err != nil {
			return failf("write %s: %v", *file, err)
		}
		out := struct {
			File    string   `json:"file"`
			Created bool     `json:"created"`
			Primary string   `json:"primary"`
			Keys    []string `json:"keys"`
		}{*file, created, k.Primary(), k.IDs()}
		return x.print(out, func(w io.Writer) {
			verb := "added new primary key"
			if created {
				verb = "created with key"
			}
			fmt.Fprintf(w, "%s: %s %s (keys: %s)\n", *file, verb, k.Primary(), strings.Join(k.IDs(), ", "))
			fmt.Fprintln(w, "Copy this file to every member (mode 0600), send each SIGHUP, then run: rackfencectl secrets reencrypt")
		})
	}
}
