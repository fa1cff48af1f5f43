package reader_test

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"kafkasim/history"
	"kafkasim/model/proto"
	"kafkasim/model/reader"
	"kafkasim/sim"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/workers1.golden from the code as it is")

// The digests in testdata/workers1.golden (each world's trace hash, steps,
// operations and the SHA-256 of its history's JSON Lines) were written by the member as it was
// before the worker pool and the side effects existed: with workers 1 (or
// unset) and no side effects, every history and trace must stay as it was,
// byte for byte. Each world runs a random processing range, so the
// processing draws' order shows too.
func TestOneWorkerKeepsHistoriesAndTracesAsTheyWere(t *testing.T) {
	jitter := func(cfg reader.Config, workers int) reader.Config {
		g := *cfg.Group
		g.Processing = sim.Range{Min: time.Millisecond, Max: 7 * time.Millisecond}
		g.Workers = workers
		cfg.Group = &g
		return cfg
	}
	worlds := map[string]func(workers int) *groupWorld{
		"modes": func(workers int) *groupWorld {
			var cfgs []reader.Config
			for i, m := range []reader.CommitMode{reader.CommitBeforeProcessing, reader.CommitAfterProcessing, reader.CommitAuto} {
				cfg := jitter(memberConfig(fmt.Sprintf("c-%d", i), m), workers)
				cfg.Group.GroupID = string(m)
				cfgs = append(cfgs, cfg)
			}
			gw := newGroupWorld(3, 40, cfgs...)
			gw.w.Start()
			gw.w.RunUntil(30 * time.Second)
			return gw
		},
		"eager": func(workers int) *groupWorld {
			c0 := jitter(memberConfig("c-0", reader.CommitAfterProcessing, rangeAssignor{}), workers)
			c1 := jitter(memberConfig("c-1", reader.CommitAuto, rangeAssignor{}), workers)
			c0.MaxPollRecords, c1.MaxPollRecords = 7, 7
			c1.Start = 2 * time.Second
			gw := newGroupWorld(4, 60, c0, c1)
			gw.w.Start()
			gw.w.RunUntil(40 * time.Second)
			return gw
		},
		"cooperative": func(workers int) *groupWorld {
			c0 := jitter(memberConfig("c-0", reader.CommitAfterProcessing, cooperativeRange{}), workers)
			c1 := jitter(memberConfig("c-1", reader.CommitAfterProcessing, cooperativeRange{}), workers)
			c0.MaxPollRecords, c1.MaxPollRecords = 5, 5
			c1.Start = time.Second
			gw := newGroupWorld(4, 60, c0, c1)
			gw.w.Start()
			gw.w.RunUntil(40 * time.Second)
			return gw
		},
		"refused": func(workers int) *groupWorld {
			gw := newGroupWorld(2, 10, jitter(memberConfig("c-0", reader.CommitAfterProcessing), workers))
			gw.b.commitErr = proto.IllegalGeneration
			gw.w.Start()
			gw.w.RunUntil(5 * time.Second)
			return gw
		},
		"restart": func(workers int) *groupWorld {
			cfg := jitter(memberConfig("c-0", reader.CommitAuto), workers)
			cfg.Group.GroupInstanceID = "c-0"
			cfg.MaxPollRecords = 3
			gw := newGroupWorld(2, 50, cfg)
			gw.w.Start()
			gw.w.RunUntil(7 * time.Second)
			gw.w.Crash(gw.members[0], false)
			gw.w.RunUntil(8 * time.Second)
			gw.w.Restart(gw.members[0])
			gw.w.RunUntil(20 * time.Second)
			return gw
		},
		"slow": func(workers int) *groupWorld {
			cfg := jitter(memberConfig("c-0", reader.CommitAfterProcessing), workers)
			cfg.MaxPollRecords = 5
			cfg.Group.MaxPollInterval = 2 * time.Second
			cfg.Group.Processing = sim.Range{Min: 500 * time.Millisecond, Max: 1500 * time.Millisecond}
			gw := newGroupWorld(1, 20, cfg)
			gw.w.Start()
			gw.w.RunUntil(20 * time.Second)
			return gw
		},
	}
	golden := filepath.Join("testdata", "workers1.golden")
	want, err := os.ReadFile(golden)
	if err != nil && !*updateGolden {
		t.Fatal(err)
	}
	var got []string
	for _, name := range slices.Sorted(mapKeys(worlds)) {
		for _, workers := range []int{0, 1} {
			gw := worlds[name](workers)
			h := sha256.New()
			if err := history.Write(h, gw.rec.Ops()); err != nil {
				t.Fatal(err)
			}
			line := fmt.Sprintf("%s trace %016x steps %d ops %d history %x", name, gw.w.TraceHash(), gw.w.Steps(), gw.rec.Len(), h.Sum(nil))
			if workers == 0 {
				got = append(got, line)
			} else if line != got[len(got)-1] {
				t.Errorf("workers 1 differs from workers unset:\n%s\n%s", line, got[len(got)-1])
			}
		}
	}
	text := strings.Join(got, "\n") + "\n"
	if *updateGolden {
		if err := os.WriteFile(golden, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if text != string(want) {
		t.Fatalf("histories or traces changed:\n%s\nwant (%s):\n%s", text, golden, want)
	}
}
