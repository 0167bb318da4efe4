package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/rackfence/rackfence/coordinator"
	"github.com/rackfence/rackfence/internal/envflag"
)

// recoveredFile records a lost-quorum recovery in the data dir; the next
// start logs it (and removes it).
const recoveredFile = "recovered.json"

// Recovery is what recover did.
type Recovery struct {
	Time   time.Time               `json:"time"`
	Before []coordinator.Server    `json:"before"`
	After  coordinator.Server      `json:"after"`
	Member *coordinator.Inspection `json:"member"`
}

func recoverMain(args []string) int {
	var dataDir, raftAddr, out string
	var sure bool
	fs := pflag.NewFlagSet("rackfence-coordinator recover", pflag.ContinueOnError)
	fs.StringVar(&dataDir, "data-dir", "", "data dir of the stopped surviving member to recover")
	fs.StringVar(&raftAddr, "raft-addr", "", "its Raft address (default: the one in its last configuration)")
	fs.BoolVar(&sure, "i-understand-this-may-lose-writes", false, "required: writes the other members held and this one did not are lost")
	fs.StringVarP(&out, "output", "o", "text", "text or json")
	// The confirmation must be typed: never taken from the environment.
	envflag.CommandLineOnly(fs, "i-understand-this-may-lose-writes")
	validate := func() error {
		if dataDir == "" {
			return errors.New("--data-dir is required: the stopped surviving member's data dir (pick the member whose 'rackfence-coordinator inspect' shows the highest last index)")
		}
		if !sure {
			return errors.New("recover makes this member a cluster of one and may lose writes only the other members held: " +
				"run 'rackfence-coordinator inspect --data-dir DIR' on every surviving member, pick the highest last index, stop every member, " +
				"then repeat with --i-understand-this-may-lose-writes")
		}
		return validOutput(out)
	}
	return runTool("recover", fs, validate, func() error { return recoverDir(dataDir, raftAddr, out) }, args)
}

func recoverDir(dataDir, raftAddr, out string) error {
	before, after, err := coordinator.Recover(dataDir, raftAddr)
	if err != nil {
		return dataExit(err)
	}
	in, err := coordinator.Inspect(dataDir)
	if err != nil {
		return fmt.Errorf("recovered, but reading the result back failed: %w", err)
	}
	rec := Recovery{Time: time.Now().UTC(), Before: before, After: after, Member: in}
	if err := writeJSONFile(filepath.Join(dataDir, recoveredFile), rec); err != nil {
		return err
	}
	var ids []string
	for _, s := range before {
		ids = append(ids, s.ID)
	}
	sort.Strings(ids)
	if err := auditTool(dataDir, after.ID, "recover", fmt.Sprintf("configuration=%s -> %s lastIndex=%d", strings.Join(ids, ","), after.ID, in.LastIndex)); err != nil {
		return err
	}
	if out == "json" {
		return printJSON(stdout, rec)
	}
	fmt.Fprintf(stdout, "Recovered member %s at %s: its configuration was %s, it is now this member alone.\n", after.ID, after.Address, strings.Join(ids, ", "))
	fmt.Fprintf(stdout, "  last index %d (term %d), cluster %s\n", in.LastIndex, in.LastTerm, in.ClusterID)
	fmt.Fprintf(stdout, "Next: start it as before (same --data-dir and --raft-addr); it elects itself and serves.\n")
	fmt.Fprintf(stdout, "Then wipe the other members' data dirs and start them with --join: they must never start on their old data.\n")
	return nil
}
