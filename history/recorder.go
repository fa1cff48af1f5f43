package history

import (
	"cmp"
	"math"
	"slices"
	"time"

	"kafkasim/internal/chunked"
)

// recorderChunk is how many operations a recorder stores per block: growing
// a history never copies what is already recorded.
const (
	chunkShift    = 15
	recorderChunk = 1 << chunkShift
	chunkMask     = recorderChunk - 1
)

// maxOps bounds a recorder's history: operation numbers are kept in 32 bits
// (a history that long would hold hundreds of gigabytes).
const maxOps = math.MaxUint32

// Recorder collects a run's history. Clients of the model record through it;
// times come from the world's virtual clock (not a node's drifting one), so a
// history's times are simulated nanoseconds since the start.
//
// A history holds millions of operations, so the recorder encodes each in a
// few bytes of a stream (see stream.go) and builds Op values only when asked
// for them.
type Recorder struct {
	// stream holds the operations; pos[i] is where operation i starts.
	stream opStream
	pos    [][]uint32
	// timeBase is the time of every 64th operation: an operation's time is
	// stored as its distance from its group's, a few bytes.
	timeBase []int64
	n        int64
	clock    func() time.Duration
	// steps, when set, is the trace step at each operation, so that a
	// report can point from an operation into the trace.
	stepOf func() uint64
	steps  [][]uint64
	nsteps int64
	// side holds the rarer, larger parts of operations: a poll's records,
	// an error, a type outside the four, a key and value too long for the
	// stream, and the Ext of an operation with any of those.
	side dropList[rare]
	// exts holds the Ext of an operation that needs nothing else of a
	// side entry: a group member's process operations, one per record it
	// processes, sharing the few Exts of its generations. A pointer here
	// instead of a whole rare entry keeps millions of them cheap to record
	// and to scan.
	exts chunked.List[*Ext]
	// procs, fs, topics and isolations number the strings operations
	// name, so that the stream holds small numbers instead of strings.
	procs, fs, topics, isolations table
	// spans holds polls' record spans, by reference (CompletePoll);
	// spanTopics numbers their topics.
	spans      dropList[spanSlot]
	spanTopics table
	// since lists, per process number, the process's operations since it
	// last died: Died pairs them to find the ones still open. Deaths are
	// rare, so the pairing waits for one, and recording an operation stays
	// an append.
	since []opList
	// sizes counts, as operations are recorded, what Sizes reports: a few
	// additions per operation instead of a pass decoding every header.
	sizes sizeCounts
	// disk, when its budget is set, holds the older operations (spill.go).
	disk diskStore
}

// opList is a list of operation numbers, in blocks so that growing it never
// copies. Blocks are made at their full size and the last one's fill kept
// apart, so that adding a number stores no slice header (no write barrier
// while the collector marks).
type opList struct {
	blocks [][]uint32
	inLast int // numbers in the last block
}

// add appends i, in a new block twice the size of the last (up to 8,192)
// when the last is full.
func (l *opList) add(i uint32) {
	n := len(l.blocks)
	if n == 0 || l.inLast == len(l.blocks[n-1]) {
		size := 64
		if n > 0 {
			size = min(2*len(l.blocks[n-1]), 1<<13)
		}
		l.blocks = append(l.blocks, make([]uint32, size))
		l.inLast = 0
		n++
	}
	l.blocks[n-1][l.inLast] = i
	l.inLast++
}

// len is how many numbers the list holds.
func (l *opList) len() int {
	n := l.inLast
	for _, b := range l.blocks[:max(len(l.blocks)-1, 0)] {
		n += len(b)
	}
	return n
}

// each calls f for the numbers in order.
func (l *opList) each(f func(i uint32)) {
	for k, b := range l.blocks {
		if k == len(l.blocks)-1 {
			b = b[:l.inLast]
		}
		for _, i := range b {
			f(i)
		}
	}
}

// An operation's flags byte (see stream.go for the fields after it).
const (
	flagsType        = 0x3 // the type, when one of the four
	flagHasKey       = 1 << 2
	flagFinal        = 1 << 3
	flagHasRecords   = 1 << 4
	flagEmptyRecords = 1 << 5 // Records is non-nil and empty
	flagSide         = 1 << 6 // a side reference follows the offset (see sideRef)
	flagSpilled      = 1 << 7 // the key and value are in the side entry
)

