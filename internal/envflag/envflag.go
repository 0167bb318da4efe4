// Package envflag implements the contract's rule that every flag of every
// rackfence binary also reads RACKFENCE_<FLAG> from the environment.
package envflag

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"
)

// Name is the environment variable of a flag: RACKFENCE_ and the flag's
// name in upper case with dashes turned to underscores.
func Name(flag string) string {
	return "RACKFENCE_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// noEnv is the pflag annotation that marks a flag Apply leaves alone.
const noEnv = "rackfence/envflag.no-env"

// CommandLineOnly marks flag name of fs as read from the command line
// only: Apply skips it. For flags that make a program do something else
// (--version), where a stray RACKFENCE_VERSION in the environment must
// not stop a daemon from starting.
func CommandLineOnly(fs *pflag.FlagSet, name string) {
	_ = fs.SetAnnotation(name, noEnv, []string{"true"})
}

// Apply fills every flag not given on the command line from its
// environment variable; repeatable (stringArray) flags take a
// comma-separated list. The error names the variable and its value.
// Flags marked CommandLineOnly are skipped.
func Apply(fs *pflag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Changed || err != nil || f.Annotations[noEnv] != nil {
			return
		}
		env := Name(f.Name)
		v, ok := os.LookupEnv(env)
		if !ok {
			return
		}
		vals := []string{v}
		if f.Value.Type() == "stringArray" {
			vals = strings.Split(v, ",")
		}
		for _, x := range vals {
			if e := fs.Set(f.Name, strings.TrimSpace(x)); e != nil {
				err = fmt.Errorf("%s=%q: %v", env, v, e)
				return
			}
		}
	})
	return err
}
