#!/usr/bin/env bash
# make demo: one coordinator, 24 simulated Redfish BMCs plus one iLO-shaped
# BMC, two rack agents (r1, r2; r1 serves config drives from its artifact
# server), the hosts of deploy/demo/hosts.yaml, and a live view of racks and
# hosts until Ctrl-C. Every process it starts is stopped on exit; state lives
# in .demo/ (wiped at start), so it can run again at once.
#
# Environment (all optional):
#   DEMO_DURATION=SECONDS  exit by itself after that long (CI, tests)
#   DEMO_DIR=PATH          state directory (default ./.demo)
#   DEMO_HTTP_PORT=7480    coordinator API; DEMO_RAFT_PORT=7481 its Raft port
#   DEMO_BMC_PORT=9001     first of the 25 BMC ports
#   DEMO_ARTIFACT_PORT=7482 agent r1's artifact server (config drives)
#   DEMO_METRICS_PORT=9490 agent r1's /metrics (r2: +1)
#   RACKFENCE_BIN=DIR      where the binaries are (default ./bin, from make build)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${RACKFENCE_BIN:-$ROOT/bin}
DEMO=${DEMO_DIR:-$ROOT/.demo}
HTTP_PORT=${DEMO_HTTP_PORT:-7480}
RAFT_PORT=${DEMO_RAFT_PORT:-7481}
BMC_PORT=${DEMO_BMC_PORT:-9001}
METRICS_PORT=${DEMO_METRICS_PORT:-9490}
ARTIFACT_PORT=${DEMO_ARTIFACT_PORT:-7482}
DURATION=${DEMO_DURATION:-0}
NBMC=24
URL=https://127.0.0.1:$HTTP_PORT
CTL=$BIN/rackfencectl

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
[ -t 2 ] || say() { printf '==> %s\n' "$*" >&2; }
die() { printf 'demo: %s\n' "$*" >&2; exit 1; }

for b in rackfence-coordinator rackfence-agent rackfence-bmcsim rackfencectl; do
  [ -x "$BIN/$b" ] || die "$BIN/$b is missing: run 'make build' (or 'make demo', which builds first)"
done