// An operation's side reference is a side entry's index shifted left by
// one, or an index into exts shifted left by one with sideRefExt set.
const sideRefExt = 1

// timeGroupShift: timeBase holds the time of one operation in 64.
const timeGroupShift = 6

// rare is the side entry of an operation with records, an error, a type
// outside the four, or a key and value too long for the stream (and its
// Ext, if any; an Ext alone goes to exts).
type rare struct {
	records []Record
	// spanFrom and spanN: a poll's records, by reference (CompletePoll),
	// are spans spanFrom .. spanFrom+spanN-1 of the recorder's.
	spanFrom, spanN uint32
	err             string
	ext             *Ext
	spill           *spill
}

// spanSlot is a RecordSpan as the recorder keeps it, its topic numbered.
type spanSlot struct {
	src       RecordSource
	topic     uint32
	partition int32
	lo, hi    int32
}

// spill holds an operation's type when it is not one of the four, and its
// key and value when they are too long for the stream (or with the type).
type spill struct {
	typ        Type
	key, value string
}

// spannedRecords builds the records of a poll recorded by CompletePoll.
func (r *Recorder) spannedRecords(e *rare, scratch *[]Record) []Record {
	from, to := int(e.spanFrom), int(e.spanFrom)+int(e.spanN)
	n := 0
	for j := from; j < to; j++ {
		sp := r.spans.At(j)
		n += int(sp.hi - sp.lo)
	}
	var out []Record
	if scratch != nil && cap(*scratch) >= n {
		out = (*scratch)[:0]
	} else {
		out = make([]Record, 0, n)
		if scratch != nil {
			*scratch = out
		}
	}
	// One sink for every span: a source is an interface, so what is
	// handed to it escapes, and a closure made per span was an allocation
	// per span (a final read's poll holds thousands). Not kept in r:
	// readers of a finished history run at once.
	sink := &polledSink{out: out}
	add := sink.add
	for j := from; j < to; j++ {
		sp := r.spans.At(j)
		sink.topic, sink.partition = r.spanTopics.names[sp.topic], sp.partition
		sp.src.PolledRecords(int(sp.lo), int(sp.hi), add)
	}
	return sink.out
}

// polledSink collects a poll's records from its spans' sources.
type polledSink struct {
	out       []Record
	topic     string
	partition int32
}

func (s *polledSink) add(off int64, key []byte, hasKey bool, value []byte) {
	s.out = append(s.out, Record{Topic: s.topic, Key: text(key, len(key)), Value: text(value, len(value)), Offset: off, Partition: s.partition, HasKey: hasKey})
}

// addSpans keeps spans and returns where the first is.
func (r *Recorder) addSpans(spans []RecordSpan) uint32 {
	if r.spans.Len()+len(spans) > maxOps {
		panic("history: more poll spans than a recorder holds")
	}
	from := uint32(r.spans.Len())
	for _, sp := range spans {
		r.spans.Append(spanSlot{src: sp.Src, topic: r.spanTopics.id(sp.Topic, math.MaxUint32), partition: sp.Partition, lo: sp.Lo, hi: sp.Hi})
		r.disk.recordBytes += int64(sp.Hi-sp.Lo) * recordBytes
	}
	return from
}

// emptyRecords is what an operation recorded with non-nil, empty records
// gets back.
var emptyRecords = []Record{}

// table numbers strings, in the order they are first seen. A lookup tries
// the last string found, then the first few by scanning, then a map: the
// tables are small and lookups mostly hit the first two.
type table struct {
	names []string
	ids   map[string]uint32 // names past the scanned ones
	// last and lastName are the last string found and its number.
	last     uint32
	lastName string
}

// scanned is how many of a table's names a lookup scans before its map.
const scanned = 8

// id returns s's number; when s is new and the table already holds limit
// names, it returns limit and does not add s.
func (t *table) id(s string, limit uint32) uint32 {
	if s == t.lastName && t.names != nil {
		return t.last
	}
	return t.find(s, limit)
}

func (t *table) find(s string, limit uint32) uint32 {
	n := min(len(t.names), scanned)
	for i, name := range t.names[:n] {
		if name == s {
			t.last, t.lastName = uint32(i), s
			return uint32(i)
		}
	}
	return t.slow(s, limit)
}

