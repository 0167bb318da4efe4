#!/usr/bin/env bash
# make dist: Debian packages rackfence-coordinator, rackfence-agent and
# rackfencectl in $OUT (default dist/), built with dpkg-deb from the
# binaries (stamped like make build), the repo's systemd units and the
# files under deploy/debian/. The packaged units differ from systemd/ in
# two lines: binaries in /usr/bin, and User=rackfence (a system user the
# postinst creates) instead of DynamicUser=yes.
#
# Environment: VERSION, COMMIT (default: git describe / rev-parse, as the
# Makefile), GO (default go), OUT (default dist), DEB_MAINTAINER.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
OUT=${OUT:-dist}
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
COMMIT=${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
MAINTAINER=${DEB_MAINTAINER:-rackfence maintainers <rackfence@localhost>}
command -v dpkg-deb >/dev/null || { echo "dist: dpkg-deb not found: apt-get install dpkg-dev (or dpkg)" >&2; exit 1; }

# Debian version: git describe without a leading v, dashes as pluses
# (v1.2.0-5-gabc -> 1.2.0+5+gabc); anything not starting N.N (an untagged
# checkout's bare commit, 8410b47-dirty) becomes 0.0~git8410b47+dirty.
debver=${VERSION#v}
debver=${debver//-/+}
[[ $debver =~ ^[0-9]+\.[0-9] ]] || debver="0.0~git${debver}"

goarch=$($GO env GOARCH)
case $goarch in
amd64 | arm64 | riscv64 | s390x | mips64le) arch=$goarch ;;
386) arch=i386 ;;
arm) arch=armhf ;;
ppc64le) arch=ppc64el ;;
*) echo "dist: no Debian architecture for GOARCH=$goarch" >&2; exit 1 ;;
esac

ldflags="-X github.com/rackfence/rackfence/internal/version.Version=$VERSION -X github.com/rackfence/rackfence/internal/version.Commit=$COMMIT"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$OUT"

# unit SRC DST: the repo's unit, as packaged.
unit() {
	sed -e 's#/usr/local/bin/#/usr/bin/#g' \
		-e 's#^DynamicUser=yes$#User=rackfence\nGroup=rackfence#' "$1" >"$2"
	grep -q '^User=rackfence$' "$2" || { echo "dist: $1 has no DynamicUser=yes line to replace" >&2; exit 1; }
	chmod 0644 "$2"
}

# script PKG NAME: a maintainer script, with deploy/debian/user.sh where
# it says #USER_SH#.
script() {
	local src=deploy/debian/$1/$2 dst=$work/$1/DEBIAN/$2
	[ -f "$src" ] || return 0
	awk 'FNR==NR { lib = lib $0 "\n"; next } /^#USER_SH#$/ { printf "%s", lib; next } { print }' deploy/debian/user.sh "$src" >"$dst"
	chmod 0755 "$dst"
}

# build PKG CMD DESCRIPTION: stage and dpkg-deb one package.
build() {
	local pkg=$1 cmd=$2 desc=$3 root=$work/$1
	install -d -m 0755 "$root/DEBIAN" "$root/usr/bin"
	echo "go build $cmd $VERSION ($goarch)"
	CGO_ENABLED=0 GOARCH=$goarch $GO build -trimpath -ldflags "$ldflags" -o "$root/usr/bin/$cmd" "./$(dirname "$(ls -d */cmd/"$cmd")")/$cmd"
	chmod 0755 "$root/usr/bin/$cmd"
	for s in postinst prerm postrm; do script "$pkg" "$s"; done
	local size
	size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
	cat >"$root/DEBIAN/control" <<CTL
Package: $pkg
Version: $debver
Architecture: $arch
Maintainer: $MAINTAINER
Installed-Size: $size
Section: admin
Priority: optional
Homepage: https://github.com/rackfence/rackfence
Description: $desc
CTL
	[ -s "$root/DEBIAN/conffiles" ] || rm -f "$root/DEBIAN/conffiles"
	dpkg-deb --root-owner-group -Zxz --build "$root" "$OUT/${pkg}_${debver}_${arch}.deb" >/dev/null
	echo "$OUT/${pkg}_${debver}_${arch}.deb"
}

# conffile PKG SRC DST MODE
conffile() {
	install -D -m "$4" "$2" "$work/$1$3"
	echo "$3" >>"$work/$1/DEBIAN/conffiles"
}

rm -f "$OUT"/rackfence-coordinator_*.deb "$OUT"/rackfence-agent_*.deb "$OUT"/rackfencectl_*.deb
for p in rackfence-coordinator rackfence-agent; do
	install -d -m 0755 "$work/$p/DEBIAN" "$work/$p/lib/systemd/system" "$work/$p/etc/rackfence"
done
unit systemd/rackfence-coordinator.service "$work/rackfence-coordinator/lib/systemd/system/rackfence-coordinator.service"
unit systemd/rackfence-agent@.service "$work/rackfence-agent/lib/systemd/system/rackfence-agent@.service"
conffile rackfence-coordinator deploy/debian/rackfence-coordinator/coordinator.env /etc/rackfence/coordinator.env 0600
conffile rackfence-agent deploy/debian/rackfence-agent/agent.env /etc/rackfence/agent.env 0644

build rackfence-coordinator rackfence-coordinator "rackfence coordinator: Raft-replicated inventory, intents and rack leases
 One member of the cluster that holds the bare-metal inventory, the
 operators' intents and the rack leases, and serves the HTTP API.
 The unit rackfence-coordinator.service is installed but not enabled."
build rackfence-agent rackfence-agent "rackfence rack agent: manages a rack's hosts through their BMCs or Ironic
 Holds the rack's lease and drives its hosts over Redfish/IPMI or Ironic.
 The unit template rackfence-agent@.service is installed; enable one
 instance per rack (rackfence-agent@r1)."
build rackfencectl rackfencectl "rackfence command-line client
 rackfencectl, the operator's client of a rackfence coordinator cluster."
