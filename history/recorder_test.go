package history

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"
)

func sendValue(v string) Value {
	x := NoValue()
	x.Topic, x.Key, x.HasKey, x.Value = "t", "k", true, v
	return x
}

// A client process that dies leaves no operation open: what it had open
// completes info (indeterminate) with the error, in invocation order, at the
// time of the death, and a crash pair follows; a restart is a pair too.
func TestDiedCompletesOpenOperationsAndRecordsTheCrash(t *testing.T) {
	now := time.Duration(0)
	r := NewRecorder(func() time.Duration { return now })
	r.Invoke("p-0", FSend, sendValue("p-0:0"))
	r.Invoke("p-0", FSend, sendValue("p-0:1"))
	r.Invoke("p-1", FSend, sendValue("p-1:0"))
	r.Invoke("p-0", FSend, sendValue("p-0:2"))
	now = time.Second
	done := sendValue("p-0:1")
	done.Partition, done.Offset = 0, 7
	r.Complete("p-0", OK, FSend, done)
	r.Invoke("c-0", FPoll, NoValue())
	if r.Open() != 4 {
		t.Fatalf("open %d, want 4", r.Open())
	}
	now = 2 * time.Second
	if n := r.Died("p-0", "process died: killed"); n != 2 {
		t.Fatalf("completed %d, want 2", n)
	}
	if n := r.Died("c-0", "process died: machine down"); n != 1 {
		t.Fatalf("completed %d, want 1", n)
	}
	now = 3 * time.Second
	r.Restarted("p-0")
	ops := r.Ops()
	tail := ops[6:]
	want := []struct {
		process string
		typ     Type
		f       string
		value   string
	}{
		{"p-0", Info, FSend, "p-0:0"}, {"p-0", Info, FSend, "p-0:2"},
		{"p-0", Invoke, FCrash, ""}, {"p-0", OK, FCrash, ""},
		{"c-0", Info, FPoll, ""}, {"c-0", Invoke, FCrash, ""}, {"c-0", OK, FCrash, ""},
		{"p-0", Invoke, FRestart, ""}, {"p-0", OK, FRestart, ""},
	}
	if len(tail) != len(want) {
		t.Fatalf("%d operations after the completion, want %d: %v", len(tail), len(want), tail)
	}
	for i, w := range want {
		o := tail[i]
		if o.Process != w.process || o.Type != w.typ || o.F != w.f || o.Value.Value != w.value {
			t.Fatalf("op %d: %v, want %s %s %s %q", i, o, w.process, w.typ, w.f, w.value)
		}
		at := int64(2 * time.Second)
		if o.F == FRestart {
			at = int64(3 * time.Second)
		}
		if o.Time != at {
			t.Fatalf("op %d at %d, want %d", i, o.Time, at)
		}
		if o.F != FRestart && o.Value.Error == "" {
			t.Fatalf("op %d has no error: %v", i, o)
		}
	}
	if tail[0].Value.Topic != "t" || tail[0].Value.Key != "k" || tail[0].Value.Partition != -1 || tail[0].Value.Offset != -1 {
		t.Fatalf("an info send keeps its invocation's value and no position: %+v", tail[0].Value)
	}
	if r.Open() != 1 { // p-1:0 is still open
		t.Fatalf("open %d, want 1", r.Open())
	}
	// Every operation of the dead processes is paired.
	open := map[string]int{}
	for _, o := range ops {
		if o.Process == "p-1" {
			continue
		}
		k := o.Process + " " + o.F + " " + o.Value.Value
		if o.Type == Invoke {
			open[k]++
		} else {
			open[k]--
		}
	}
	for k, n := range open {
		if n != 0 {
			t.Fatalf("%s: %d unpaired", k, n)
		}
	}
}