func (t *table) slow(s string, limit uint32) uint32 {
	if len(t.names) > scanned {
		if id, ok := t.ids[s]; ok {
			t.last, t.lastName = id, s
			return id
		}
	}
	id := uint32(len(t.names))
	if id >= limit {
		return limit
	}
	t.names = append(t.names, s)
	if id >= scanned {
		if t.ids == nil {
			t.ids = map[string]uint32{}
		}
		t.ids[s] = id
	}
	t.last, t.lastName = id, s
	return id
}

// openKey names an open operation of a process: a send by its value
// (values are unique), any other by its function.
type openKey struct {
	f, value string
}

func keyOf(op *Op) openKey {
	k := openKey{f: op.F}
	if op.F == FSend {
		k.value = op.Value.Value
	}
	return k
}

// TraceSteps makes the recorder note, for every operation, the trace step
// (events executed so far) when it was recorded.
func (r *Recorder) TraceSteps(stepOf func() uint64) { r.stepOf = stepOf }

// Detach drops the recorder's links to the run that recorded it (its
// clock, its step counter), so that the history outlives the run without
// keeping it: reading goes on as before; recording more panics. A
// recorder that spilled to disk spills the rest (spillRest).
func (r *Recorder) Detach() {
	r.spillRest()
	r.clock = func() time.Duration { panic("history: recording into a detached recorder") }
	r.stepOf = nil
}

// Step returns the trace step of operation i, or 0 when unknown.
func (r *Recorder) Step(i int64) uint64 {
	if i < 0 || i >= r.nsteps {
		return 0
	}
	if i < r.disk.spilled {
		if s := r.segmentOf(nil, i); s != nil {
			return s.step(i)
		}
		return 0
	}
	return r.steps[i>>chunkShift][i&chunkMask]
}

// NewRecorder records with times from clock.
func NewRecorder(clock func() time.Duration) *Recorder { return &Recorder{clock: clock} }

func (r *Recorder) add(process string, t Type, f string, v *Value, spans []RecordSpan) int64 {
	return r.addAs(r.proc(process), t, f, v, spans)
}

// addAs records an operation of the process numbered pid (see proc).
func (r *Recorder) addAs(pid uint32, t Type, f string, v *Value, spans []RecordSpan) int64 {
	i := r.n
	if i >= maxOps {
		panic("history: more operations than a recorder holds")
	}
	if r.disk.cfg.Budget > 0 && r.disk.blockFull(i) {
		r.blockBegins(i)
	}
	c := int(i >> chunkShift)
	if c == len(r.pos) {
		r.pos = append(r.pos, make([]uint32, recorderChunk))
	}
	if r.stepOf != nil {
		j := r.nsteps
		if int(j>>chunkShift) == len(r.steps) {
			r.steps = append(r.steps, make([]uint64, recorderChunk))
		}
		r.steps[j>>chunkShift][j&chunkMask] = r.stepOf()
		r.nsteps++
	}
	r.since[pid].add(uint32(i))
	now := int64(r.clock())
	if i&(1<<timeGroupShift-1) == 0 {
		r.timeBase = append(r.timeBase, now)
	}

	flags := byte(t) & flagsType
	if v.HasKey {
		flags |= flagHasKey
	}
	if v.Final {
		flags |= flagFinal
	}
	if v.HasRecords {
		flags |= flagHasRecords
	}
	if v.Records != nil && len(v.Records) == 0 {
		flags |= flagEmptyRecords
	}
	var h opHead
	h.n = 1
	h.varint(now - r.timeBase[i>>timeGroupShift])
	h.uvarint(uint64(pid))
	h.uvarint(uint64(r.fs.id(f, math.MaxUint32)))
	h.uvarint(uint64(r.isolations.id(v.Isolation, math.MaxUint32)))
	topic := r.topics.id(v.Topic, math.MaxUint32)
	h.uvarint(uint64(topic))
	h.varint(int64(v.Partition))
	h.varint(v.Offset)
	// Texts that would crowd a chunk go to the side entry.
	spilled := t > flagsType || len(v.Key)+len(v.Value) > streamChunkBytes/4
	if len(v.Records) > 0 || len(spans) > 0 || v.Error != "" || spilled {
		flags |= flagSide
		h.uvarint(uint64(r.addRare(v, spans, spilled, t)) << 1)
	} else if v.Ext != nil {
		flags |= flagSide
		h.uvarint(r.addExt(v.Ext)<<1 | sideRefExt)
	}
	key, value := v.Key, v.Value
	if spilled {
		flags |= flagSpilled
		key, value = "", ""
	} else {
		h.uvarint(uint64(len(key)))
		h.uvarint(uint64(len(value)))
	}
	h.b[0] = flags
	r.countSizes(t, f, topic, v)
	pos, ok := r.stream.put(h.b[:h.n], key, value)
	if !ok {
		panic("history: more operations than a recorder holds (its stream is full)")
	}
	r.pos[c][i&chunkMask] = pos
	r.n++
	return i
}

