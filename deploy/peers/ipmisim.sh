#!/bin/sh
# ipmisim.sh — run one IPMI (RMCP+/lanplus) BMC simulator in the foreground.
#
#   deploy/peers/ipmisim.sh PORT
#
# Uses Debian's python3-pyghmi `fakebmc` (user admin, password password,
# power on/off/reset/soft, boot device; a BMC cold reset makes it exit 0).
# It listens on UDP PORT on every address; stop it with SIGTERM. Tests start
# it through this script (testkit/rig: StartFakeBMC); talk to it with
#   ipmitool -I lanplus -H 127.0.0.1 -p PORT -U admin -P password -C 3 power status
# Exit 3 when fakebmc or /usr/bin/python3 is missing (install the peers with
# deploy/peers/install.sh), 2 on a bad argument.
set -eu

if [ $# -ne 1 ]; then
	echo "usage: $0 PORT" >&2
	exit 2
fi
case "$1" in
'' | *[!0-9]*)
	echo "$0: PORT must be a number, got '$1'" >&2
	exit 2
	;;
esac
if [ "$1" -lt 1 ] || [ "$1" -gt 65535 ]; then
	echo "$0: PORT must be 1 to 65535, got $1" >&2
	exit 2
fi
# Debian's interpreter: a pyenv python3 first on PATH cannot import pyghmi.
PY=/usr/bin/python3
FAKEBMC=/usr/bin/fakebmc
if [ ! -x "$PY" ] || [ ! -f "$FAKEBMC" ]; then
	echo "$0: $FAKEBMC (python3-pyghmi) and $PY are needed; run deploy/peers/install.sh" >&2
	exit 3
fi
echo "ipmisim: fakebmc listening on udp port $1 (user admin)"
# -u: unbuffered, so its "powered on" lines reach the test's log at once.
exec "$PY" -u "$FAKEBMC" --port "$1"