// refRecorder is the recorder as it was before it stored operations
// compactly: Op values in a slice, and each process's operations since it
// last died. The compact recorder must give back exactly what it gives.
type refRecorder struct {
	ops       []Op
	clock     func() time.Duration
	stepOf    func() uint64
	steps     []uint64
	byProcess map[string][]int64
}

func (r *refRecorder) add(process string, t Type, f string, v Value) int64 {
	i := int64(len(r.ops))
	if r.stepOf != nil {
		r.steps = append(r.steps, r.stepOf())
	}
	r.ops = append(r.ops, Op{Index: i, Time: int64(r.clock()), Process: process, Type: t, F: f, Value: v})
	if r.byProcess == nil {
		r.byProcess = map[string][]int64{}
	}
	r.byProcess[process] = append(r.byProcess[process], i)
	return i
}

func (r *refRecorder) step(i int64) uint64 {
	if i < 0 || i >= int64(len(r.steps)) {
		return 0
	}
	return r.steps[i]
}

func (r *refRecorder) died(process, why string) int {
	open := r.openOf(process)
	delete(r.byProcess, process)
	for _, i := range open {
		v := r.ops[i].Value
		v.Error = why
		r.add(process, Info, r.ops[i].F, v)
	}
	crash := NoValue()
	crash.Error = why
	r.add(process, Invoke, FCrash, crash)
	r.add(process, OK, FCrash, crash)
	return len(open)
}

func (r *refRecorder) openOf(process string) []int64 {
	pending := map[openKey][]int64{}
	for _, i := range r.byProcess[process] {
		k := keyOf(&r.ops[i])
		if r.ops[i].Type == Invoke {
			pending[k] = append(pending[k], i)
		} else if l := pending[k]; len(l) > 0 {
			pending[k] = l[1:]
		}
	}
	var open []int64
	for _, l := range pending {
		open = append(open, l...)
	}
	sort.Slice(open, func(i, j int) bool { return open[i] < open[j] })
	return open
}

func (r *refRecorder) open() int {
	n := 0
	for p := range r.byProcess {
		n += len(r.openOf(p))
	}
	return n
}

// bothRecorders records into a compact recorder and a reference one at once.
type bothRecorders struct {
	t    *testing.T
	now  time.Duration
	step uint64
	r    *Recorder
	ref  *refRecorder
}

func newBoth(t *testing.T) *bothRecorders {
	b := &bothRecorders{t: t}
	clock := func() time.Duration { return b.now }
	b.r = NewRecorder(clock)
	b.ref = &refRecorder{clock: clock}
	return b
}

func (b *bothRecorders) invoke(process, f string, v Value) {
	if i, j := b.r.Invoke(process, f, v), b.ref.add(process, Invoke, f, v); i != j {
		b.t.Fatalf("invoke: index %d, want %d", i, j)
	}
}

func (b *bothRecorders) complete(process string, t Type, f string, v Value) {
	if i, j := b.r.Complete(process, t, f, v), b.ref.add(process, t, f, v); i != j {
		b.t.Fatalf("complete: index %d, want %d", i, j)
	}
}

func (b *bothRecorders) died(process, why string) {
	if n, m := b.r.Died(process, why), b.ref.died(process, why); n != m {
		b.t.Fatalf("died %s: completed %d, want %d", process, n, m)
	}
}

func (b *bothRecorders) restarted(process string) {
	b.r.Restarted(process)
	b.ref.add(process, Invoke, FRestart, NoValue())
	b.ref.add(process, OK, FRestart, NoValue())
}