// proc returns a process's number.
func (r *Recorder) proc(process string) uint32 {
	pid := r.procs.id(process, math.MaxUint32)
	if int(pid) == len(r.since) {
		r.since = append(r.since, opList{})
	}
	return pid
}

// addRare stores an operation's side entry and returns its index.
func (r *Recorder) addRare(v *Value, spans []RecordSpan, spilled bool, t Type) uint32 {
	e := rare{err: v.Error, ext: v.Ext}
	if len(v.Records) > 0 {
		e.records = v.Records
	}
	if len(spans) > 0 {
		e.spanFrom, e.spanN = r.addSpans(spans), uint32(len(spans))
	}
	if spilled {
		e.spill = &spill{typ: t, key: v.Key, value: v.Value}
	}
	r.side.Append(e)
	return uint32(r.side.Len() - 1)
}

// extReuse is how many of the last Exts addExt looks through for the one
// it is given before it keeps it again.
const extReuse = 4

// addExt keeps an operation's Ext and returns its index in exts: an Ext
// among the last few kept is shared, not kept again.
func (r *Recorder) addExt(x *Ext) uint64 {
	n := r.exts.Len()
	for i := n - 1; i >= max(n-extReuse, 0); i-- {
		if *r.exts.At(i) == x {
			return uint64(i)
		}
	}
	if n >= maxOps {
		panic("history: more Exts than a recorder holds")
	}
	r.exts.Append(x)
	return uint64(n)
}

// header is an operation's fields up to its side entry, names as numbers
// in the recorder's tables.
type header struct {
	flags                        byte
	at                           int64
	process, f, isolation, topic uint64
	partition                    int32
	offset                       int64
	side                         int // the side entry's index; -1: none
	ext                          int // the index in exts of the Ext, with no side entry; -1: none
}

// header decodes operation i's header, at b's start, into h, and returns
// the reader of the rest (its key and value lengths, when not spilled).
func (r *Recorder) header(b []byte, i int64, h *header) opReader {
	d := opReader{b: b, k: 1}
	h.flags, h.side, h.ext = d.b[0], -1, -1
	h.at = r.timeBase[i>>timeGroupShift] + unzigzag(d.uvarint())
	h.process = d.uvarint()
	h.f = d.uvarint()
	h.isolation = d.uvarint()
	h.topic = d.uvarint()
	h.partition = int32(unzigzag(d.uvarint()))
	h.offset = unzigzag(d.uvarint())
	if h.flags&flagSide != 0 {
		if ref := d.uvarint(); ref&sideRefExt != 0 {
			h.ext = int(ref >> 1)
		} else {
			h.side = int(ref >> 1)
		}
	}
	return d
}

// load builds operation i into op. A poll's records recorded as spans go
// into *scratch when it is set (the caller's to reuse), else into a new
// slice; without spans they are left out (decoding them is most of the
// cost of a poll).
func (r *Recorder) load(i int64, op *Op, scratch *[]Record, spans bool) {
	r.loadVia(nil, i, op, scratch, spans)
}

