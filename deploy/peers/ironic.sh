#!/usr/bin/env bash
# Starts and stops a standalone OpenStack Ironic (Debian's python3-ironic,
# installed by deploy/peers/install.sh) on loopback, for tests, CI and
# people. One process runs API + conductor; sqlite, noauth, no message bus
# (rpc_transport = none); hardware types fake-hardware, ipmi and redfish
# (redfish: inspect interface redfish, boot redfish-virtual-media, deploy
# ramdisk, bios and raid redfish for day-two clean steps; see
# agent/provisioner/ironic/DESIGN.md).
#
#   deploy/peers/ironic.sh start STATEDIR [PORT [HOST]]
#       renders STATEDIR/ironic.conf from deploy/peers/ironic/ironic.conf.tmpl,
#       creates the database schema when STATEDIR/ironic.sqlite is missing,
#       starts Ironic in the background (pid in STATEDIR/ironic.pid), waits
#       until GET /v1 answers and prints where it listens. PORT defaults to
#       6385, HOST to 127.0.0.1. On failure it prints the log's tail and
#       exits 1.
#   deploy/peers/ironic.sh stop STATEDIR
#       SIGTERM, then SIGKILL after 15 s. Keeps the database.
#   deploy/peers/ironic.sh wipe STATEDIR
#       stop, then delete the database (the next start is an empty Ironic).
#   deploy/peers/ironic.sh status STATEDIR
#
# Environment: IRONIC_START_TIMEOUT (seconds, default 90); IRONIC_HTTP_URL:
# the URL under which something else serves STATEDIR/httpboot ([deploy]
# http_url: only used when Ironic itself publishes a virtual media ISO,
# ramdisk_image_download_source = local; nothing is served by default);
# IRONIC_WATCH_PID:
# when set, Ironic is stopped as soon as that process is gone (tests pass
# their own pid, so a killed test binary leaves no Ironic behind).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
PY=/usr/bin/python3 # Debian's: a python3 earlier on PATH may not see ironic

die() { echo "ironic.sh: $*" >&2; exit 1; }
usage() { die "usage: $0 start|stop|wipe|status STATEDIR [PORT [HOST]]"; }

tail_logs() {
  local d=$1
  for f in "$d/ironic.out" "$d/ironic.log" "$d/dbsync.log"; do
    [ -s "$f" ] || continue
    echo "---- last lines of $f ----" >&2
    tail -n 30 "$f" >&2
  done
}

running_pid() {
  local d=$1 pid
  [ -f "$d/ironic.pid" ] || return 1
  pid=$(cat "$d/ironic.pid")
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  echo "$pid"
}

start() {
  local d=$1 port=${2:-6385} host=${3:-127.0.0.1}
  [ -x /usr/bin/ironic ] || die "/usr/bin/ironic is missing: run deploy/peers/install.sh"
  mkdir -p "$d"
  d=$(cd "$d" && pwd)
  if pid=$(running_pid "$d"); then
    die "Ironic already runs from $d (pid $pid); stop it first"
  fi
  mkdir -p "$d/tmp" "$d/locks" "$d/tftpboot/master_images" "$d/images" \
    "$d/master_images" "$d/httpboot"
  local http_url=${IRONIC_HTTP_URL:-http://$host:$port/httpboot-not-served}
  sed -e "s#@STATE@#$d#g" -e "s#@PORT@#$port#g" -e "s#@HOST@#$host#g" -e "s#@HTTP_URL@#$http_url#g" \
    "$here/ironic/ironic.conf.tmpl" >"$d/ironic.conf"
  if [ ! -s "$d/ironic.sqlite" ]; then
    if ! $PY /usr/bin/ironic-dbsync --config-file "$d/ironic.conf" create_schema \
        >"$d/dbsync.log" 2>&1; then
      echo "ironic.sh: ironic-dbsync create_schema failed" >&2
      tail_logs "$d"; exit 1
    fi
  fi
  : >"$d/ironic.out"
  # python3-requests lets REQUESTS_CA_BUNDLE / CURL_CA_BUNDLE from the
  # environment override a session's verify=False, so a node's
  # redfish_verify_ca=false (a BMC with a self-signed certificate and
  # disableCertificateVerification) would still be verified: Ironic runs
  # without them (its own CA settings live in ironic.conf / driver_info).
  env -u REQUESTS_CA_BUNDLE -u CURL_CA_BUNDLE \
  setsid $PY /usr/bin/ironic --config-file "$d/ironic.conf" \
    >"$d/ironic.out" 2>&1 </dev/null &
  local pid=$!
  echo "$pid" >"$d/ironic.pid"
  local url="http://$host:$port"
  local deadline=$((SECONDS + ${IRONIC_START_TIMEOUT:-90}))
  while :; do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "ironic.sh: Ironic (pid $pid) exited during start" >&2
      rm -f "$d/ironic.pid"; tail_logs "$d"; exit 1
    fi
    if curl -fs -o /dev/null --max-time 2 "$url/v1"; then break; fi
    if [ $SECONDS -ge $deadline ]; then
      echo "ironic.sh: Ironic (pid $pid) did not answer $url/v1 within ${IRONIC_START_TIMEOUT:-90}s" >&2
      kill -TERM "$pid" 2>/dev/null || true
      rm -f "$d/ironic.pid"; tail_logs "$d"; exit 1
    fi
    sleep 0.3
  done
  if [ -n "${IRONIC_WATCH_PID:-}" ]; then
    (
      while kill -0 "$IRONIC_WATCH_PID" 2>/dev/null && kill -0 "$pid" 2>/dev/null; do sleep 2; done
      kill -TERM "$pid" 2>/dev/null || true
    ) </dev/null >/dev/null 2>&1 &
  fi
  echo "ironic: listening on $url (pid $pid, state $d, log $d/ironic.log)"
}

stop() {
  local d=$1 pid
  if ! pid=$(running_pid "$d"); then
    rm -f "$d/ironic.pid"; echo "ironic: not running ($d)"; return 0
  fi
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 150); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "ironic.sh: pid $pid ignored SIGTERM for 15 s; sending SIGKILL" >&2
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$d/ironic.pid"
  echo "ironic: stopped (pid $pid)"
}

[ $# -ge 2 ] || usage
cmd=$1; dir=$2; shift 2
case "$cmd" in
  start) start "$dir" "$@" ;;
  stop) stop "$dir" ;;
  wipe) stop "$dir"; rm -f "$dir/ironic.sqlite" "$dir/ironic.sqlite-journal"; echo "ironic: database wiped ($dir)" ;;
  status)
    if pid=$(running_pid "$dir"); then echo "ironic: running (pid $pid, state $dir)"; else echo "ironic: not running ($dir)"; exit 1; fi ;;
  *) usage ;;
esac