// check compares the whole history, field by field, through Ops and Each,
// and the steps and open counts.
func (b *bothRecorders) check() {
	t := b.t
	want := b.ref.ops
	got := b.r.Ops()
	if b.r.Len() != len(want) || len(got) != len(want) {
		t.Fatalf("%d operations (Len %d), want %d", len(got), b.r.Len(), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("operation %d:\n got %#v\nwant %#v", i, got[i], want[i])
		}
		if g, w := got[i].Value.Records, want[i].Value.Records; len(w) > 0 && &g[0] != &w[0] {
			t.Fatalf("operation %d: records not the slice recorded", i)
		}
		if got[i].Value.Ext != want[i].Value.Ext {
			t.Fatalf("operation %d: Ext not the one recorded", i)
		}
		if g, w := b.r.Step(int64(i)), b.ref.step(int64(i)); g != w {
			t.Fatalf("operation %d: step %d, want %d", i, g, w)
		}
	}
	for _, i := range []int64{-1, int64(len(want)), int64(len(want)) + 1} {
		if g, w := b.r.Step(i), b.ref.step(i); g != w {
			t.Fatalf("step of %d: %d, want %d", i, g, w)
		}
	}
	n := 0
	b.r.Each(func(op *Op) {
		if !reflect.DeepEqual(*op, want[n]) {
			t.Fatalf("Each, operation %d:\n got %#v\nwant %#v", n, *op, want[n])
		}
		n++
	})
	if n != len(want) {
		t.Fatalf("Each visited %d operations, want %d", n, len(want))
	}
	if g, w := b.r.Open(), b.ref.open(); g != w {
		t.Fatalf("open %d, want %d", g, w)
	}
}

// The compact recorder is lossless: a long random mix of sends (keyed and
// null-keyed, acknowledged, failed, indeterminate), polls with and without
// records, group and transaction operations with an Ext, errors, deaths with
// operations open and restarts, over more processes than a table scans and
// more operations than a block holds, reads back exactly as a recorder of
// plain Op values records it, index, time and trace step included.
func TestRecorderIsLossless(t *testing.T) { testRecorderIsLossless(t, SpillConfig{}) }

