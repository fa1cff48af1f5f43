//go:build !unix

package fuzz

import "time"

// processCPU is not measured here: the summary leaves its CPU figures at 0.
func processCPU() (time.Duration, bool) { return 0, false }
