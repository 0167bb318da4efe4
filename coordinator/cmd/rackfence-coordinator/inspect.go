package main

import (
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/rackfence/rackfence/coordinator"
)

func inspectMain(args []string) int {
	var dataDir, out string
	fs := pflag.NewFlagSet("rackfence-coordinator inspect", pflag.ContinueOnError)
	fs.StringVar(&dataDir, "data-dir", "", "data dir of a stopped member (read only)")
	fs.StringVarP(&out, "output", "o", "text", "text or json")
	validate := func() error {
		if dataDir == "" {
			return errors.New("--data-dir is required: a stopped member's data dir")
		}
		return validOutput(out)
	}
	return runTool("inspect", fs, validate, func() error {
		in, err := coordinator.Inspect(dataDir)
		if err != nil {
			return dataExit(err)
		}
		if out == "json" {
			return printJSON(stdout, in)
		}
		w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintf(w, "Data dir:\t%s\n", in.DataDir)
		fmt.Fprintf(w, "Node:\t%s\n", in.NodeID)
		fmt.Fprintf(w, "Tier:\t%s\n", in.Tier)
		fmt.Fprintf(w, "Cluster ID:\t%s\n", in.ClusterID)
		fmt.Fprintf(w, "Last index:\t%d (term %d)\n", in.LastIndex, in.LastTerm)
		fmt.Fprintf(w, "Snapshot index:\t%d\n", in.SnapshotIndex)
		fmt.Fprintf(w, "Current term:\t%d\n", in.CurrentTerm)
		fmt.Fprintf(w, "Restore generation:\t%d\n", in.Generation)
		fmt.Fprintf(w, "Hosts / racks / leases:\t%d / %d / %d\n", in.Hosts, in.Racks, in.Leases)
		fmt.Fprintf(w, "Log store:\t%s\n", in.LogStore)
		w.Flush()
		fmt.Fprintln(stdout, "\nConfiguration:")
		w = tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "ID\tADDRESS\tSUFFRAGE")
		for _, s := range in.Configuration {
			fmt.Fprintf(w, "%s\t%s\t%s\n", s.ID, s.Address, s.Suffrage)
		}
		return w.Flush()
	}, args)
}
