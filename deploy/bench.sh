#!/usr/bin/env bash
# make bench: rackfence's performance figures, each beside its baseline
# measured in the same run on the same machine.
#   1. Host writes: a 3-member rackfence coordinator cluster vs a 3-member
#      etcd 3.4 (Debian etcd-server, default settings, writes through its JSON
#      gateway to the leader), same load generator (rackfence-load), 200-byte
#      bodies, 1/16/64 clients. Both clusters run at once and the loader
#      alternates between them in ABBA rounds (rackfence-load compare), so
#      the VM's steal time, which swings from ~0 to >50 % within minutes
#      here, falls on both alike.
#   2. Failover: kill -9 of the leader → next accepted write.
#   2b. Raft log store: bolt vs wal clusters, interleaved, with raft's own
#      timings (leader dispatchLog, follower storeLogs, commitTime).
#   3. Memory: 100,000 hosts with hardware details → coordinator RSS per
#      host; restart → serving again.
#   4. Fleet: BENCH_FLEET_HOSTS (10,000) hosts over BENCH_FLEET_RACKS (100)
#      racks, one real rackfence-agent per rack, BENCH_FLEET_SIMS (4, more
#      when the open-files limit needs them; each on its own 127.0.1.N)
#      rackfence-bmcsim processes, one coordinator over its default mutual
#      TLS (BENCH_FLEET_PLAINTEXT=1: --insecure-plaintext): time to all
#      available, detach → ack under status traffic, steady CPU, RSS and Go
#      heap, connections, Raft entries/s. Writes a Markdown report and an
#      SVG plot of hosts available over time to BENCH_OUT
#      (/tmp/rackfence-bench-out). The 100,000-host tier is
#      BENCH_FLEET_HOSTS=100000 BENCH_SKIP="etcd writes tls logstore memory go" make bench.
#   4b. Watchers: BENCH_WATCHERS (0,500,2000) long-poll watchers of one
#      rack over TLS, 500 writes into it, one coordinator per count: write
#      p50/p99, coordinator CPU and RSS before / with / 60 s after them;
#      fails when a watcher missed a change.
#   4c. Dashboard: TestDashboardScale at 10,000 and BENCH_UI_HOSTS (100,000)
#      hosts in headless chromium (RACKFENCE_UI_SCALE): first paint, all
#      hosts loaded, a filter across all hosts, a change to its tile.
#   5. The Go benchmarks of the packages (bmcsim, agent) where present.
#   6. With BENCH_BASELINE_BIN=DIR (a directory holding another build's
#      rackfence-coordinator): that build (A) vs this one (B), two 3-member
#      bolt clusters interleaved ABBA, writes/s and latency per client count.
# Knobs: BENCH_SLICE (5s) and BENCH_ROUNDS (6) for the comparison,
# BENCH_DURATION (10s, rackfence alone when etcd is skipped), BENCH_CLIENTS (1,16,64), BENCH_FILL_HOSTS
# (100000), BENCH_SKIP (space-separated: etcd writes failover tls logstore baseline memory fleet watchers ui go).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${RACKFENCE_BIN:-$PWD/bin}
DUR=${BENCH_DURATION:-10s}
SLICE=${BENCH_SLICE:-5s}
ROUNDS=${BENCH_ROUNDS:-6}
CLIENTS=${BENCH_CLIENTS:-1,16,64}
FILL=${BENCH_FILL_HOSTS:-100000}
FLEET_HOSTS=${BENCH_FLEET_HOSTS:-10000}
FLEET_RACKS=${BENCH_FLEET_RACKS:-100}
FLEET_SIMS=${BENCH_FLEET_SIMS:-4}
OUT=${BENCH_OUT:-/tmp/rackfence-bench-out}
SKIP=" ${BENCH_SKIP:-} "
W=$(mktemp -d /tmp/rackfence-bench.XXXX)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done; rm -rf "$W"; }
trap cleanup EXIT
skip() { [[ "$SKIP" == *" $1 "* ]]; }
say() { printf '\n== %s\n' "$*"; }

wait_http() { # URL [tries]
  for _ in $(seq 1 ${2:-200}); do curl -fsS ${CURL_CA:+--cacert "$CURL_CA"} -o /dev/null "$1" 2>/dev/null && return 0; sleep 0.1; done
  echo "not serving: $1" >&2; return 1
}