func testRecorderIsLossless(t *testing.T, spill SpillConfig) {
	b := newBoth(t)
	if err := b.r.Spill(spill); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	b.r.TraceSteps(func() uint64 { return b.step })
	b.ref.stepOf = b.r.stepOf
	var procs []string
	for i := range 6 {
		procs = append(procs, fmt.Sprintf("p-%d", i))
	}
	for i := range 6 {
		procs = append(procs, fmt.Sprintf("c-%d", i))
	}
	topics := []string{"orders", "payments", "audit"}
	isolations := []string{"read_committed", "read_uncommitted"}
	fs := []string{FCommit, FFetchCommitted, FAssign, FRevoke, FTxnBegin, FTxnCommit, FTxnAbort, FSideEffect}
	type open struct {
		proc string
		v    Value
	}
	var sends []open
	seq := 0
	for range 120_000 {
		b.now += time.Duration(rng.IntN(1000))
		b.step += uint64(rng.IntN(3))
		p := procs[rng.IntN(len(procs))]
		switch k := rng.IntN(100); {
		case k < 35: // a send
			v := NoValue()
			v.Topic = topics[rng.IntN(len(topics))]
			if rng.IntN(3) > 0 {
				v.Key, v.HasKey = fmt.Sprintf("k%d", rng.IntN(50)), true
			} else if rng.IntN(2) == 0 {
				v.Key = "" // a null key
			}
			v.Value = fmt.Sprintf("%s:%d", p, seq)
			seq++
			b.invoke(p, FSend, v)
			sends = append(sends, open{p, v})
		case k < 65 && len(sends) > 0: // a send completes
			j := rng.IntN(len(sends))
			s := sends[j]
			sends = append(sends[:j], sends[j+1:]...)
			v := s.v
			switch rng.IntN(4) {
			case 0:
				v.Error = "NOT_LEADER_OR_FOLLOWER"
				b.complete(s.proc, Fail, FSend, v)
			case 1:
				v.Error = "request timed out"
				b.complete(s.proc, Info, FSend, v)
			default:
				v.Partition, v.Offset = int32(rng.IntN(12)), int64(rng.IntN(1e6))
				b.complete(s.proc, OK, FSend, v)
			}
		case k < 85: // a poll, invoked and completed
			v := NoValue()
			v.Isolation = isolations[rng.IntN(len(isolations))]
			v.Final = rng.IntN(10) == 0
			b.invoke(p, FPoll, v)
			switch rng.IntN(3) {
			case 0: // no records
			case 1:
				v.Records = []Record{}
			default:
				v.Records = make([]Record, rng.IntN(5), 8)
				for j := range v.Records {
					v.Records[j] = Record{Topic: topics[rng.IntN(len(topics))], Partition: int32(rng.IntN(12)),
						Offset: int64(rng.IntN(1e6)), Key: "k", HasKey: rng.IntN(2) == 0, Value: fmt.Sprint(j)}
				}
			}
			v.HasRecords = true
			if v.Final && rng.IntN(2) == 0 {
				v.X().LogStartOffsets = map[string]int64{"orders-0": 3}
			}
			if rng.IntN(20) == 0 {
				v.Error = "coordinator not available"
				b.complete(p, Fail, FPoll, v)
			} else {
				b.complete(p, OK, FPoll, v)
			}
		case k < 95: // a group or transaction operation
			f := fs[rng.IntN(len(fs))]
			v := NoValue()
			x := v.X()
			x.Group, x.Generation, x.MemberID = "billing", int32(rng.IntN(9)), p+"-member"
			x.Offsets = map[string]int64{"orders-1": int64(rng.IntN(100))}
			x.Partitions = []string{"orders-1", "orders-2"}
			x.TransactionalID = "t-" + p
			x.Sends = []Send{{Topic: "orders", Partition: -1, Value: "s", Offset: -1}}
			b.invoke(p, f, v)
			if rng.IntN(4) > 0 {
				b.complete(p, Type(1+rng.IntN(3)), f, v)
			}
		case k < 98:
			b.died(p, "process died: killed")
			kept := sends[:0]
			for _, s := range sends {
				if s.proc != p {
					kept = append(kept, s)
				}
			}
			sends = kept
		default:
			b.restarted(p)
		}
	}
	b.died("never-seen", "process died: machine down")
	// 2<<12: two of the Exts' blocks of 4,096.
	if b.r.Len() <= 2*recorderChunk || b.r.side.Len() <= recorderChunk || b.r.exts.Len() <= 2<<12 {
		t.Fatalf("%d operations, %d side entries, %d Exts: too few to cross blocks", b.r.Len(), b.r.side.Len(), b.r.exts.Len())
	}
	if spill.Budget > 0 && b.r.Spilled() < int64(b.r.Len()/2) {
		t.Fatalf("%d of %d operations spilled", b.r.Spilled(), b.r.Len())
	}
	if spill.Budget > 0 && b.r.disk.carried == nil {
		t.Fatal("the since lists were never compacted: Died paired no carried invocation")
	}
	b.check()
	if err := b.r.Err(); err != nil {
		t.Fatal(err)
	}
}

// Many names (functions, isolations, topics) and types outside the four
// read back exactly too.
func TestRecorderSpillsWhatTheStreamCannotHold(t *testing.T) {
	b := newBoth(t)
	for i := range 70_000 {
		v := NoValue()
		v.Topic = "topic-" + strconv.Itoa(i)
		v.Isolation = "iso-" + strconv.Itoa(i%40)
		v.Value = strconv.Itoa(i)
		b.invoke("p-0", "f-"+strconv.Itoa(i%45), v)
		if i%1000 == 0 {
			b.complete("p-0", Type(4+i%3), "f-"+strconv.Itoa(i%45), v)
		}
	}
	b.check()
	b.died("p-0", "gone")
	b.check()
}