// loadVia is load reading a spilled operation through cur (nil: the
// shared cache).
func (r *Recorder) loadVia(cur *segCursor, i int64, op *Op, scratch *[]Record, spans bool) {
	var h header
	var d opReader
	var seg *segment
	if i < r.disk.spilled {
		if seg = r.segmentOf(cur, i); seg == nil {
			*op = Op{Index: i} // unreadable: Err says why
			return
		}
		d = r.header(seg.op(i), i, &h)
	} else {
		d = r.header(r.stream.at(r.pos[i>>chunkShift][i&chunkMask]), i, &h)
	}
	flags := h.flags
	*op = Op{
		Index:   i,
		Time:    h.at,
		Process: r.procs.names[h.process],
		Type:    Type(flags & flagsType),
		F:       r.fs.names[h.f],
		Value: Value{
			Topic:      r.topics.names[h.topic],
			Isolation:  r.isolations.names[h.isolation],
			Offset:     h.offset,
			Partition:  h.partition,
			HasKey:     flags&flagHasKey != 0,
			Final:      flags&flagFinal != 0,
			HasRecords: flags&flagHasRecords != 0,
		},
	}
	if flags&flagEmptyRecords != 0 {
		op.Value.Records = emptyRecords
	}
	var e *rare
	if h.side >= 0 && seg == nil {
		e = r.side.At(h.side)
	}
	if flags&flagSpilled == 0 {
		keyLen, valueLen := int(d.uvarint()), int(d.uvarint())
		op.Value.Key = text(d.b[d.k:], keyLen)
		op.Value.Value = text(d.b[d.k+keyLen:], valueLen)
	}
	if h.ext >= 0 {
		op.Value.Ext = *r.exts.At(h.ext)
	}
	if seg != nil && h.side >= 0 {
		r.loadSide(seg, h.side, op, scratch, spans)
		return
	}
	if e == nil {
		return
	}
	if e.records != nil {
		op.Value.Records = e.records
	}
	if e.spanN > 0 && spans {
		op.Value.Records = r.spannedRecords(e, scratch)
	}
	op.Value.Error, op.Value.Ext = e.err, e.ext
	if sp := e.spill; sp != nil {
		op.Type, op.Value.Key, op.Value.Value = sp.typ, sp.key, sp.value
	}
}

// Proc is a client process's handle on the recorder: what it records
// through the handle is the same as through the recorder, without looking
// the process's name up for every operation.
type Proc struct {
	r   *Recorder
	pid uint32
}

// Proc returns process's handle.
func (r *Recorder) Proc(process string) Proc { return Proc{r: r, pid: r.proc(process)} }

// Invoke is Recorder.Invoke for the handle's process. It reads v and
// keeps nothing of the Value itself (a pointer, so that a client's
// millions of operations copy no Value on the way).
func (p Proc) Invoke(f string, v *Value) int64 { return p.r.addAs(p.pid, Invoke, f, v, nil) }

// Complete is Recorder.Complete for the handle's process (v as in Invoke).
func (p Proc) Complete(t Type, f string, v *Value) int64 { return p.r.addAs(p.pid, t, f, v, nil) }

// CompletePoll is Recorder.CompletePoll for the handle's process.
func (p Proc) CompletePoll(t Type, v Value, spans []RecordSpan) int64 {
	v.HasRecords = true
	if len(spans) == 0 {
		v.Records = emptyRecords
	}
	return p.r.addAs(p.pid, t, FPoll, &v, spans)
}

// Invoke records the start of an operation and returns its index.
func (r *Recorder) Invoke(process, f string, v Value) int64 {
	return r.add(process, Invoke, f, &v, nil)
}

// Complete records an operation's end: ok, fail or info.
func (r *Recorder) Complete(process string, t Type, f string, v Value) int64 {
	return r.add(process, t, f, &v, nil)
}

// CompletePoll records a poll's end whose records are spans of sources
// (v.Records must be empty): the recorder keeps the spans, not a copy of
// each record, and builds the records when the operation is read. An
// operation recorded so reads back as if Complete had been given the
// records.
func (r *Recorder) CompletePoll(process string, t Type, v Value, spans []RecordSpan) int64 {
	return r.Proc(process).CompletePoll(t, v, spans)
}

// Died records that a client process died (crashed, was killed, lost power
// or exited), as its world sees it: every operation it had open completes
// info (indeterminate: it may or may not have happened, Jepsen's convention
// for a crashed process) with the error why, in the order they were
// invoked, and a crash operation pair follows. It returns how many
// operations it completed.
func (r *Recorder) Died(process, why string) int {
	pid := r.proc(process)
	open := r.openOf(pid)
	r.since[pid] = opList{} // all its operations are complete below
	var inv Op
	for _, i := range open {
		r.load(i, &inv, nil, false) // an invocation: no records
		v := inv.Value
		v.Error = why
		r.add(process, Info, inv.F, &v, nil)
	}
	crash := NoValue()
	crash.Error = why
	r.add(process, Invoke, FCrash, &crash, nil)
	r.add(process, OK, FCrash, &crash, nil)
	return len(open)
}

