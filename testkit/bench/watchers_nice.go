package bench

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// niceSelf sets every thread of this process to nice n (Linux sets it per
// thread; threads started later inherit it from the thread that starts
// them).
func niceSelf(n int) error {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return fmt.Errorf("list this process's threads: %w", err)
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, n); err != nil {
			return fmt.Errorf("set thread %d to nice %d: %w", tid, n, err)
		}
	}
	return nil
}
