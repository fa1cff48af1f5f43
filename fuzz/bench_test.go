package fuzz

import (
	"fmt"
	"os"
	"testing"

	"kafkasim/internal/gctune"
	"kafkasim/internal/hugeheap"
)

// BenchmarkCampaign runs the same 60 seeds with one worker and with two,
// and reports runs per second: issue 7 asks that --parallel 2 come close
// to twice --parallel 1. The collector is tuned as the CLI tunes it by
// default (internal/gctune: GOGC=400 for these small heaps), and its heap
// marked for huge pages as the CLI marks it (internal/hugeheap);
// compare -cpu 1 with -cpu 2 to tell the pool from the machine.
func BenchmarkCampaign(b *testing.B) {
	if os.Getenv("GOGC") == "" {
		defer gctune.Start()()
	}
	if _, _, err := hugeheap.Reserve(); err != nil {
		b.Fatal(err)
	}
	for _, parallel := range []int{1, 2} {
		b.Run(fmt.Sprintf("parallel=%d", parallel), func(b *testing.B) {
			runs := 0
			for range b.N {
				sum, err := Campaign(Options{Runs: 60, Parallel: parallel, SeedStart: 1, Out: b.TempDir()})
				if err != nil {
					b.Fatal(err)
				}
				runs += sum.Runs
			}
			b.ReportMetric(float64(runs)/b.Elapsed().Seconds(), "runs/s")
		})
	}
}
