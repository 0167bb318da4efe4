package bench

import (
	"github.com/rackfence/rackfence/testkit/procstat"
	"os"
	"runtime"
)

// MachineLoad is what the machine did during a phase of a fleet run
// besides the run's own processes: on a shared 2-core machine the figures
// mean little without it.
type MachineLoad struct {
	// Steal is the fraction of CPU time the hypervisor took (-1 unknown).
	Steal float64
	// OtherCores is the CPU, in cores, that processes outside the run
	// used (the machine's busy time minus the run's own processes').
	OtherCores float64
}

// machineMark is the machine's CPU counters and the run's processes' CPU
// at one moment.
type machineMark struct {
	cpu    cpuTimes
	ticks  int64
	active bool
}

// mark reads the machine's counters and the CPU ticks of this process and
// every process the run started.
func (f *fleet) mark() machineMark {
	m := machineMark{cpu: readSteal(), active: true, ticks: max(0, procstat.CPUTicks(os.Getpid()))}
	for _, p := range f.all() {
		if t := procstat.CPUTicks(p.pid()); t > 0 {
			m.ticks += t
		}
	}
	return m
}

// loadSince is the machine's load from m until now.
func (f *fleet) loadSince(m machineMark) MachineLoad {
	now := f.mark()
	d := now.cpu.total - m.cpu.total
	if !m.active || m.cpu.total == 0 || now.cpu.total <= m.cpu.total {
		return MachineLoad{Steal: -1, OtherCores: -1}
	}
	// /proc/stat counts USER_HZ ticks (100/s) summed over every CPU.
	elapsed := float64(d) / float64(runtime.NumCPU())
	busy := float64(d-(now.cpu.idle-m.cpu.idle)-(now.cpu.steal-m.cpu.steal)) / elapsed
	ours := float64(now.ticks-m.ticks) / elapsed
	return MachineLoad{Steal: float64(now.cpu.steal-m.cpu.steal) / float64(d), OtherCores: max(0, busy-ours)}
}

// all is every process the run started.
func (f *fleet) all() []*proc {
	ps := append(append([]*proc{}, f.agents...), f.sims...)
	if f.coord != nil {
		ps = append(ps, f.coord)
	}
	return ps
}
