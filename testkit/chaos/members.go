package chaos

import (
	"context"
	"fmt"
	"time"

	"github.com/rackfence/rackfence/shared/client"
)

// membersCaughtUp is the members' liveness after the final heal: by
// deadline every member answers /v1/health with 200 (a member whose disk
// filled, or whose data dir was refused and joined again, included) and
// has applied what the leader had committed when the check began. A
// member still behind or unhealthy is a liveness violation naming it.
func membersCaughtUp(ctx context.Context, c *Cluster, deadline time.Time) []Violation {
	cls := make([]*client.Client, len(c.Coords))
	for i := range c.Coords {
		cl, err := c.newClientURLs("", c.admin, 5*time.Second, c.coordURL(i))
		if err != nil {
			return []Violation{{Checker: "liveness", What: "member client: " + err.Error()}}
		}
		cls[i] = cl
	}
	var target uint64
	last := make([]string, len(c.Coords))
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if target == 0 {
			for _, cl := range cls {
				qctx, qc := context.WithTimeout(ctx, 5*time.Second)
				st, err := cl.Status(qctx)
				qc()
				if err == nil && st.State == "leader" {
					target = st.CommitIndex
				}
			}
		}
		behind := 0
		for i, cl := range cls {
			qctx, qc := context.WithTimeout(ctx, 5*time.Second)
			herr := cl.Health(qctx)
			st, serr := cl.Status(qctx)
			qc()
			switch {
			case herr != nil:
				last[i] = "health: " + herr.Error()
			case serr != nil:
				last[i] = "status: " + serr.Error()
			case target == 0:
				last[i] = "no leader yet"
			case st.AppliedIndex < target:
				last[i] = fmt.Sprintf("applied %d, the leader had committed %d", st.AppliedIndex, target)
			default:
				last[i] = ""
				continue
			}
			behind++
		}
		if behind == 0 {
			return nil
		}
		time.Sleep(500 * time.Millisecond)
	}
	var out []Violation
	for i, why := range last {
		if why != "" {
			out = append(out, Violation{Checker: "liveness", What: fmt.Sprintf("member %s not caught up after the final heal: %s", coordNode(i), why)})
		}
	}
	return out
}
