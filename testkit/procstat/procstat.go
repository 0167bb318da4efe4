// Package procstat reads a process's memory and CPU time from Linux's /proc,
// for benchmarks and the tests that report or bound them.
package procstat

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// TicksPerSecond is the clock tick of /proc/PID/stat's times (USER_HZ, 100
// on Linux).
const TicksPerSecond = 100

// RSSKiB is VmRSS of pid in KiB (-1 when unknown: no such process, not
// Linux).
func RSSKiB(pid int) int64 { return StatusKiB(pid, "VmRSS") }

// StatusKiB is the field of /proc/PID/status named field (VmRSS, RssAnon:
// anonymous memory, the Go heap and stacks; RssFile: mapped files, the
// binary and the Raft log's bolt file) in KiB (-1 when unknown).
func StatusKiB(pid int, field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			fs := strings.Fields(v)
			if len(fs) == 0 {
				return -1
			}
			n, err := strconv.ParseInt(fs[0], 10, 64)
			if err != nil {
				return -1
			}
			return n
		}
	}
	return -1
}

// RSSMiB is RSSKiB in MiB (-1 when unknown).
func RSSMiB(pid int) float64 {
	kib := RSSKiB(pid)
	if kib < 0 {
		return -1
	}
	return float64(kib) / 1024
}

// CPUTicks is the user + system CPU time of pid in clock ticks
// (TicksPerSecond a second; -1 when unknown).
func CPUTicks(pid int) int64 {
	f := statFields(pid)
	if f == nil {
		return -1
	}
	return f.num(statUTime) + f.num(statSTime)
}

// SystemTicks is the system (kernel) part of CPUTicks: page faults,
// system calls (-1 when unknown).
func SystemTicks(pid int) int64 {
	f := statFields(pid)
	if f == nil {
		return -1
	}
	return f.num(statSTime)
}

// MinorFaults is how many minor page faults pid has taken (a page mapped
// on first touch, or again after the process handed it back; -1 when
// unknown).
func MinorFaults(pid int) int64 {
	f := statFields(pid)
	if f == nil {
		return -1
	}
	return f.num(statMinFlt)
}

// Nice is pid's nice value (-20 to 19; ok false when unknown).
func Nice(pid int) (n int, ok bool) {
	f := statFields(pid)
	if len(f) <= statNice {
		return 0, false
	}
	return int(f.num(statNice)), true
}

// Fields of /proc/PID/stat counted from the one after the command name
// (proc(5): minflt is field 10, utime 14, stime 15, nice 19).
const (
	statMinFlt = 7
	statUTime  = 11
	statSTime  = 12
	statNice   = 16
)

type stat []string

func (f stat) num(i int) int64 {
	n, _ := strconv.ParseInt(f[i], 10, 64)
	return n
}

// statFields reads /proc/PID/stat after the command name; nil when it
// cannot.
func statFields(pid int) stat {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command name may hold spaces
	if i < 0 || i+2 > len(s) {
		return nil
	}
	f := strings.Fields(s[i+2:])
	if len(f) <= statSTime {
		return nil
	}
	return f
}

// CPUSeconds is CPUTicks in seconds (-1 when unknown).
func CPUSeconds(pid int) float64 {
	t := CPUTicks(pid)
	if t < 0 {
		return -1
	}
	return float64(t) / TicksPerSecond
}
