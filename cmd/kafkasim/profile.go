package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/spf13/cobra"
)

// Profiling a run (docs/performance.md, "Long runs"): hidden flags of
// kafkasim run and kafkasim check (which judges a stored run's history
// again, so the checks can be measured without simulating) for whoever
// measures the command's own cost. --cpuprofile
// writes a CPU profile of the whole command; --memprofile writes a heap
// profile taken when the live heap was at its highest (sampled every 100 ms:
// the collector's view after its latest cycle), so that it shows
// what a long run holds at its peak rather than at its end. Neither
// changes a run: they only read the runtime's statistics.
type profileFlags struct {
	cpu, mem string
}

func (p *profileFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&p.cpu, "cpuprofile", "", "write a CPU profile of the command to FILE (go tool pprof)")
	cmd.Flags().StringVar(&p.mem, "memprofile", "", "write a heap profile taken at the heap's peak to FILE (go tool pprof)")
	cmd.Flags().MarkHidden("cpuprofile")
	cmd.Flags().MarkHidden("memprofile")
}

// begin is start for a command's RunE: the function it returns ends the
// profiles and reports a failure to write them on w (the command's own
// outcome stands).
func (p *profileFlags) begin(w io.Writer) (end func(), err error) {
	stop, err := p.start()
	if err != nil {
		return nil, err
	}
	return func() {
		if err := stop(); err != nil {
			fmt.Fprintf(w, "kafkasim: %v\n", err)
		}
	}, nil
}

// start begins the profiles asked for; the function it returns ends them
// and writes their files.
func (p *profileFlags) start() (stop func() error, err error) {
	var cpuFile *os.File
	if p.cpu != "" {
		if cpuFile, err = os.Create(p.cpu); err != nil {
			return nil, usage("--cpuprofile: %v", err)
		}
		if err = pprof.StartCPUProfile(cpuFile); err != nil {
			cpuFile.Close()
			return nil, usage("--cpuprofile: %v", err)
		}
	}
	var peak *peakHeap
	if p.mem != "" {
		runtime.MemProfileRate = 512 << 10 // coarser than the default: cheap enough for long runs
		peak = startPeakHeap()
	}
	return func() error {
		var errs []error
		if cpuFile != nil {
			pprof.StopCPUProfile()
			if err := cpuFile.Close(); err != nil {
				errs = append(errs, err)
			}
		}
		if peak != nil {
			if err := peak.stop(p.mem); err != nil {
				errs = append(errs, err)
			}
		}
		if len(errs) > 0 {
			return fmt.Errorf("profiles: %v", errs)
		}
		return nil
	}, nil
}

// peakHeap keeps the heap profile of the moment the heap in use was
// highest.
type peakHeap struct {
	done    chan struct{}
	wg      sync.WaitGroup
	mu      sync.Mutex
	best    uint64
	profile []byte
}

func startPeakHeap() *peakHeap {
	h := &peakHeap{done: make(chan struct{})}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-h.done:
				return
			case <-tick.C:
				h.sample()
			}
		}
	}()
	return h
}

// sample takes a profile when the live heap (as the latest collection
// marked it, which is what a heap profile's in-use figures show) grew by a
// fiftieth past the highest seen.
func (h *peakHeap) sample() {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	live := s[0].Value.Uint64()
	h.mu.Lock()
	defer h.mu.Unlock()
	if live <= h.best+h.best/50 {
		return
	}
	h.best = live
	// A heap profile shows the heap as of the latest collection whose
	// sweep finished, which may be two cycles old: collect now so that it
	// shows this peak (profiling costs collections, never behaviour).
	runtime.GC()
	var buf bytesBuffer
	if pprof.Lookup("heap").WriteTo(&buf, 0) == nil {
		h.profile = buf
	}
}

type bytesBuffer []byte

func (b *bytesBuffer) Write(p []byte) (int, error) { *b = append(*b, p...); return len(p), nil }

func (h *peakHeap) stop(path string) error {
	close(h.done)
	h.wg.Wait()
	h.sample()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Fprintf(os.Stderr, "kafkasim: heap profile at the live heap's peak, %d MiB (%d collections, heap from the OS %d MiB): %s\n",
		h.best>>20, ms.NumGC, ms.HeapSys>>20, path)
	return os.WriteFile(path, h.profile, 0o644)
}
