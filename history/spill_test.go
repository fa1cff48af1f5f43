package history

import (
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// tinySpill spills every block of n operations as soon as it is complete.
func tinySpill(t testing.TB, n int) SpillConfig {
	return SpillConfig{Budget: 1, BlockOps: n, Dir: t.TempDir()}
}

// A recorder spilling block after block reads back exactly what one
// keeping everything in memory does, through every reader (Ops, Each,
// EachHead, Op, OpHead, Step, Sizes, Open, Len, the JSON Lines), over a
// random mix of sends, polls by spans and by records, errors, Exts, long
// values, types outside the four, deaths with operations open (which read
// spilled invocations back) and restarts; and Died completes the same
// operations in both.
func TestSpilledRecorderReadsAsInMemory(t *testing.T) {
	dir := t.TempDir()
	defer func(n int64) { blockRecordBytes = n }(blockRecordBytes)
	defer func(n int) { sinceCompactMin = n }(sinceCompactMin)
	rapid.Check(t, func(t *rapid.T) {
		sinceCompactMin = rapid.SampledFrom([]int{1 << 14, 4}).Draw(t, "compact since past")
		// Blocks end at their count of operations, or earlier at their
		// polls' records.
		blockRecordBytes = rapid.SampledFrom([]int64{4 << 20, 3 * recordBytes, 20 * recordBytes}).Draw(t, "block records")
		var now time.Duration
		var step uint64
		clock := func() time.Duration { return now }
		mem, disk := NewRecorder(clock), NewRecorder(clock)
		block := 1 << rapid.IntRange(0, 6).Draw(t, "block shift")
		budget := rapid.SampledFrom([]int64{1, 1, 200, 3000}).Draw(t, "budget")
		if err := disk.Spill(SpillConfig{Budget: budget, BlockOps: block, Dir: dir}); err != nil {
			t.Fatal(err)
		}
		for _, r := range []*Recorder{mem, disk} {
			r.TraceSteps(func() uint64 { return step })
		}
		procs := []string{"p-0", "p-1", "c-0", "c-1"}
		topics := []string{"orders", "billing", "t"}
		src := &fakeSource{base: 5, recs: []Record{{Value: "a"}, {Value: "b"}, {Key: "k", HasKey: true, Value: "c"}, {Value: "d"}, {Key: "", HasKey: true, Value: ""}}}
		x := &Ext{Group: "g", Generation: 3, Offsets: map[string]int64{"orders-1": 4}}
		both := func(f func(r *Recorder) int64) {
			if a, b := f(mem), f(disk); a != b {
				t.Fatalf("recorded as %d and %d", a, b)
			}
		}
		n := rapid.IntRange(0, 400).Draw(t, "ops")
		for i := range n {
			now += time.Duration(rapid.IntRange(0, 5000).Draw(t, "dt"))
			step += uint64(rapid.IntRange(0, 3).Draw(t, "dstep"))
			p := procs[rapid.IntRange(0, len(procs)-1).Draw(t, "proc")]
			v := NoValue()
			v.Topic = topics[rapid.IntRange(0, 2).Draw(t, "topic")]
			v.Value = p + ":" + strconv.Itoa(i)
			if rapid.Bool().Draw(t, "keyed") {
				v.Key, v.HasKey = "k"+strconv.Itoa(i%7), true
			}
			switch rapid.IntRange(0, 9).Draw(t, "kind") {
			case 0, 1:
				both(func(r *Recorder) int64 { return r.Invoke(p, FSend, v) })
			case 2:
				v.Partition, v.Offset = rapid.Int32Range(-1, 5).Draw(t, "partition"), rapid.Int64Range(-1, 100).Draw(t, "offset")
				typ := []Type{OK, Fail, Info}[rapid.IntRange(0, 2).Draw(t, "type")]
				if typ != OK {
					v.Error = "NOT_LEADER_OR_FOLLOWER"
				}
				both(func(r *Recorder) int64 { return r.Complete(p, typ, FSend, v) })
			case 3, 4:
				var spans []RecordSpan
				for range rapid.IntRange(0, 3).Draw(t, "spans") {
					lo := rapid.Int32Range(0, 5).Draw(t, "lo")
					spans = append(spans, RecordSpan{Src: src, Topic: topics[rapid.IntRange(0, 2).Draw(t, "span topic")], Partition: rapid.Int32Range(0, 5).Draw(t, "span partition"), Lo: lo, Hi: rapid.Int32Range(lo, 5).Draw(t, "hi")})
				}
				w := NoValue()
				w.Isolation, w.Final = "read_committed", rapid.Bool().Draw(t, "final")
				if w.Final {
					w.X().Positions = map[string]int64{"orders-0": int64(i)}
				}
				both(func(r *Recorder) int64 { return r.Invoke(p, FPoll, NoValue()) })
				both(func(r *Recorder) int64 { return r.CompletePoll(p, OK, w, spans) })
			case 5:
				w := NoValue()
				w.HasRecords = true
				w.Records = []Record{{Topic: v.Topic, Partition: 1, Offset: int64(i), Value: "x"}}
				both(func(r *Recorder) int64 { return r.Complete(p, OK, FPoll, w) })
			case 6:
				v.Ext = x
				f := []string{FCommit, FProcess, FTxnBegin}[rapid.IntRange(0, 2).Draw(t, "f")]
				both(func(r *Recorder) int64 { return r.Invoke(p, f, v) })
			case 7:
				if rapid.Bool().Draw(t, "long") {
					v.Value = strings.Repeat("v", streamChunkBytes/4+1)
				}
				typ := Type(rapid.IntRange(0, 6).Draw(t, "any type"))
				both(func(r *Recorder) int64 { return r.Complete(p, typ, "f-"+strconv.Itoa(i%3), v) })
			case 8:
				why := "process died: killed"
				if a, b := mem.Died(p, why), disk.Died(p, why); a != b {
					t.Fatalf("Died completed %d operations, spilled %d", a, b)
				}
			case 9:
				mem.Restarted(p)
				disk.Restarted(p)
			}
		}
		if rapid.Bool().Draw(t, "detach") {
			mem.Detach()
			disk.Detach()
			if disk.Spilled() > 0 && disk.Spilled() != int64(disk.Len()) {
				t.Fatalf("detached, %d of %d operations spilled", disk.Spilled(), disk.Len())
			}
		}
		compareRecorders(t, mem, disk)
		if budget == 1 && disk.Len() >= 2*block && disk.Spilled() == 0 {
			t.Fatalf("%d operations in blocks of %d: nothing spilled", disk.Len(), block)
		}
		if disk.Spilled() > 0 {
			// The spilled operations' spans are let go, and with them
			// the sources they point into.
			for i := disk.spans.cleared &^ dropBlockMask; i < disk.spans.cleared; i++ {
				if b := disk.spans.blocks[i>>dropBlockShift]; b != nil && b[i&dropBlockMask].src != nil {
					t.Fatalf("span %d of a spilled operation still holds its source", i)
				}
			}
		}
	})
}

// compareRecorders fails unless b reads back exactly as a.
func compareRecorders(t interface {
	Fatalf(string, ...any)
	Helper()
}, a, b *Recorder) {
	t.Helper()
	if a.Len() != b.Len() {
		t.Fatalf("Len %d, want %d", b.Len(), a.Len())
	}
	if err := b.Err(); err != nil {
		t.Fatalf("Err: %v", err)
	}
	wantOps, gotOps := a.Ops(), b.Ops()
	for i := range wantOps {
		if !reflect.DeepEqual(gotOps[i], wantOps[i]) {
			t.Fatalf("Ops: operation %d\n got %#v\nwant %#v", i, gotOps[i], wantOps[i])
		}
	}
	// As lines, or as Go values when outside the format (a type past the
	// four).
	line := func(op *Op) string {
		if op.Type > Info {
			return fmt.Sprintf("%#v", *op)
		}
		return string(AppendJSON(nil, op))
	}
	var want, got []string
	a.Each(func(op *Op) { want = append(want, line(op)) })
	b.Each(func(op *Op) { got = append(got, line(op)) })
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Each's JSON Lines differ")
	}
	var heads []Op
	a.EachHead(func(op *Op) { heads = append(heads, *op) })
	k := 0
	b.EachHead(func(op *Op) {
		if !reflect.DeepEqual(*op, heads[k]) {
			t.Fatalf("EachHead: operation %d\n got %#v\nwant %#v", k, *op, heads[k])
		}
		k++
	})
	// Backwards, so that random access misses the cache block after block.
	for i := int64(a.Len()) - 1; i >= -1; i-- {
		if i >= 0 {
			if g, w := b.Op(i), a.Op(i); !reflect.DeepEqual(g, w) {
				t.Fatalf("Op(%d)\n got %#v\nwant %#v", i, g, w)
			}
			if g, w := b.OpHead(i), a.OpHead(i); !reflect.DeepEqual(g, w) {
				t.Fatalf("OpHead(%d)\n got %#v\nwant %#v", i, g, w)
			}
		}
		if g, w := b.Step(i), a.Step(i); g != w {
			t.Fatalf("Step(%d) = %d, want %d", i, g, w)
		}
	}
	if g, w := b.Sizes(), a.Sizes(); !reflect.DeepEqual(g, w) {
		t.Fatalf("Sizes %+v, want %+v", g, w)
	}
	if g, w := b.Open(), a.Open(); g != w {
		t.Fatalf("Open %d, want %d", g, w)
	}
}