start_etcd() {
  if ! command -v etcd >/dev/null; then
    echo "etcd not installed: installing Debian etcd-server (baseline only)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends etcd-server etcd-client >/dev/null
  fi
  local cluster="e1=http://127.0.0.1:23801,e2=http://127.0.0.1:23802,e3=http://127.0.0.1:23803"
  for i in 1 2 3; do
    etcd --name e$i --data-dir "$W/etcd$i" --listen-client-urls http://127.0.0.1:2379$i \
      --advertise-client-urls http://127.0.0.1:2379$i --listen-peer-urls http://127.0.0.1:2380$i \
      --initial-advertise-peer-urls http://127.0.0.1:2380$i --initial-cluster "$cluster" \
      --initial-cluster-state new --log-level error >"$W/etcd$i.log" 2>&1 &
    PIDS+=($!); eval "ETCD_PID$i=$!"
  done
  for i in 1 2 3; do wait_http http://127.0.0.1:2379$i/health; done
  # The leader's client URL.
  ETCD_LEADER=""
  for i in 1 2 3; do
    st=$(ETCDCTL_API=3 etcdctl --endpoints http://127.0.0.1:2379$i endpoint status -w json 2>/dev/null || true)
    mid=$(echo "$st" | grep -o '"member_id":[0-9]*' | cut -d: -f2); lid=$(echo "$st" | grep -o '"leader":[0-9]*' | cut -d: -f2)
    if [ -n "$mid" ] && [ "$mid" = "$lid" ]; then ETCD_LEADER=http://127.0.0.1:2379$i; fi
  done
  [ -n "$ETCD_LEADER" ] || ETCD_LEADER=http://127.0.0.1:23791
}

start_rf() { # [PORT_BASE [LOG_STORE [plain|tls [BIN_DIR]]]]: a 3-node rackfence cluster on 127.0.0.1..3
  # plain (--insecure-plaintext) by default: etcd, the baseline, runs plain HTTP too.
  local pb=${1:-7580} store=${2:-wal} sec=${3:-plain} tag=rf${1:-} bin=${4:-$BIN}
  local scheme=http extra=(--insecure-plaintext)
  if [ "$sec" = tls ]; then scheme=https; extra=(); fi
  CURL_CA=; [ "$sec" = tls ] && CURL_CA="$W/${tag}1/tls/ca.crt"
  for i in 1 2 3; do
    local args=(--node-id n$i --data-dir "$W/$tag$i" --http-addr 127.0.0.$i:$pb --raft-addr 127.0.0.$i:$((pb+1)) --raft-log-store "$store" "${extra[@]}")
    if [ $i -gt 1 ]; then args+=(--join $scheme://127.0.0.1:$pb --join-token-file "$W/${tag}1/admin.token"); fi
    "$bin/rackfence-coordinator" "${args[@]}" >"$W/$tag$i.log" 2>&1 &
    PIDS+=($!); eval "RF_PID$i=$!"
    for _ in $(seq 1 100); do [ -z "$CURL_CA" ] || [ -s "$CURL_CA" ] && break; sleep 0.1; done
    wait_http $scheme://127.0.0.$i:$pb/v1/health
    if [ $i -eq 1 ]; then for _ in $(seq 1 100); do [ -s "$W/${tag}1/admin.token" ] && break; sleep 0.1; done; fi
  done
  TOKEN_FILE="$W/${tag}1/admin.token"
  for _ in $(seq 1 100); do
    n=$(curl -fsS ${CURL_CA:+--cacert "$CURL_CA"} -H "Authorization: Bearer $(cat $TOKEN_FILE)" $scheme://127.0.0.1:$pb/v1/status 2>/dev/null | grep -o '"id"' | wc -l || true)
    [ "${n:-0}" -ge 3 ] && break; sleep 0.2
  done
  RF_LEADER=$(curl -fsS ${CURL_CA:+--cacert "$CURL_CA"} -H "Authorization: Bearer $(cat $TOKEN_FILE)" $scheme://127.0.0.1:$pb/v1/status | sed -n 's/.*"leader":"\([^"]*\)".*/\1/p')
  CURL_CA=
}

# raft_ms PORT_BASE TOKEN_FILE: cumulative "count sum" of raft's timings over
# the three members (dispatchLog and commitTime come from the leader,
# rpc_appendEntries_storeLogs from the followers).
raft_ms() {
  for i in 1 2 3; do curl -fsS -H "Authorization: Bearer $(cat $2)" "http://127.0.0.$i:$1/metrics"; done | awk '
    /^rackfence_raft_(leader_dispatch_log|commit|follower_store_logs|replication_append_entries)_seconds_(sum|count)[{ ]/{
      k=$1; sub(/[{].*/,"",k); sub(/_seconds_(sum|count)$/,"",k); if ($1 ~ /_seconds_sum/) s[k]+=$NF*1000; else c[k]+=$NF }
    END { for (k in c) printf "%s %d %.3f\n", k, c[k], s[k] }'
}
# raft_delta BEFORE AFTER: mean milliseconds per sample between two raft_ms outputs.
raft_delta() {
  awk 'NR==FNR { c[$1]=$2; s[$1]=$3; next }
       { n=$2-c[$1]; if (n>0) { k=$1; sub(/^rackfence_raft_/,"",k); printf "  %-38s %8.2f ms mean over %d\n", k, ($3-s[$1])/n, n } }' "$1" "$2" | sort
}

rss_kib() { awk '/VmRSS/{print $2}' /proc/$1/status; }

if ! skip writes; then
  if ! skip etcd; then
    say "host writes, 200-byte bodies, to the leader: etcd (A) and rackfence (B) both up, interleaved ABBA, ${ROUNDS} rounds × ${SLICE} per target per client count"
    start_etcd
    start_rf
    "$BIN/rackfence-load" compare --a-target etcd --a-url "$ETCD_LEADER" --b-target rackfence --b-url "$RF_LEADER" \
      --b-token-file "$TOKEN_FILE" --clients "$CLIENTS" --slice "$SLICE" --rounds "$ROUNDS"
    echo "ratio = rackfence/etcd writes/s over all rounds; median-of-rounds is the robust figure; steal = hypervisor steal during each slice"
    for p in ${ETCD_PID1:-} ${ETCD_PID2:-} ${ETCD_PID3:-}; do kill -9 $p 2>/dev/null || true; done
  else
    say "host writes, 200-byte bodies, to the leader (closed loop, ${DUR} per point; no etcd baseline)"
    start_rf
    "$BIN/rackfence-load" write --target rackfence --url "$RF_LEADER" --token-file "$TOKEN_FILE" --clients "$CLIENTS" --duration "$DUR"
  fi
  if ! skip failover; then
    say "failover: kill -9 of the leader → next accepted write"
    "$BIN/rackfence-load" failover --urls http://127.0.0.1:7580,http://127.0.0.2:7580,http://127.0.0.3:7580 \
      --pids "http://127.0.0.1:7580=$RF_PID1,http://127.0.0.2:7580=$RF_PID2,http://127.0.0.3:7580=$RF_PID3" --token-file "$TOKEN_FILE"
  fi
  for p in $RF_PID1 $RF_PID2 $RF_PID3; do kill -9 $p 2>/dev/null || true; done
fi

if ! skip tls; then
  say "transport security: --insecure-plaintext (A) vs the default mutual TLS (B), two 3-member clusters, interleaved ABBA, ${ROUNDS} rounds × ${SLICE}"
  start_rf 7610 wal plain; PL_LEADER=$RF_LEADER; PL_TOKEN=$TOKEN_FILE; PL_PIDS="$RF_PID1 $RF_PID2 $RF_PID3"
  start_rf 7620 wal tls; TLS_LEADER=$RF_LEADER; TLS_TOKEN=$TOKEN_FILE; TLS_PIDS="$RF_PID1 $RF_PID2 $RF_PID3"
  "$BIN/rackfence-load" compare --a-target rackfence --a-url "$PL_LEADER" --a-token-file "$PL_TOKEN" \
    --b-target rackfence --b-url "$TLS_LEADER" --b-token-file "$TLS_TOKEN" --clients "$CLIENTS" --slice "$SLICE" --rounds "$ROUNDS"
  echo "ratio = TLS/plaintext writes/s (goal >= 0.9x); the client speaks HTTPS to the leader and Raft runs over mutual TLS"
  for p in $PL_PIDS $TLS_PIDS; do kill -9 $p 2>/dev/null || true; done
fi

if ! skip logstore; then
  say "Raft log store: --raft-log-store bolt (A) vs wal (B), two 3-member clusters, interleaved ABBA, ${ROUNDS} rounds × ${SLICE}; raft's timings on each leader"
  start_rf 7590 bolt; BOLT_LEADER=$RF_LEADER; BOLT_TOKEN=$TOKEN_FILE; BOLT_PIDS="$RF_PID1 $RF_PID2 $RF_PID3"
  start_rf 7600 wal; WAL_LEADER=$RF_LEADER; WAL_TOKEN=$TOKEN_FILE; WAL_PIDS="$RF_PID1 $RF_PID2 $RF_PID3"
  for n in ${CLIENTS//,/ }; do
    raft_ms 7590 "$BOLT_TOKEN" >"$W/bolt.0"; raft_ms 7600 "$WAL_TOKEN" >"$W/wal.0"
    "$BIN/rackfence-load" compare --a-target rackfence --a-url "$BOLT_LEADER" --a-token-file "$BOLT_TOKEN" \
      --b-target rackfence --b-url "$WAL_LEADER" --b-token-file "$WAL_TOKEN" --clients "$n" --slice "$SLICE" --rounds "$ROUNDS"
    raft_ms 7590 "$BOLT_TOKEN" >"$W/bolt.1"; raft_ms 7600 "$WAL_TOKEN" >"$W/wal.1"
    echo " bolt cluster, $n clients:"; raft_delta "$W/bolt.0" "$W/bolt.1"
    echo " wal cluster, $n clients:"; raft_delta "$W/wal.0" "$W/wal.1"
  done
  echo "ratio = wal/bolt writes/s; leader_dispatch_log = the leader's log write+sync, follower_store_logs = a follower's"
  for p in $BOLT_PIDS $WAL_PIDS; do kill -9 $p 2>/dev/null || true; done
fi

if [ -n "${BENCH_BASELINE_BIN:-}" ] && ! skip baseline; then
  say "this build (B) vs the coordinator in $BENCH_BASELINE_BIN (A), two 3-member bolt clusters, interleaved ABBA, ${ROUNDS} rounds × ${SLICE}"
  start_rf 7630 bolt plain "$BENCH_BASELINE_BIN"; BASE_LEADER=$RF_LEADER; BASE_TOKEN=$TOKEN_FILE; BASE_PIDS="$RF_PID1 $RF_PID2 $RF_PID3"
  start_rf 7640 bolt; NEW_LEADER=$RF_LEADER; NEW_TOKEN=$TOKEN_FILE; NEW_PIDS="$RF_PID1 $RF_PID2 $RF_PID3"
  "$BIN/rackfence-load" compare --a-target rackfence --a-url "$BASE_LEADER" --a-token-file "$BASE_TOKEN" \
    --b-target rackfence --b-url "$NEW_LEADER" --b-token-file "$NEW_TOKEN" --clients "$CLIENTS" --slice "$SLICE" --rounds "$ROUNDS"
  echo "ratio = this build/baseline writes/s"
  for p in $BASE_PIDS $NEW_PIDS; do kill -9 $p 2>/dev/null || true; done
fi

if ! skip memory; then
  say "memory: $FILL hosts with hardware details in one coordinator"
  rm -rf "$W/mem"
  "$BIN/rackfence-coordinator" --node-id m1 --data-dir "$W/mem" --http-addr 127.0.0.1:7680 --raft-addr 127.0.0.1:7681 --insecure-plaintext >"$W/mem.log" 2>&1 &
  MPID=$!; PIDS+=($MPID)
  wait_http http://127.0.0.1:7680/v1/health
  for _ in $(seq 1 100); do [ -s "$W/mem/admin.token" ] && break; sleep 0.1; done
  base=$(rss_kib $MPID)
  "$BIN/rackfence-load" fill --url http://127.0.0.1:7680 --token-file "$W/mem/admin.token" --hosts "$FILL"
  sleep 2
  rss=$(rss_kib $MPID)
  echo "coordinator RSS: empty ${base} KiB, with $FILL hosts ${rss} KiB → $(( (rss) * 1024 / FILL )) bytes/host (goal ≤ 8192)"
  kill -TERM $MPID; wait $MPID 2>/dev/null || true
  t0=$(date +%s.%N)
  "$BIN/rackfence-coordinator" --node-id m1 --data-dir "$W/mem" --http-addr 127.0.0.1:7680 --raft-addr 127.0.0.1:7681 >>"$W/mem.log" 2>&1 &
  MPID=$!; PIDS+=($MPID)
  for _ in $(seq 1 600); do
    curl -fsS -o /dev/null -H "Authorization: Bearer $(cat $W/mem/admin.token)" "http://127.0.0.1:7680/v1/hosts/fill-000001" 2>/dev/null && break; sleep 0.05
  done
  t1=$(date +%s.%N)
  echo "restart with $FILL hosts → serving a linearizable read in $(awk -v a=$t0 -v b=$t1 'BEGIN{printf "%.2f", b-a}') s (goal ≤ 10); RSS after restart $(rss_kib $MPID) KiB"
  kill -9 $MPID 2>/dev/null || true
fi

if ! skip fleet; then
  say "fleet: $FLEET_HOSTS hosts over $FLEET_RACKS racks, one real agent per rack, bmcsim BMCs, one coordinator"
  mkdir -p "$OUT"
  plain=(); [ -n "${BENCH_FLEET_PLAINTEXT:-}" ] && plain=(--plaintext)
  read -r -a c0 < <(head -1 /proc/stat)
  "$BIN/rackfence-load" fleet --bin "$BIN" --hosts "$FLEET_HOSTS" --racks "$FLEET_RACKS" --sims "$FLEET_SIMS" "${plain[@]}" \
    --steady "${BENCH_FLEET_STEADY:-60s}" --status-refresh "${BENCH_FLEET_REFRESH:-60s}" \
    --report "$OUT/fleet-$FLEET_HOSTS.md" --plot "$OUT/fleet-$FLEET_HOSTS.svg"
  echo "report: $OUT/fleet-$FLEET_HOSTS.md, plot: $OUT/fleet-$FLEET_HOSTS.svg"
  read -r -a c1 < <(head -1 /proc/stat)
  t=0; for k in 1 2 3 4 5 6 7 8; do t=$(( t + c1[k] - c0[k] )); done
  echo "during the fleet run: steal $(( 100 * (c1[8] - c0[8]) / (t > 0 ? t : 1) )) %, load average $(cut -d' ' -f1-3 /proc/loadavg) (2 cores, shared)"
fi

if ! skip watchers; then
  say "watchers: ${BENCH_WATCHERS:-0,500,2000} long-poll watchers of one rack, 500 writes into it, one coordinator per count"
  "$BIN/rackfence-load" watchers --bin "$BIN" --watchers "${BENCH_WATCHERS:-0,500,2000}" --writes 500 --after 60s
fi

if ! skip ui; then
  say "dashboard: 10,000 and ${BENCH_UI_HOSTS:-100000} hosts in chromium (first paint, all hosts loaded, a filter, a change to its tile)"
  RACKFENCE_BIN="$BIN" RACKFENCE_UI_SCALE="${BENCH_UI_HOSTS:-100000}" go test -count=1 -run 'TestDashboardScale' -v -timeout 60m ./coordinator/ui/ |
    grep -E '^figures:|scale_test.go:[0-9]+: +(dashboard|first|all|filter|update|DOM|loaded|  )' || true
fi

if ! skip go; then
  say "Go benchmarks (bmcsim, agent, provisioners)"
  pkgs=$(grep -rl --include='*_test.go' '^func Benchmark' . | xargs -r -n1 dirname | sort -u | sed 's#^\./#./#')
  for p in $pkgs; do
    case $p in ./testkit/bench*) continue;; esac
    RACKFENCE_BIN="$BIN" go test -run '^$' -bench . -benchtime 1x -timeout 20m "$p" | grep -v '^goos\|^goarch\|^pkg\|^cpu' || true
  done
fi
