//go:build unix

// Package cputime measures the CPU time this process has used.
package cputime

import (
	"syscall"
	"time"
)

// Process is the CPU time (user and system) this process has used so far,
// every thread included: figures per CPU-second (a fuzz campaign's, a
// sweep's) count what the collector and the checkers' helper goroutines
// took on other cores too.
func Process() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
