package ctl

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/rackfence/rackfence/shared/wire"
)

func init() {
	register(&command{
		path:  "cluster status",
		usage: "",
		short: "Show the answering member's view: tier, leader, members and their versions, indexes, state hash check",
		setup: clusterStatus,
	})
	register(&command{
		path:  "cluster members",
		usage: "",
		short: "List the coordinator cluster's Raft members",
		setup: clusterMembers,
	})
	register(&command{
		path:  "cluster remove",
		usage: "ID",
		short: "Remove a member from the cluster (admin)",
		long: `Removes a Raft server for good (a failed machine that will not return).
Keep an odd number of voters: a cluster of 3 survives one failure, of 5 two.`,
		setup: clusterRemove,
	})
}

func clusterStatus(fs *pflag.FlagSet) func(*Ctx, []string) error {
	return func(x *Ctx, args []string) error {
		if len(args) > 0 {
			return usagef("cluster status takes no arguments")
		}
		cl, err := x.Client()
		if err != nil {
			return err
		}
		s, err := cl.Status(x.ctx)
		if err != nil {
			return err
		}
		return x.print(s, func(w io.Writer) {
			k := &kv{}
			k.add("Tier", s.Tier)
			k.add("Cluster ID", s.ClusterID)
			k.add("Node", s.NodeID+" ("+s.State+")")
			k.add("Leader", s.Leader)
			k.add("Commit index", fmt.Sprint(s.CommitIndex))
			k.add("Applied index", fmt.Sprint(s.AppliedIndex))
			upgradeLines(k, s.Upgrade)
			if s.RestoreGeneration > 0 {
				k.add("Restore generation", fmt.Sprint(s.RestoreGeneration))
			}
			k.write(w)
			fmt.Fprintln(w)
			memberTable(w, s.Members, x.tableWidth())
			for _, m := range s.Members {
				if m.Stopped != "" {
					fmt.Fprintf(w, "\nMember %s STOPPED applying the Raft log: %s\n", m.ID, m.Stopped)
				}
			}
			for _, wn := range s.Warnings {
				fmt.Fprintf(w, "\nWARNING: %s\n", wn)
			}
		})
	}
}

func memberTable(w io.Writer, ms []wire.Member, width int) {
	t := &table{header: []string{"ID", "SUFFRAGE", "LEADER", "RAFT", "HTTP", "VERSION"}}
	for _, m := range ms {
		leader := ""
		if m.Leader {
			leader = "yes"
		}
		v := m.Version
		if m.Stopped != "" {
			v += " STOPPED"
		}
		t.add(m.ID, m.Suffrage, leader, m.RaftAddr, m.HTTPAddr, v)
	}
	if len(ms) == 0 {
		fmt.Fprintln(w, "No members.")
		return
	}
	t.write(w, width)
}

func clusterMembers(fs *pflag.FlagSet) func(*Ctx, []string) error {
	return func(x *Ctx, args []string) error {
		if len(args) > 0 {
			return usagef("cluster members takes no arguments")
		}
		cl, err := x.Client()
		if err != nil {
			return err
		}
		l, err := cl.Members(x.ctx)
		if err != nil {
			return err
		}
		return x.print(l, func(w io.Writer) { memberTable(w, l.Items, x.tableWidth()) })
	}
}

func clusterRemove(fs *pflag.FlagSet) func(*Ctx, []string) error {
	return func(x *Ctx, args []string) error {
		if len(args) != 1 || args[0] == "" {
			return usagef("expected one member ID ('rackfencectl cluster members' lists them)")
		}
		cl, err := x.Client()
		if err != nil {
			return err
		}
		if err := cl.RemoveMember(x.ctx, args[0]); err != nil {
			return err
		}
		fmt.Fprintf(x.io.Stdout, "member %s removed\n", args[0])
		return nil
	}
}