// openOf pairs a process's operations since it last died and returns the
// invocations without a completion, in the order they were invoked.
func (r *Recorder) openOf(pid uint32) []int64 {
	open, _ := r.openKeysOf(pid)
	return open
}

// openKeysOf is openOf, with the open operations' keys (keys[i] is
// open[i]'s).
func (r *Recorder) openKeysOf(pid uint32) (open []int64, keys []openKey) {
	// A key leaves the map when its last invocation completes: the map
	// holds what is in flight, not every send since the process last died.
	hint := 0
	if int(pid) < len(r.disk.openAt) {
		hint = r.disk.openAt[pid]
	}
	pending := make(map[openKey]pendingOps, hint)
	var op Op
	r.since[pid].each(func(i uint32) {
		// An invocation a compaction left open (compactSince) needs
		// no reading back from disk.
		k, ok := r.disk.carried[i]
		invoke := true
		if !ok {
			r.load(int64(i), &op, nil, false) // keyOf reads no records
			k, invoke = keyOf(&op), op.Type == Invoke
		}
		p, found := pending[k]
		switch {
		case invoke && !found:
			pending[k] = pendingOps{first: int64(i)}
		case invoke:
			p.rest = append(p.rest, int64(i))
			pending[k] = p
		case !found: // a completion without its invocation: nothing to pair
		case len(p.rest) == 0:
			delete(pending, k)
		default:
			pending[k] = pendingOps{first: p.rest[0], rest: p.rest[1:]}
		}
	})
	type openOp struct {
		i int64
		k openKey
	}
	all := make([]openOp, 0, len(pending))
	for k, p := range pending { // kafkasim:orderless: sorted below
		all = append(all, openOp{p.first, k})
		for _, i := range p.rest {
			all = append(all, openOp{i, k})
		}
	}
	slices.SortFunc(all, func(a, b openOp) int { return cmp.Compare(a.i, b.i) })
	open, keys = make([]int64, len(all)), make([]openKey, len(all))
	for j, o := range all {
		open[j], keys[j] = o.i, o.k
	}
	return open, keys
}

// pendingOps are the open invocations of one key, oldest first: nearly
// always one, held without a slice.
type pendingOps struct {
	first int64
	rest  []int64
}

// Restarted records a client process coming back, as an operation pair.
func (r *Recorder) Restarted(process string) {
	v := NoValue()
	r.add(process, Invoke, FRestart, &v, nil)
	v = NoValue()
	r.add(process, OK, FRestart, &v, nil)
}

// Open is how many operations are invoked and not yet completed.
func (r *Recorder) Open() int {
	n := 0
	for pid := range r.since {
		n += len(r.openOf(uint32(pid)))
	}
	return n
}

// Ops returns the whole history as one slice (a copy).
func (r *Recorder) Ops() []Op {
	out := make([]Op, r.n)
	var cur segCursor
	for i := range out {
		r.loadVia(&cur, int64(i), &out[i], nil, true)
	}
	return out
}

// Each calls f for every operation in order. The Op f gets, and the
// records slice it holds, are rebuilt for each call (a poll's records in
// one slice reused from call to call: a long run's polls return millions
// of records): f must not keep the pointer nor the slice (nor write
// through them). Strings it may keep.
func (r *Recorder) Each(f func(op *Op)) {
	var op Op
	var records []Record
	var cur segCursor
	for i, n := int64(0), r.n; i < n; i++ {
		r.loadVia(&cur, i, &op, &records, true)
		f(&op)
	}
}

// Op returns operation i (0 <= i < Len), built anew: the caller may keep
// it.
func (r *Recorder) Op(i int64) Op {
	var op Op
	r.load(i, &op, nil, true)
	return op
}

// OpHead returns operation i without the records a poll read by reference
// (its Records hold only records recorded one by one): for looking through
// many operations by process, function and value.
func (r *Recorder) OpHead(i int64) Op {
	var op Op
	r.load(i, &op, nil, false)
	return op
}

// EachHead is Each without the records polls read by reference (see
// OpHead): for passes that look at operations, not at what polls returned.
func (r *Recorder) EachHead(f func(op *Op)) {
	var op Op
	var cur segCursor
	for i, n := int64(0), r.n; i < n; i++ {
		r.loadVia(&cur, i, &op, nil, false)
		f(&op)
	}
}

// Len is the number of operations recorded.
func (r *Recorder) Len() int { return int(r.n) }
