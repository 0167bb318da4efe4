#!/usr/bin/env bash
# Installs the Debian packages of the real peers rackfence is tested
# against: ipmitool, IPMI simulators (openipmi's ipmi_sim, pyghmi's fakebmc),
# Ironic's Redfish client (python3-sushy) and a standalone Ironic
# (python3-ironic, run as one process by deploy/peers/ironic.sh),
# systemd-analyze for the unit files, chromium for the dashboard's browser
# test (coordinator/ui, driven by chromedp), DMTF's redfishtool (a second
# Redfish client the simulator's profiles are checked with), genisoimage (a
# boot ISO for the Ironic virtual media tests; its isoinfo reads back the
# agent's config drives in agent/configdrive's tests), promtool (Debian package
# prometheus) for deploy/prometheus/'s rules, and iproute2 and nftables for
# the chaos harness's network namespaces and partitions. Idempotent,
# non-interactive, and it starts no services. Needs root (or sudo).
# dpkg (dpkg-deb) and passwd (useradd, for the postinst) build and install
# the packages of make dist in deploy/debian's test.
set -euo pipefail
pkgs=(ipmitool openipmi python3-pyghmi python3-sushy python3-ironic ironic-common
      python3-ironicclient sqlite3 curl systemd iproute2 nftables strace chromium prometheus
      redfishtool genisoimage
      dpkg passwd)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
# Debian's python3-sushy 4.3.3 does not ship sushy/standard_registries/
# (DMTF's standard message registries, in upstream sushy). sushy lists
# that directory whenever it builds its registries, e.g. for every task
# monitor Ironic's conductor follows: without it each firmware update
# check raises FileNotFoundError and Ironic never ends the update_firmware
# clean step. An empty directory is enough: sushy then merges only the
# registries the BMC publishes. Run on every call (also when the packages
# were already there).
sushy_registries() {
  local d=/usr/lib/python3/dist-packages/sushy
  if [ -d "$d" ] && [ ! -d "$d/standard_registries" ]; then
    $SUDO mkdir -p "$d/standard_registries"
    echo "peers: created $d/standard_registries (missing from Debian's python3-sushy)"
  fi
}
if [ ${#missing[@]} -eq 0 ]; then
  sushy_registries
  echo "peers: all packages already installed"
  exit 0
fi
# Keep post-install scripts from starting services.
created_policy=0
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
  $SUDO chmod +x /usr/sbin/policy-rc.d
  created_policy=1
fi
echo "peers: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/tmp/rackfence-apt.log 2>&1 || {
  tail -30 /tmp/rackfence-apt.log; exit 1; }
[ $created_policy -eq 0 ] || $SUDO rm -f /usr/sbin/policy-rc.d
sushy_registries
echo "peers: installed"
