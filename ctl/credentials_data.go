package ctl

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rackfence/rackfence/shared/wire"
)

func init() {
	register(&command{
		path:  "credentials list",
		usage: "[--chunk-size N]",
		short: "List credentials records: usernames and data keys (never a password or a data value)",
		long: `The list is read --chunk-size records a request (default 500), rows
printing as each page arrives; -o json streams one list, -o yaml prints
once every page is in.`,
		setup: credentialsList,
	})
}

// readData builds a record's data map from --from-file KEY=PATH (or PATH,
// keyed by its base name, as kubectl does) and --from-literal KEY=VALUE.
func readData(files, literals []string) (map[string]string, error) {
	data := map[string]string{}
	put := func(flag, k, v string) error {
		if err := wire.ValidateDataKey(flag, k); err != nil {
			return usagef("%v", err)
		}
		if _, dup := data[k]; dup {
			return usagef("%s: key %q is given twice", flag, k)
		}
		data[k] = v
		return nil
	}
	for _, f := range files {
		k, path, ok := strings.Cut(f, "=")
		if !ok {
			k, path = filepath.Base(f), f
		}
		if path == "" {
			return nil, usagef("--from-file %s: no file after '=' (use --from-file KEY=PATH)", f)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, usagef("--from-file %s: %v", f, err)
		}
		if err := put("--from-file", k, string(b)); err != nil {
			return nil, err
		}
	}
	for _, l := range literals {
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			return nil, usagef("--from-literal %q: use --from-literal KEY=VALUE", l)
		}
		if err := put("--from-literal", k, v); err != nil {
			return nil, err
		}
	}
	if len(data) == 0 {
		return nil, nil
	}
	if err := wire.ValidateCredentialsData(data); err != nil {
		return nil, usagef("%v", err)
	}
	return data, nil
}

func credentialsList(fs *pflag.FlagSet) func(*Ctx, []string) error {
	ch := chunkFlag(fs, "records", wire.DefaultPageSize, wire.MaxPageSize)
	return func(x *Ctx, args []string) error {
		if len(args) > 0 {
			return usagef("credentials list takes no arguments")
		}
		if err := ch.check(); err != nil {
			return err
		}
		cl, err := x.Client()
		if err != nil {
			return err
		}
		read := func(fn func(*wire.List[wire.Credentials]) error) error {
			return cl.CredentialsPages(x.ctx, x.goOnOptions(ch.n), fn)
		}
		return printPages(x, read, listPrint[wire.Credentials]{
			header: []string{"NAME", "USERNAME", "DATA KEYS"},
			row: func(c *wire.Credentials) []string {
				return []string{c.Name, dashIfEmpty(c.Username), dashIfEmpty(strings.Join(c.DataKeys, ","))}
			},
			empty: "No credentials.",
		})
	}
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