// An operation and a record pack as small as the recorder's comments say:
// a send's invocation and completion take under 32 bytes each of the
// stream, and their positions 4 more.
func TestCompactSizes(t *testing.T) {
	r := NewRecorder(func() time.Duration { return 299*time.Second + 123_456_789 })
	p := r.Proc("p-3")
	const sends = 10_000
	for i := range sends {
		v := NoValue()
		v.Topic, v.Key, v.HasKey, v.Value = "orders", "k"+strconv.Itoa(i%1000), true, fmt.Sprintf("p-3-%08d", i)
		p.Invoke(FSend, &v)
		v.Partition, v.Offset = int32(i%12), int64(200_000+i)
		p.Complete(OK, FSend, &v)
	}
	used := 0
	for _, u := range r.stream.used {
		used += u
	}
	if perOp := float64(used) / (2 * sends); perOp > 32 {
		t.Errorf("a send's operation takes %.1f bytes of the stream, want at most 32", perOp)
	}
	if s := unsafe.Sizeof(Record{}); s != 64 {
		t.Errorf("Record: %d bytes, want 64", s)
	}
	if s := unsafe.Sizeof(Send{}); s != 64 {
		t.Errorf("Send: %d bytes, want 64", s)
	}
}

// fakeSource is a record batch as a poll sees it: records at offsets
// base, base+2, ... (a thinned batch has gaps).
type fakeSource struct {
	base int64
	recs []Record
}

// at is record i as the source holds it.
func (f *fakeSource) at(i int) (int64, string, bool, string) {
	r := f.recs[i]
	return f.base + 2*int64(i), r.Key, r.HasKey, r.Value
}

func (f *fakeSource) PolledRecords(lo, hi int, yield func(int64, []byte, bool, []byte)) {
	for i := lo; i < hi; i++ {
		off, key, hasKey, value := f.at(i)
		yield(off, []byte(key), hasKey, []byte(value))
	}
}

// spanRecords is the records spans name, as a poll would have recorded
// them one by one.
func spanRecords(spans []RecordSpan) []Record {
	recs := []Record{}
	for _, sp := range spans {
		for j := sp.Lo; j < sp.Hi; j++ {
			off, key, hasKey, value := sp.Src.(*fakeSource).at(int(j))
			recs = append(recs, Record{Topic: sp.Topic, Partition: sp.Partition, Offset: off, Key: key, HasKey: hasKey, Value: value})
		}
	}
	return recs
}

// A poll recorded as spans of its sources reads back, through Ops, Each and
// the JSON Lines, exactly as the same poll recorded with its records.
func TestPollSpansReadBackAsRecords(t *testing.T) {
	src := &fakeSource{base: 40, recs: []Record{{Key: "k1", HasKey: true, Value: "a"}, {Value: "b"}, {Key: "k2", HasKey: true, Value: "c"}, {Value: "d"}}}
	other := &fakeSource{base: 7, recs: []Record{{Key: "x", HasKey: true, Value: "e"}}}
	polls := [][]RecordSpan{
		{{Src: src, Topic: "orders", Partition: 3, Lo: 1, Hi: 4}, {Src: other, Topic: "billing", Partition: 0, Lo: 0, Hi: 1}},
		nil, // an empty poll
		{{Src: src, Topic: "orders", Partition: 3, Lo: 0, Hi: 1}},
	}
	var now time.Duration
	spanned, copied := NewRecorder(func() time.Duration { return now }), NewRecorder(func() time.Duration { return now })
	for i, spans := range polls {
		now += time.Millisecond
		v := NoValue()
		v.Isolation, v.Final = "read_committed", i == 2
		for _, r := range []*Recorder{spanned, copied} {
			r.Invoke("c-0", FPoll, v)
		}
		spanned.CompletePoll("c-0", OK, v, spans)
		v.Records, v.HasRecords = spanRecords(spans), true
		copied.Complete("c-0", OK, FPoll, v)
	}
	want, got := copied.Ops(), spanned.Ops()
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("spanned polls read back as\n%+v\nwant\n%+v", got, want)
	}
	if r := got[1].Value.Records; len(r) != 4 || r[0].Offset != 42 || r[0].Value != "b" || r[0].HasKey || r[3].Topic != "billing" || r[3].Offset != 7 {
		t.Fatalf("first poll's records %+v", r)
	}
	i := 0
	spanned.Each(func(op *Op) {
		if !reflect.DeepEqual(*op, want[i]) {
			t.Fatalf("Each gave op %d as %+v, want %+v", i, *op, want[i])
		}
		i++
	})
	var wantJSON, gotJSON strings.Builder
	if err := Write(&wantJSON, want); err != nil {
		t.Fatal(err)
	}
	if err := Write(&gotJSON, got); err != nil {
		t.Fatal(err)
	}
	if gotJSON.String() != wantJSON.String() {
		t.Fatalf("JSON Lines differ:\n%s\nwant\n%s", gotJSON.String(), wantJSON.String())
	}
}