// The compact recorder's long lossless history (TestRecorderIsLossless),
// spilled in blocks of 64 operations, reads back as recorded.
func TestSpilledRecorderIsLossless(t *testing.T) {
	// The since lists compacted often (deaths keep them short).
	defer func(n int) { sinceCompactMin = n }(sinceCompactMin)
	sinceCompactMin = 64
	testRecorderIsLossless(t, tinySpill(t, 64))
}

// Readers at once (the run store's writer, the checker, a report looking
// operations up) read a spilled history as it was recorded.
func TestSpilledRecorderReadersAtOnce(t *testing.T) {
	mem, disk := NewRecorder(func() time.Duration { return 7 }), NewRecorder(func() time.Duration { return 7 })
	if err := disk.Spill(tinySpill(t, 16)); err != nil {
		t.Fatal(err)
	}
	src := &fakeSource{base: 1, recs: []Record{{Value: "a"}, {Key: "k", HasKey: true, Value: "b"}}}
	for i := range 2000 {
		v := sendValue("v" + strconv.Itoa(i))
		mem.Invoke("p", FSend, v)
		disk.Invoke("p", FSend, v)
		spans := []RecordSpan{{Src: src, Topic: "t", Partition: int32(i % 3), Lo: 0, Hi: 2}}
		mem.CompletePoll("c", OK, NoValue(), spans)
		disk.CompletePoll("c", OK, NoValue(), spans)
	}
	disk.Detach()
	if disk.Spilled() < 3000 {
		t.Fatalf("%d of %d operations spilled", disk.Spilled(), disk.Len())
	}
	want := mem.Ops()
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if g%2 == 0 {
				i := 0
				disk.Each(func(op *Op) {
					if !reflect.DeepEqual(*op, want[i]) {
						errs <- "Each: operation " + strconv.Itoa(i)
					}
					i++
				})
				return
			}
			for i := len(want) - 1; i >= 0; i -= 7 {
				if op := disk.Op(int64(i)); !reflect.DeepEqual(op, want[i]) {
					errs <- "Op " + strconv.Itoa(i)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

// A spill file damaged under the recorder is an error Err reports, not a
// history that was never recorded nor a panic; so is a file that cannot
// be made.
func TestSpillFileErrors(t *testing.T) {
	r := NewRecorder(func() time.Duration { return 1 })
	if err := r.Spill(tinySpill(t, 4)); err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		r.Invoke("p", FSend, sendValue("v"+strconv.Itoa(i)))
	}
	if r.Spilled() == 0 {
		t.Fatal("nothing spilled")
	}
	if _, err := r.disk.file.WriteAt([]byte{0xff, 0xff}, 3); err != nil {
		t.Fatal(err)
	}
	r.Each(func(*Op) {})
	if err := r.Err(); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("Err after reading a damaged block: %v", err)
	}

	gone := NewRecorder(func() time.Duration { return 1 })
	if err := gone.Spill(SpillConfig{Budget: 1, BlockOps: 4, Dir: t.TempDir() + "/missing"}); err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		gone.Invoke("p", FSend, sendValue("v"+strconv.Itoa(i)))
	}
	if err := gone.Err(); err == nil || !os.IsNotExist(errorsUnwrapAll(err)) {
		t.Fatalf("Err when the file cannot be made: %v", err)
	}
	if gone.Spilled() != 0 || gone.Op(39).Value.Value != "v39" || gone.Op(0).Value.Value != "v0" {
		t.Fatalf("after a failed spill: %d spilled, operations %+v", gone.Spilled(), gone.Op(0))
	}

	late := NewRecorder(func() time.Duration { return 1 })
	late.Invoke("p", FSend, sendValue("v"))
	if err := late.Spill(tinySpill(t, 4)); err == nil {
		t.Fatal("a spill set after the first operation was accepted")
	}
	if err := NewRecorder(nil).Spill(SpillConfig{Budget: 1, BlockOps: 3}); err == nil {
		t.Fatal("blocks of 3 operations were accepted")
	}
}

func errorsUnwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}
