#!/bin/sh
# ipmi_sim.sh — start and stop openipmi's ipmi_sim as N IPMI (RMCP+/lanplus)
# BMCs on loopback, for tests, CI and people.
#
#   deploy/peers/ipmi_sim.sh start STATEDIR PORT [N]
#       starts N (default 1) BMCs on udp 127.0.0.1:PORT..PORT+N-1, user admin,
#       password password. BMC i (0-based) lives in STATEDIR/bmc<i>/: its
#       lan.conf, ipmi_sim.pid, ipmi_sim.log, the host's power and boot
#       state (files power, boot) and commands.log, one line per power/boot
#       command the BMC received ("<unix-seconds> set PARM VALUE"). Waits
#       until each answers "chassis power status" and prints where it
#       listens; on failure prints the log's tail, stops what it started and
#       exits 1. Hosts start powered off.
#   deploy/peers/ipmi_sim.sh stop STATEDIR
#       SIGTERM every BMC under STATEDIR, SIGKILL after 10 s. Keeps state.
#   deploy/peers/ipmi_sim.sh status STATEDIR
#
# Talk to a BMC with
#   ipmitool -I lanplus -H 127.0.0.1 -p PORT -U admin -P password -C 3 power status
# (cipher suite 3: others stall ~10 s against ipmi_sim).
#
# Files: deploy/peers/ipmi_sim/lan.conf.tmpl (per-BMC config),
# deploy/peers/ipmi_sim/bmc.emu (emulation commands: one MC at 0x20),
# deploy/peers/ipmi_sim/chassis_control (keeps power/boot state; without it
# ipmi_sim answers power and bootdev with "invalid data field").
#
# Environment: WATCH_PID — when set, the BMCs are stopped as soon as that
# process is gone (tests pass their own pid, so a killed test run leaves
# nothing behind); IPMI_SIM_START_TIMEOUT — seconds per BMC (default 30).
# Exit 3 when ipmi_sim or ipmitool is missing (run deploy/peers/install.sh),
# 2 on a bad argument, 1 when a BMC fails to start.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
files="$here/ipmi_sim"

die() {
	echo "ipmi_sim.sh: $*" >&2
	exit 1
}
usage() {
	echo "usage: $0 start STATEDIR PORT [N] | stop STATEDIR | status STATEDIR" >&2
	exit 2
}
number() { # NAME VALUE MIN MAX
	case "$2" in
	'' | *[!0-9]*)
		echo "ipmi_sim.sh: $1 must be a number, got '$2'" >&2
		exit 2
		;;
	esac
	if [ "$2" -lt "$3" ] || [ "$2" -gt "$4" ]; then
		echo "ipmi_sim.sh: $1 must be $3 to $4, got $2" >&2
		exit 2
	fi
}

running_pid() { # BMCDIR
	[ -f "$1/ipmi_sim.pid" ] || return 1
	p=$(cat "$1/ipmi_sim.pid")
	[ -n "$p" ] && kill -0 "$p" 2>/dev/null || return 1
	echo "$p"
}

tail_log() {
	if [ -s "$1/ipmi_sim.log" ]; then
		echo "---- last lines of $1/ipmi_sim.log ----" >&2
		tail -n 30 "$1/ipmi_sim.log" >&2
	else
		echo "---- $1/ipmi_sim.log is empty ----" >&2
	fi
}

port_busy() { # PORT: something already listens on udp PORT (ipmi_sim binds
	# with SO_REUSEADDR, so a second one would start and share the port).
	if command -v ss >/dev/null 2>&1; then
		[ -n "$(ss -Hlun "sport = :$1" 2>/dev/null)" ]
	else
		answers "$1"
	fi
}

answers() { # PORT
	ipmitool -I lanplus -H 127.0.0.1 -p "$1" -U admin -E -C 3 -N 1 -R 1 \
		chassis power status >/dev/null 2>&1
}

stop_dir() { # BMCDIR
	if ! p=$(running_pid "$1"); then
		rm -f "$1/ipmi_sim.pid"
		return 0
	fi
	kill -TERM "$p" 2>/dev/null || true
	i=0
	while kill -0 "$p" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if kill -0 "$p" 2>/dev/null; then
		echo "ipmi_sim.sh: pid $p ignored SIGTERM for 10 s; sending SIGKILL" >&2
		kill -KILL "$p" 2>/dev/null || true
	fi
	rm -f "$1/ipmi_sim.pid"
	echo "ipmi_sim: stopped $1 (pid $p)"
}