// A process's handle records exactly what the recorder records given the
// process's name, interleaved with other processes and across a death.
func TestProcHandleRecordsAsTheName(t *testing.T) {
	byName, byHandle := NewRecorder(func() time.Duration { return 5 }), NewRecorder(func() time.Duration { return 5 })
	h := byHandle.Proc("p-1")
	for i := range 200 {
		v := NoValue()
		v.Topic, v.Key, v.HasKey, v.Value = "orders", "k", true, strconv.Itoa(i)
		byName.Invoke("p-1", FSend, v)
		h.Invoke(FSend, &v)
		byName.Invoke("c-0", FPoll, NoValue())
		byHandle.Invoke("c-0", FPoll, NoValue())
		if i%3 == 0 {
			v.Offset, v.Partition = int64(i), 2
			byName.Complete("p-1", OK, FSend, v)
			h.Complete(OK, FSend, &v)
		}
		src := &fakeSource{base: int64(i), recs: []Record{{Value: "x"}}}
		byName.CompletePoll("c-0", OK, NoValue(), []RecordSpan{{Src: src, Topic: "orders", Partition: 1, Lo: 0, Hi: 1}})
		byHandle.Proc("c-0").CompletePoll(OK, NoValue(), []RecordSpan{{Src: src, Topic: "orders", Partition: 1, Lo: 0, Hi: 1}})
		if i == 150 {
			byName.Died("p-1", "killed")
			byHandle.Died("p-1", "killed")
		}
	}
	a, b := byName.Ops(), byHandle.Ops()
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("recorded through the handle: %d operations differing from the %d recorded by name", len(b), len(a))
	}
}

// Keys and values of every length read back exactly: empty ones, long
// ones, ones too long for the stream (kept in the side entry), and ones
// that start a new chunk when the last one has no room; strings read back
// early stay as they were while the stream grows; and a full stream stops
// recording with a clear message rather than losing operations.
func TestRecorderStream(t *testing.T) {
	defer func(n int) { streamMaxChunks = n }(streamMaxChunks)
	streamMaxChunks = 4
	b := newBoth(t)
	rng := rand.New(rand.NewPCG(3, 4))
	text := func() string {
		switch k := rng.IntN(100); {
		case k < 10:
			return ""
		case k < 13: // a sixteenth of a chunk, give or take
			return strings.Repeat(string(rune('a'+rng.IntN(26))), streamChunkBytes/16-2+rng.IntN(3))
		case k < 40:
			return strings.Repeat("x", rng.IntN(streamChunkBytes/35))
		default:
			return fmt.Sprintf("v-%d-%d", rng.IntN(1e6), rng.IntN(1e6))
		}
	}
	type early struct {
		i          int
		key, value string
	}
	var seen []early
	for i := 0; len(b.r.stream.chunks) < streamMaxChunks; i++ {
		if i > 100_000 {
			t.Fatalf("the stream never filled: %d chunks", len(b.r.stream.chunks))
		}
		v := NoValue()
		v.Key, v.HasKey, v.Value = text(), true, text()
		b.invoke("p", FSend, v)
		v.Partition, v.Offset = 1, int64(i)
		b.complete("p", OK, FSend, v)
		if i%50 == 0 {
			ops := b.r.Ops()
			op := ops[len(ops)-1]
			seen = append(seen, early{len(ops) - 1, op.Value.Key, op.Value.Value})
		}
	}
	if b.r.Len() < 200 {
		t.Fatalf("only %d operations filled three chunks", b.r.Len())
	}
	// A value past a quarter of a chunk goes to the side entry.
	v := NoValue()
	v.Value = "too long for the stream " + strings.Repeat("y", streamChunkBytes)
	b.invoke("p", FSend, v)
	b.check()
	ops := b.ref.ops
	for _, e := range seen {
		if e.key != ops[e.i].Value.Key || e.value != ops[e.i].Value.Value {
			t.Fatalf("operation %d read early changed since", e.i)
		}
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "stream is full") {
			t.Fatalf("recording into a full stream: %v, want a panic saying the stream is full", r)
		}
	}()
	for range streamChunkBytes {
		v := NoValue()
		v.Value = strings.Repeat("z", streamChunkBytes/35)
		b.r.Invoke("p", FSend, v)
	}
}

