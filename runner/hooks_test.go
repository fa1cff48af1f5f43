package runner_test

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"strings"
	"testing"

	"kafkasim/fuzz"
	"kafkasim/history"
	"kafkasim/runner"
	"kafkasim/scenarios"
	"kafkasim/sim"
)

// recordHash is a trace sink that hashes every record it gets, whether its
// detail comes as a string or as bytes (sim.DetailSink).
type recordHash struct {
	h                hash.Hash
	records, asBytes int
	buf              []byte
}

func newRecordHash() *recordHash { return &recordHash{h: sha256.New()} }

func (s *recordHash) Record(r sim.TraceRecord) { s.add(r, []byte(r.Detail)) }

func (s *recordHash) RecordDetail(r sim.TraceRecord, detail []byte) {
	s.asBytes++
	s.add(r, detail)
}

func (s *recordHash) add(r sim.TraceRecord, detail []byte) {
	s.records++
	b := binary.AppendUvarint(s.buf[:0], r.Step)
	b = binary.AppendVarint(b, int64(r.At))
	for _, f := range [][]byte{[]byte(r.Kind), []byte(r.Node), []byte(r.From), detail} {
		b = binary.AppendUvarint(b, uint64(len(f)))
		b = append(b, f...)
	}
	s.buf = b
	s.h.Write(b)
}

// hooksRun is what must not change when the hooks are off, and what shows
// that they were at work when on.
type hooksRun struct {
	trace, events     uint64
	history, records  [32]byte
	nrecords          int
	detailsAsBytes    int
	requestsReused    int
	segmentsMemoized  int
	verdict, headline string
}

func runHooks(t *testing.T, s *scenarios.Scenario, off bool) hooksRun {
	t.Helper()
	sink := newRecordHash()
	res, err := runner.Run(s, runner.Options{Trace: sink, KeepCluster: true, HooksOff: off})
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	var buf []byte
	res.History.Each(func(op *history.Op) {
		buf = history.AppendJSON(buf[:0], op)
		h.Write(buf)
	})
	out := hooksRun{trace: res.TraceHash, events: res.Events, history: [32]byte(h.Sum(nil)),
		records: [32]byte(sink.h.Sum(nil)), nrecords: sink.records, detailsAsBytes: sink.asBytes,
		verdict: res.Verdict, headline: res.Headline()}
	c := res.Cluster
	for _, id := range c.Producers {
		if p := c.Producer(id); p != nil { // up at the end
			out.requestsReused += p.Stats.RequestsReused
		}
	}
	for _, id := range c.World.Nodes() {
		d := c.World.Disk(id)
		for _, f := range d.List("data/") {
			if strings.HasSuffix(f, ".log") && d.Memo(f) != nil {
				out.segmentsMemoized++
			}
		}
	}
	return out
}

// Every performance hook of the world (sim/hooks.go: messages handed back
// for reuse, the disk's memo of decoded segments, writes without a copy
// through file refs, trace details as bytes) saves work and changes
// nothing: scenarios run with the hooks and with them all off
// (runner.Options.HooksOff) must end with the same trace hash, the same
// number of events, the same history and the same trace records, word for
// word. The scenarios restart brokers after a crash, a power loss, a bit
// flip and compaction (the memo taken back, and checked where the bytes
// changed), duplicate messages (one never handed back), truncate and remove
// segments (file refs looked up again), and wipe a disk; the fuzz seeds mix
// faults of every kind.
func TestPerformanceHooksLeaveTraceUnchanged(t *testing.T) {
	type scenario struct {
		name string
		load func() (*scenarios.Scenario, error)
	}
	var list []scenario
	for _, f := range []string{
		"../scenarios/acks-all-safe.yaml",
		"../scenarios/rack-power-loss.yaml",
		"testdata/corrupt-batch-cut-at-recovery.yaml",
		"testdata/idempotent-retry-after-compaction-and-restart.yaml",
		"testdata/truncated-segment-stays-deleted-after-power-loss.yaml",
		"testdata/power-loss-undoes-follower-truncation.yaml",
		"testdata/disk-wipe-of-the-only-replica.yaml",
	} {
		list = append(list, scenario{f, func() (*scenarios.Scenario, error) { return scenarios.LoadFile(f) }})
	}
	// TCP never duplicates, reorders or loses a message; with those the
	// world must never hand back a message a copy of which is still due.
	list = append(list, scenario{"acks-all-safe, duplicating, reordering, losing", func() (*scenarios.Scenario, error) {
		s, err := scenarios.LoadFile("../scenarios/acks-all-safe.yaml")
		if err == nil {
			n := &s.Cluster.Network
			n.DuplicateProbability, n.ReorderProbability, n.LossProbability = 0.05, 0.02, 0.005
		}
		return s, err
	}})
	for seed := uint64(1); seed <= 4; seed++ {
		list = append(list, scenario{fmt.Sprintf("fuzz-%d", seed), func() (*scenarios.Scenario, error) { return fuzz.Generate(seed, nil, nil) }})
	}
	var reused, memoized, asBytes int
	for _, sc := range list {
		t.Run(sc.name, func(t *testing.T) {
			load := func() *scenarios.Scenario {
				s, err := sc.load()
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			on, off := runHooks(t, load(), false), runHooks(t, load(), true)
			if off.detailsAsBytes != 0 || off.requestsReused != 0 || off.segmentsMemoized != 0 {
				t.Fatalf("hooks off, yet %d details came as bytes, %d requests were reused and %d segments memoized", off.detailsAsBytes, off.requestsReused, off.segmentsMemoized)
			}
			t.Logf("events %d, requests reused %d, segments memoized %d, details as bytes %d of %d", on.events, on.requestsReused, on.segmentsMemoized, on.detailsAsBytes, on.nrecords)
			reused += on.requestsReused
			memoized += on.segmentsMemoized
			asBytes += on.detailsAsBytes
			on.detailsAsBytes, on.requestsReused, on.segmentsMemoized = 0, 0, 0
			if on != off {
				t.Fatalf("the hooks changed the run:\nwith    %+v\nwithout %+v", on, off)
			}
			if on.events == 0 || on.nrecords == 0 {
				t.Fatalf("an empty run: %+v", on)
			}
		})
	}
	if reused == 0 || memoized == 0 || asBytes == 0 {
		t.Fatalf("the hooks were not at work: %d requests reused, %d segments memoized, %d details as bytes", reused, memoized, asBytes)
	}
}