# Processes of a previous run that was killed hard (its pid file survived):
# stop them, but only if they are still our binaries.
if [ -f "$DEMO/pids" ]; then
  while read -r pid; do
    if [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q "rackfence-"; then
      kill "$pid" 2>/dev/null || true
    fi
  done < "$DEMO/pids"
  sleep 1
fi
rm -rf "$DEMO"
mkdir -p "$DEMO/data" "$DEMO/logs"

PIDS=()
WATCH=
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [ -n "$WATCH" ]; then kill -TERM "$WATCH" 2>/dev/null || true; wait "$WATCH" 2>/dev/null || true; fi
  if [ ${#PIDS[@]} -gt 0 ]; then
    say "stopping ${#PIDS[@]} processes"
    # Agents first (they release their leases), then the BMCs and the coordinator.
    for ((i=${#PIDS[@]}-1; i>=0; i--)); do kill -TERM "${PIDS[i]}" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do
      for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -KILL "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
    done
  fi
  rm -f "$DEMO/pids"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

start() { # name, command...
  local name=$1; shift
  "$@" > "$DEMO/logs/$name.log" 2>&1 &
  PIDS+=($!)
  echo $! >> "$DEMO/pids"
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for p in "$HTTP_PORT" "$RAFT_PORT" "$BMC_PORT" $((BMC_PORT+NBMC)) "$METRICS_PORT" $((METRICS_PORT+1)) "$ARTIFACT_PORT"; do
  port_free "$p" || die "port $p is in use (another demo or service?); choose others with DEMO_HTTP_PORT, DEMO_RAFT_PORT, DEMO_BMC_PORT, DEMO_METRICS_PORT, DEMO_ARTIFACT_PORT"
done

# wait_for WHAT SECONDS PROCESS-NAME COMMAND...: poll until COMMAND succeeds.
wait_for() {
  local what=$1 secs=$2 name=$3; shift 3
  local pid=${PIDS[${#PIDS[@]}-1]}
  for _ in $(seq 1 $((secs*5))); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    kill -0 "$pid" 2>/dev/null || { tail -20 "$DEMO/logs/$name.log" >&2; die "$name exited while waiting for $what (log: $DEMO/logs/$name.log)"; }
    sleep 0.2
  done
  tail -20 "$DEMO/logs/$name.log" >&2
  die "timed out after ${secs}s waiting for $what (log: $DEMO/logs/$name.log)"
}

export RACKFENCE_COORDINATOR=$URL
export RACKFENCE_TOKEN_FILE=$DEMO/data/admin.token

say "starting the coordinator on $URL (TLS with a CA it makes in $DEMO/data/tls; data in $DEMO/data)"
start coordinator "$BIN/rackfence-coordinator" --node-id demo --tier demo --data-dir "$DEMO/data" \
  --http-addr "127.0.0.1:$HTTP_PORT" --raft-addr "127.0.0.1:$RAFT_PORT"
wait_for "the coordinator to elect itself" 60 coordinator \
  sh -c "test -s '$DEMO/data/admin.token' && '$CTL' cluster status"

say "starting rackfence-bmcsim: $NBMC Redfish BMCs on 127.0.0.1:$BMC_PORT..$((BMC_PORT+NBMC-1))"
start bmcsim "$BIN/rackfence-bmcsim" --hosts "$NBMC" --base-port "$BMC_PORT" --audit "$DEMO/bmc-audit.jsonl"
wait_for "the BMCs" 30 bmcsim bash -c "(exec 3<>/dev/tcp/127.0.0.1/$((BMC_PORT+NBMC-1)))"
WEB_BMC=$((BMC_PORT+NBMC))
say "starting an iLO-shaped BMC for r1-web on 127.0.0.1:$WEB_BMC (it reads what is inserted in its virtual media)"
start bmcsim-ilo "$BIN/rackfence-bmcsim" --profile ilo --hosts 1 --base-port "$WEB_BMC" --mac-prefix 52:54:00:01 \
  --fetch-media --audit "$DEMO/bmc-audit.jsonl"
wait_for "the iLO BMC" 30 bmcsim-ilo bash -c "(exec 3<>/dev/tcp/127.0.0.1/$WEB_BMC)"

say "storing BMC credentials and applying deploy/demo/hosts.yaml"
printf 'password\n' > "$DEMO/bmc.pass"
"$CTL" credentials set demo-bmc --username admin --password-file "$DEMO/bmc.pass" >/dev/null
say "storing r1-web's user data, network data and meta data (sealed) as credentials r1-web-config"
web=$ROOT/deploy/demo/r1-web
"$CTL" credentials set r1-web-config --from-file "userData=$web/user-data.yaml" \
  --from-file "networkData=$web/network-data.json" --from-file "metaData=$web/meta-data.json" >/dev/null
hosts=$ROOT/deploy/demo/hosts.yaml
if [ "$BMC_PORT" != 9001 ]; then
  sedargs=()
  for i in $(seq 0 "$NBMC"); do sedargs+=(-e "s#127.0.0.1:$((9001+i))/#127.0.0.1:$((BMC_PORT+i))@/#"); done
  sed "${sedargs[@]}" -e 's#@/#/#' "$hosts" > "$DEMO/hosts.yaml"
  hosts=$DEMO/hosts.yaml
fi
"$CTL" host apply -f "$hosts" | tail -1 | sed 's/^/    ... /'

# Agent r1 serves the config drives it builds (r1-web's) to its rack's BMCs.
ARTIFACTS=("" "--artifact-addr=127.0.0.1:$ARTIFACT_PORT" "")
for i in 1 2; do
  rack=r$i
  "$CTL" token create --role agent --rack "$rack" > "$DEMO/agent-$rack.token"
  say "starting the rack agent of $rack"
  start "agent-$rack" "$BIN/rackfence-agent" --coordinator "$URL" --token-file "$DEMO/agent-$rack.token" \
    --rack "$rack" --agent-id "demo-agent-$rack" --provisioner direct --workers 16 --lease-ttl 10s \
    --metrics-addr "127.0.0.1:$((METRICS_PORT+i-1))" --audit-file "$DEMO/agent-$rack-audit.jsonl" \
    ${ARTIFACTS[$i]:+${ARTIFACTS[$i]}}
done

cat > "$DEMO/env" <<ENV
export PATH="$BIN:\$PATH"
export RACKFENCE_COORDINATOR=$URL
export RACKFENCE_TOKEN_FILE=$DEMO/data/admin.token
export RACKFENCE_CA_FILE=$DEMO/data/tls/ca.crt
ENV
cat > "$DEMO/TRY" <<TRY
In another terminal:

  source $DEMO/env      # that is:
    export PATH="$BIN:\$PATH"
    export RACKFENCE_COORDINATOR=$URL
    export RACKFENCE_TOKEN_FILE=$DEMO/data/admin.token
    export RACKFENCE_CA_FILE=$DEMO/data/tls/ca.crt   # the cluster CA (the admin token pins it too)

  rackfencectl detach r1-h01 --reason "hand over" --wait    # stop managing it, keep it running
  rackfencectl attach r1-h01 --wait                         # take it back (re-register, adopt)

  # resume: make r1-h06's BMC refuse logins, ask for a power-off, see the error
  curl -X PUT -d '{"mode":"refuse-auth"}' http://127.0.0.1:$((BMC_PORT+5))/sim/fault
  rackfencectl host get r1-h06 -o yaml | sed 's/^online: true/online: false/' | rackfencectl host apply -f -
  rackfencectl host get r1-h06                              # registration error, count 1, retried after a backoff
  curl -X PUT -d '{"mode":"none"}' http://127.0.0.1:$((BMC_PORT+5))/sim/fault      # fix the BMC
  rackfencectl resume r1-h06                                # retry now, not after the backoff

  rackfencectl drain r1-h07 --mode maintenance --wait       # planned downtime
  rackfencectl restore r1-h07 --wait                        # back to management
  rackfencectl drain r1-h08 --mode removal --wait           # leaves for good

  rackfencectl host get r1-web                              # provisioned with user data (the record's name, never its content)
  rackfencectl credentials get r1-web-config                # the data keys, never the values
  curl -s http://127.0.0.1:$((BMC_PORT+NBMC))/sim/state     # the iLO read the config drive from agent r1's artifact server
                                                            # (its CD's readError is expected: the demo serves no image)

  rackfencectl host get r2-h12                              # adopted, never redeployed
  rackfencectl host get r2-h13                              # no BMC details: unmanaged
  rackfencectl events r1-h01 --follow                       # what happened, as it happens
  rackfencectl rack list                                    # who holds each rack

Logs: $DEMO/logs/   BMC calls: $DEMO/bmc-audit.jsonl
TRY

cat "$DEMO/TRY" >&2
echo >&2

deadline=0
[ "$DURATION" -gt 0 ] && deadline=$(( $(date +%s) + DURATION ))
if [ -t 1 ]; then
  say "live view starting (Ctrl-C stops the demo and every process it started)"
  sleep 2
  while :; do
    view=$( { "$CTL" rack list; echo; "$CTL" host list; } 2>&1 || true)
    printf '\033[H\033[2J'
    printf 'rackfence demo   %s   Ctrl-C stops everything   commands to try: cat %s/TRY\n\n' "$(date +%T)" "$DEMO"
    printf '%s\n' "$view"
    [ "$deadline" -gt 0 ] && [ "$(date +%s)" -ge "$deadline" ] && break
    for _ in 1 2 3 4 5; do
      for pid in "${PIDS[@]}"; do kill -0 "$pid" 2>/dev/null || die "a demo process ($pid) exited; logs in $DEMO/logs/"; done
      sleep 0.2
    done
  done
else
  # Not a terminal: print the hosts each time they change.
  timeout=0
  [ "$DURATION" -gt 0 ] && timeout=${DURATION}s
  say "hosts (printed when they change; Ctrl-C stops)"
  # In the background, waited for: bash runs the INT/TERM trap only once
  # the foreground command returns, while `wait` returns on the signal
  # (so `kill PID` of this script stops the demo at once).
  "$CTL" host list --watch --timeout "$timeout" --interval 2s &
  WATCH=$!
  wait "$WATCH"
  WATCH=
fi
say "demo done"