// Polls past a block of spans (and of side entries) read back exactly as
// the same polls recorded with their records, with many topics.
func TestManyPollSpansReadBackAsRecords(t *testing.T) {
	spanned, copied := NewRecorder(func() time.Duration { return 1 }), NewRecorder(func() time.Duration { return 1 })
	rng := rand.New(rand.NewPCG(5, 6))
	src := &fakeSource{base: 10, recs: []Record{{Key: "k1", HasKey: true, Value: "a"}, {Value: "b"}, {Key: "k2", HasKey: true, Value: "c"}}}
	for range recorderChunk + 5000 {
		var spans []RecordSpan
		for range rng.IntN(3) {
			lo := int32(rng.IntN(3))
			spans = append(spans, RecordSpan{Src: src, Topic: "t-" + strconv.Itoa(rng.IntN(70_000)), Partition: int32(rng.IntN(4)), Lo: lo, Hi: lo + 1 + int32(rng.IntN(3-int(lo)))})
		}
		v := NoValue()
		spanned.CompletePoll("c-0", OK, v, spans)
		v.Records, v.HasRecords = spanRecords(spans), true
		copied.Complete("c-0", OK, FPoll, v)
	}
	if spanned.spans.Len() <= recorderChunk {
		t.Fatalf("%d spans: too few to cross a block", spanned.spans.Len())
	}
	if want, got := copied.Ops(), spanned.Ops(); !reflect.DeepEqual(want, got) {
		for i := range want {
			if !reflect.DeepEqual(want[i], got[i]) {
				t.Fatalf("poll %d reads back as\n%+v\nwant\n%+v", i, got[i], want[i])
			}
		}
	}
}

// A detached recorder reads back what it holds, and refuses to record more.
func TestDetachedRecorderReadsButDoesNotRecord(t *testing.T) {
	r := NewRecorder(func() time.Duration { return 5 })
	r.TraceSteps(func() uint64 { return 9 })
	v := NoValue()
	v.Topic, v.Key, v.HasKey, v.Value = "t", "k", true, "v"
	r.Invoke("p", FSend, v)
	r.Detach()
	if ops := r.Ops(); len(ops) != 1 || ops[0].Value.Value != "v" || ops[0].Time != 5 || r.Step(0) != 9 {
		t.Fatalf("after detaching: %+v (step %d)", ops, r.Step(0))
	}
	defer func() {
		if p := recover(); p == nil || !strings.Contains(fmt.Sprint(p), "detached") {
			t.Fatalf("recording into a detached recorder: %v, want a panic saying so", p)
		}
	}()
	r.Invoke("p", FSend, v)
}
