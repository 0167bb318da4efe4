package ctl

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/rackfence/rackfence/shared/api"
)

func init() {
	register(&command{
		path:  "credentials set",
		usage: "NAME --username U [--password-file F]",
		short: "Store BMC credentials that hosts name in bmc.credentials (admin)",
		long: `The password is read from --password-file (its first line; '-' reads
standard input) or, without it, prompted for on the terminal. It is never
taken from the command line, and the coordinator never returns it.

Example:
  rackfencectl credentials set r1-bmc --username admin --password-file ./r1-bmc.pass`,
		setup: credentialsSet,
	})
	register(&command{
		path:  "credentials get",
		usage: "NAME",
		short: "Show a credentials record (never the password)",
		setup: credentialsGet,
	})
}

func credentialsSet(fs *pflag.FlagSet) func(*Ctx, []string) error {
	user := fs.String("username", "", "BMC user name (required)")
	pwFile := fs.String("password-file", "", "file whose first line is the password; '-' for standard input")
	return func(x *Ctx, args []string) error {
		name, err := oneName(args, "credentials set NAME")
		if err != nil {
			return err
		}
		if *user == "" {
			return usagef("--username is required")
		}
		pw, err := x.readPassword(*pwFile)
		if err != nil {
			return err
		}
		cl, err := x.Client()
		if err != nil {
			return err
		}
		if err := cl.SetCredentials(x.ctx, name, api.Credentials{Username: *user, Password: pw}); err != nil {
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
			k.add("Username", c.Username)
			k.add("Password", "(stored, never shown)")
			k.write(w)
		})
	}
}
