//go:build unix

package fuzz

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system) this process has used so far,
// every thread included: a campaign's figures per CPU-second count what the
// collector and the checkers' helper goroutines took on other cores too.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
