package ctl

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/rackfence/rackfence/shared/wire"
)

func init() {
	register(&command{
		path:  "credentials set",
		usage: "NAME [--username U [--password-file F]] [--from-file KEY=PATH]... [--from-literal KEY=VALUE]...",
		short: "Store BMC credentials and/or data (user data, network data, meta data) that hosts name (admin)",
		long: `A record holds a BMC's username and password (hosts name it in
bmc.credentials), a data map (hosts name it in userData, networkData,
metaData, preprovisioningNetworkData), or both. Setting a record replaces
all of it: give every key again.

The password is read from --password-file (its first line; '-' reads
standard input) or, without it, prompted for on the terminal. It is never
taken from the command line, and the coordinator never returns it.

Data: --from-file KEY=PATH stores a file's content under KEY (--from-file
PATH uses the file's name as the key); --from-literal KEY=VALUE stores
VALUE. Both repeat. Keys are letters, digits, '-', '_' and '.'; a record
holds at most 256 KiB. A host's userData reads the key userData,
networkData and preprovisioningNetworkData read networkData, metaData
reads metaData; a record with a single key "value" serves any of them.
Network and meta data must be JSON objects. Values are sealed like
passwords and never shown: get and list show only the keys.

Examples:
  rackfencectl credentials set r1-bmc --username admin --password-file ./r1-bmc.pass
  rackfencectl credentials set web-0-data --from-file userData=./cloud-init.yaml \
      --from-file networkData=./network_data.json
  rackfencectl credentials set ssh-keys --from-literal metaData='{"public_keys":{"ops":"ssh-ed25519 AAAA..."}}'`,
		setup: credentialsSet,
	})
	register(&command{
		path:  "credentials get",
		usage: "NAME",
		short: "Show a credentials record: username and data keys (never the password or a data value)",
		setup: credentialsGet,
	})
}

func credentialsSet(fs *pflag.FlagSet) func(*Ctx, []string) error {
	user := fs.String("username", "", "BMC user name (required, except for a record holding only data)")
	pwFile := fs.String("password-file", "", "file whose first line is the password; '-' for standard input")
	files := fs.StringArray("from-file", nil, "KEY=PATH: store the file's content under data key KEY (repeatable; PATH alone: the file's name is the key)")
	literals := fs.StringArray("from-literal", nil, "KEY=VALUE: store VALUE under data key KEY (repeatable)")
	return func(x *Ctx, args []string) error {
		name, err := oneName(args, "credentials set NAME")
		if err != nil {
			return err
		}
		data, err := readData(*files, *literals)
		if err != nil {
			return err
		}
		if *user == "" && data == nil {
			return usagef("--username is required (or --from-file/--from-literal for a record holding only data)")
		}
		if *user == "" && *pwFile != "" {
			return usagef("--password-file needs --username")
		}
		var pw string
		if *user != "" {
			if pw, err = x.readPassword(*pwFile); err != nil {
				return err
			}
		}
		cl, err := x.Client()
		if err != nil {
			return err
		}
		if err := cl.SetCredentials(x.ctx, name, wire.Credentials{Username: *user, Password: pw, Data: data}); err != nil {
			return err
		}
		fmt.Fprintf(x.io.Stdout, "credentials/%s set\n", name)
		return nil
	}
}

func (x *Ctx) readPassword(file string) (string, error) {
	var line string
	switch {
	case file == "-":
		s, err := bufio.NewReader(x.io.Stdin).ReadString('\n')
		if err != nil && err != io.EOF {
			return "", usagef("cannot read the password from standard input: %v", err)
		}
		line = s
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return "", usagef("cannot read --password-file: %v", err)
		}
		line, _, _ = strings.Cut(string(b), "\n")
	default:
		f, ok := x.io.Stdin.(*os.File)
		if !ok || !x.io.IsTerminal(f) {
			return "", usagef("--password-file F is required when standard input is not a terminal ('-' reads it from standard input)")
		}
		fmt.Fprint(x.io.Stderr, "Password: ")
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(x.io.Stderr)
		if err != nil {
			return "", failf("cannot read the password: %v", err)
		}
		line = string(b)
	}
	pw := strings.TrimRight(line, "\r\n")
	if pw == "" {
		return "", usagef("the password is empty")
	}
	return pw, nil
}

func credentialsGet(fs *pflag.FlagSet) func(*Ctx, []string) error {
	return func(x *Ctx, args []string) error {
		name, err := oneName(args, "credentials get NAME")
		if err != nil {
			return err
		}
		cl, err := x.Client()
		if err != nil {
			return err
		}
		c, err := cl.GetCredentials(x.ctx, name)
		if err != nil {
			return err
		}
		c.Password = ""
		if c.Name == "" {
			c.Name = name
		}
		return x.print(c, func(w io.Writer) {
			k := &kv{}
			k.add("Name", c.Name)
			k.add("Username", dashIfEmpty(c.Username))
			if c.Username != "" {
				k.add("Password", "(stored, never shown)")
			}
			if len(c.DataKeys) > 0 {
				k.add("Data keys", strings.Join(c.DataKeys, ", ")+" (values sealed, never shown)")
			}
			k.write(w)
		})
	}
}