stop_all() { # STATEDIR
	for b in "$1"/bmc*; do
		[ -d "$b" ] && stop_dir "$b"
	done
	return 0
}

start() { # STATEDIR PORT N
	[ -x /usr/bin/ipmi_sim ] || {
		echo "ipmi_sim.sh: /usr/bin/ipmi_sim (openipmi) is missing; run deploy/peers/install.sh" >&2
		exit 3
	}
	command -v ipmitool >/dev/null 2>&1 || {
		echo "ipmi_sim.sh: ipmitool is missing; run deploy/peers/install.sh" >&2
		exit 3
	}
	mkdir -p "$1"
	d=$(cd "$1" && pwd)
	# ipmi_sim splits the chassis_control line on blanks, and sed renders
	# lan.conf with '#' as delimiter: neither path may hold those.
	case "$d$files" in
	*[[:space:]\"#]*) die "STATEDIR '$d' and the repository path '$files' must not contain blanks, quotes or '#'" ;;
	esac
	export IPMI_PASSWORD=password
	i=0
	while [ "$i" -lt "$3" ]; do
		b="$d/bmc$i"
		port=$(($2 + i))
		mkdir -p "$b/persist"
		if p=$(running_pid "$b"); then
			die "BMC $b already runs (pid $p); stop it first"
		fi
		if port_busy "$port"; then
			stop_all "$d" >/dev/null
			die "udp port $port is already in use; pick another PORT"
		fi
		[ -f "$b/power" ] || echo 0 >"$b/power"
		[ -f "$b/boot" ] || echo default >"$b/boot"
		: >>"$b/commands.log"
		sed -e "s#@NAME@#bmc$i#g" -e "s#@PORT@#$port#g" -e "s#@DIR@#$b#g" \
			-e "s#@CHASSIS@#$files/chassis_control#g" \
			"$files/lan.conf.tmpl" >"$b/lan.conf"
		cp "$files/bmc.emu" "$b/bmc.emu"
		# -n: no console; -s: persistence (users, SEL, SDRs) under the BMC's dir.
		setsid /usr/bin/ipmi_sim -n -c "$b/lan.conf" -f "$b/bmc.emu" -s "$b/persist" \
			>"$b/ipmi_sim.log" 2>&1 </dev/null &
		pid=$!
		echo "$pid" >"$b/ipmi_sim.pid"
		deadline=$(($(date +%s) + ${IPMI_SIM_START_TIMEOUT:-30}))
		until answers "$port"; do
			if ! kill -0 "$pid" 2>/dev/null; then
				echo "ipmi_sim.sh: ipmi_sim for $b (pid $pid) exited during start" >&2
				tail_log "$b"
				stop_all "$d" >/dev/null
				exit 1
			fi
			if [ "$(date +%s)" -ge "$deadline" ]; then
				echo "ipmi_sim.sh: ipmi_sim for $b (pid $pid) did not answer on udp 127.0.0.1:$port within ${IPMI_SIM_START_TIMEOUT:-30}s" >&2
				tail_log "$b"
				stop_all "$d" >/dev/null
				exit 1
			fi
			sleep 0.3
		done
		if [ -n "${WATCH_PID:-}" ]; then
			(
				while kill -0 "$WATCH_PID" 2>/dev/null && kill -0 "$pid" 2>/dev/null; do sleep 2; done
				kill -TERM "$pid" 2>/dev/null || true
			) </dev/null >/dev/null 2>&1 &
		fi
		echo "ipmi_sim: bmc$i listening on udp 127.0.0.1:$port (ipmi://127.0.0.1:$port, user admin, pid $pid, state $b)"
		i=$((i + 1))
	done
}

[ $# -ge 2 ] || usage
cmd=$1
dir=$2
shift 2
case "$cmd" in
start)
	[ $# -ge 1 ] && [ $# -le 2 ] || usage
	number PORT "$1" 1 65535
	n=${2:-1}
	number N "$n" 1 256
	number "PORT+N-1" $(($1 + n - 1)) 1 65535
	start "$dir" "$1" "$n"
	;;
stop) stop_all "$dir" ;;
status)
	found=0
	for b in "$dir"/bmc*; do
		[ -d "$b" ] || continue
		if p=$(running_pid "$b"); then
			echo "ipmi_sim: $b running (pid $p)"
			found=1
		else
			echo "ipmi_sim: $b not running"
		fi
	done
	[ $found -eq 1 ]
	;;
*) usage ;;
esac
