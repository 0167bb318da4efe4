package warm
import (
	_ "github.com/hashicorp/raft"
	_ "github.com/hashicorp/raft-boltdb/v2"
	_ "github.com/bmc-toolbox/bmclib/v2"
	_ "github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	_ "github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/ports"
	_ "github.com/labstack/echo/v4"
	_ "github.com/spf13/pflag"
	_ "github.com/prometheus/client_golang/prometheus/promhttp"
	_ "github.com/coreos/go-systemd/v22/daemon"
	_ "sigs.k8s.io/yaml"
	_ "golang.org/x/term"
	_ "github.com/anishathalye/porcupine"
	"testing"
)
func TestX(t *testing.T){}
