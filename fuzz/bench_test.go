package fuzz

import (
	"fmt"
	"os"
	"runtime/debug"
	"testing"
)

// BenchmarkCampaign runs the same 60 seeds with one worker and with two,
// and reports runs per second: issue 7 asks that --parallel 2 come close
// to twice --parallel 1. GOGC is 400, as the CLI sets it by default;
// compare -cpu 1 with -cpu 2 to tell the pool from the machine.
func BenchmarkCampaign(b *testing.B) {
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(400))
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
