package history

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"strings"
	"sync"
)

// SpillConfig bounds the memory a recorder keeps its history in: past
// Budget, it writes its oldest completed blocks of operations to a file
// and frees them, and reads them back from there when asked (Each, Op,
// Step, Died...), with the same results. A long run's history (27 M
// operations for an hour of the reference load) then no longer holds
// hundreds of megabytes, nor, through its polls, the record batches of a
// cluster let go.
type SpillConfig struct {
	// Budget is how many bytes of completed operations (an estimate:
	// their stream, positions, steps, side entries, poll spans and the
	// records those reach) the recorder keeps in memory; 0 keeps
	// everything there.
	Budget int64
	// Dir is where the file goes (os.TempDir when empty). It is removed
	// as soon as it is created: nothing is left behind, whatever happens.
	Dir string
	// BlockOps is how many operations at most go to disk at once: a
	// power of two up to 32,768, the default. Tests make it small, to
	// spill short histories. A block also ends once its polls' records
	// reach blockRecordBytes (a final read returns millions in a few
	// thousand polls), so that a block read back stays small.
	BlockOps int
}

// Spill sets the recorder's memory budget; it must be called before the
// first operation is recorded.
func (r *Recorder) Spill(c SpillConfig) error {
	if c.Budget <= 0 {
		return nil
	}
	if r.n > 0 {
		return errors.New("history: a recorder's spill is set before its first operation")
	}
	if c.BlockOps == 0 {
		c.BlockOps = recorderChunk
	}
	if c.BlockOps < 0 || c.BlockOps > recorderChunk || c.BlockOps&(c.BlockOps-1) != 0 {
		return fmt.Errorf("history: spill blocks of %d operations: a power of two up to %d", c.BlockOps, recorderChunk)
	}
	r.disk = diskStore{cfg: c, blockOps: int64(c.BlockOps), first: []int64{0}, sideAt: []int{0}, spanAt: []int{0}}
	return nil
}

// Err is the first error reading or writing the spill file: a history
// read back after one is not the one recorded (a write that failed only
// stopped the spilling; what it would have written stayed in memory).
func (r *Recorder) Err() error {
	if r == nil {
		return nil
	}
	d := &r.disk
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err
}

// Spilled is how many operations, from the first, the recorder keeps on
// disk.
func (r *Recorder) Spilled() int64 { return r.disk.spilled }

// diskStore is a recorder's spilled part: blocks of operations
// [0, spilled), each encoded whole (encodeBlock) at a place of the file.
type diskStore struct {
	cfg SpillConfig
	// blockOps is the most operations a block holds.
	blockOps int64
	// first, sideAt and spanAt are, for each block (the one being
	// recorded last), its first operation and the side and span lists'
	// lengths when it began: a block's operations, side entries and spans
	// are those between its and the next's.
	first          []int64
	sideAt, spanAt []int
	// recordBytes estimates the bytes of the records the polls of the
	// block being recorded point into.
	recordBytes int64
	// streamAt is the stream's size when the last block began, est the
	// estimated bytes of each completed block, held the sum of those not
	// spilled.
	streamAt int64
	est      []int64
	held     int64
	// spilled is the first operation in memory; blocks the spilled ones'
	// places in the file.
	spilled int64
	blocks  []spilledBlock
	file    *os.File
	size    int64
	// posFreed and streamFreed are the position blocks and stream chunks
	// already let go.
	posFreed, streamFreed int
	// sinceAt is how many operations the since lists held when last
	// compacted (compactSince).
	sinceAt int
	// carried are the keys of the invocations the last compaction found
	// open: pairing them again reads nothing back.
	carried map[uint32]openKey
	// openAt is, per process number, how many of its invocations the
	// last compaction found open: the size the next pairing starts at.
	openAt  []int
	scratch []byte
	failed  bool // writing failed: spill no more

	// mu guards err and the cache: a finished history is read by several
	// goroutines at once (the run store's writer, the checker).
	mu    sync.Mutex
	err   error
	cache [2]*segment
}

// spilledBlock is a block on disk: where, and what of it stays in memory.
type spilledBlock struct {
	off int64
	n   int
	// refs are the records recorded one by one (Complete with Records)
	// and the Exts of its side entries: kept by reference, as in memory
	// (no simulated client records either in bulk: polls come as spans).
	refs []sideRefs
}

type sideRefs struct {
	records []Record
	ext     *Ext
}

// A side entry's flags on disk.
const (
	diskRefs    = 1 << 0 // a sideRefs index follows
	diskErr     = 1 << 1
	diskSpill   = 1 << 2 // type, key and value follow
	diskSpanned = 1 << 3 // the poll's records, materialised from its spans
)

// castagnoli checks a block read back: a file damaged under the run must
// not give a history that was never recorded.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// blockRecordBytes ends a block whose polls' records reach it (an
// estimate, recordBytes). Tests lower it.
var blockRecordBytes int64 = 4 << 20

// recordBytes is what a record in a batch is taken to cost.
const recordBytes = 48

// blockFull says whether the block being recorded ends before operation i.
func (d *diskStore) blockFull(i int64) bool {
	return i-d.first[len(d.first)-1] >= d.blockOps || d.recordBytes >= blockRecordBytes
}

// blockBegins ends the block being recorded, a new one beginning at
// operation i (being recorded, not yet stored), and spills the oldest
// blocks while the memory held is past the budget.
func (r *Recorder) blockBegins(i int64) {
	r.endBlock(i)
	r.spillPast(r.disk.cfg.Budget)
}

// spillRest, when the recorder is detached from its run, spills what it
// still holds in memory, if it spilled before (a history past its budget):
// the last operations are a long run's final reads, which return every
// record of every partition, and would keep the whole of the logs'
// batches alive once the cluster is let go.
func (r *Recorder) spillRest() {
	d := &r.disk
	if d.cfg.Budget <= 0 || d.spilled == 0 {
		return
	}
	if r.n > d.first[len(d.first)-1] {
		r.endBlock(r.n)
	}
	r.spillPast(0)
}

// endBlock ends the block being recorded, the next beginning at operation
// i.
func (r *Recorder) endBlock(i int64) {
	d := &r.disk
	b := len(d.first) // the new block
	d.first = append(d.first, i)
	d.sideAt = append(d.sideAt, r.side.Len())
	d.spanAt = append(d.spanAt, r.spans.Len())
	now := r.stream.size()
	est := now - d.streamAt + (i-d.first[b-1])*12 + int64(d.sideAt[b]-d.sideAt[b-1])*64 +
		int64(d.spanAt[b]-d.spanAt[b-1])*32 + d.recordBytes
	d.streamAt, d.recordBytes = now, 0
	d.est = append(d.est, est)
	d.held += est
}

// spillPast spills the oldest complete blocks while the memory held is
// past budget.
func (r *Recorder) spillPast(budget int64) {
	d := &r.disk
	if d.failed || d.held <= budget || (r.stepOf != nil && r.nsteps != r.n) {
		return // nothing to do, or steps that do not line up with the operations
	}
	r.compactSince()
	for d.held > budget && len(d.blocks) < len(d.first)-1 {
		if err := r.spillBlock(len(d.blocks)); err != nil {
			d.fail(err)
			d.failed = true
			return
		}
	}
	r.letGo()
}

// fail keeps the first error.
func (d *diskStore) fail(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err == nil {
		d.err = spillError(err)
	}
}

func spillError(err error) error {
	return fmt.Errorf("history: the file the history spills to: %w", err)
}

// sinceCompactMin is the least growth of the since lists that compactSince
// compacts (tests lower it).
var sinceCompactMin = 1 << 14

// compactSince replaces each process's operations since it last died by
// those of them still open (openOf), when the lists have grown by a block,
// and by as many as they held after the last compaction, since (so that
// the open operations carried from compaction to compaction cost a
// constant share): Died pairs the same ones, and the lists no longer grow
// with the history. Done while the operations are in memory.
func (r *Recorder) compactSince() {
	d := &r.disk
	total := 0
	for k := range r.since {
		total += r.since[k].len()
	}
	if total-d.sinceAt < max(int(d.blockOps), d.sinceAt, sinceCompactMin) {
		return
	}
	total = 0
	carried := make(map[uint32]openKey, d.sinceAt)
	if n := len(r.since) - len(d.openAt); n > 0 {
		d.openAt = append(d.openAt, make([]int, n)...)
	}
	for pid := range r.since {
		open, keys := r.openKeysOf(uint32(pid))
		d.openAt[pid] = len(open)
		var l opList
		for j, i := range open {
			l.add(uint32(i))
			// A copy: the key must not keep a block read back, nor a
			// stream chunk let go, alive.
			carried[uint32(i)] = openKey{f: strings.Clone(keys[j].f), value: strings.Clone(keys[j].value)}
		}
		r.since[pid] = l
		total += len(open)
	}
	d.sinceAt, d.carried = total, carried
}

// spillBlock writes block b to the file: the operations leave memory at
// letGo.
func (r *Recorder) spillBlock(b int) error {
	d := &r.disk
	if d.file == nil {
		f, err := os.CreateTemp(d.cfg.Dir, "kafkasim-history-*")
		if err != nil {
			return err
		}
		// Unlinked at once: the file lives while the recorder holds it
		// open (the *os.File's finalizer closes it), and is never left
		// behind.
		if err := os.Remove(f.Name()); err != nil {
			f.Close()
			return err
		}
		d.file = f
	}
	var refs []sideRefs
	enc := r.encodeBlock(b, d.scratch[:0], &refs)
	enc = binary.LittleEndian.AppendUint32(enc, crc32.Checksum(enc, castagnoli))
	d.scratch = enc
	if int64(cap(enc)) > 4*blockRecordBytes {
		d.scratch = nil // an outsized block's: not kept
	}
	if _, err := d.file.WriteAt(enc, d.size); err != nil {
		return err
	}
	d.blocks = append(d.blocks, spilledBlock{off: d.size, n: len(enc), refs: refs})
	d.size += int64(len(enc))
	d.held -= d.est[b]
	d.spilled = d.first[b+1]
	return nil
}

// encodeBlock appends block b's encoding to out: its operations' count,
// each one's length, their stream bytes, their trace steps, and its side
// entries, a poll's records materialised from its spans (so that the
// record batches are no longer needed).
func (r *Recorder) encodeBlock(b int, out []byte, refs *[]sideRefs) []byte {
	d := &r.disk
	first, n := d.first[b], int(d.first[b+1]-d.first[b])
	out = binary.AppendUvarint(out, uint64(n))
	ops := make([][]byte, n)
	for j := range ops {
		i := first + int64(j)
		s := r.stream.at(r.pos[i>>chunkShift][i&chunkMask])
		ops[j] = s[:opLen(s)]
		out = binary.AppendUvarint(out, uint64(len(ops[j])))
	}
	for _, op := range ops {
		out = append(out, op...)
	}
	steps := 0
	if r.nsteps > first {
		steps = int(min(r.nsteps-first, int64(n)))
	}
	out = binary.AppendUvarint(out, uint64(steps))
	prev := uint64(0)
	for j := range steps {
		i := first + int64(j)
		s := r.steps[i>>chunkShift][i&chunkMask]
		out = binary.AppendVarint(out, int64(s-prev))
		prev = s
	}
	lo, hi := d.sideAt[b], d.sideAt[b+1]
	out = binary.AppendUvarint(out, uint64(lo))
	out = binary.AppendUvarint(out, uint64(hi-lo))
	var body []byte
	for k := lo; k < hi; k++ {
		body = r.encodeSide(r.side.At(k), body[:0], refs)
		out = binary.AppendUvarint(out, uint64(len(body)))
		out = append(out, body...)
	}
	return out
}

// encodeSide appends side entry e's encoding to out.
func (r *Recorder) encodeSide(e *rare, out []byte, refs *[]sideRefs) []byte {
	var flags byte
	if e.records != nil || e.ext != nil {
		flags |= diskRefs
	}
	if e.err != "" {
		flags |= diskErr
	}
	if e.spill != nil {
		flags |= diskSpill
	}
	if e.spanN > 0 {
		flags |= diskSpanned
	}
	out = append(out, flags)
	if flags&diskRefs != 0 {
		out = binary.AppendUvarint(out, uint64(len(*refs)))
		*refs = append(*refs, sideRefs{records: e.records, ext: e.ext})
	}
	if flags&diskErr != 0 {
		out = appendString(out, e.err)
	}
	if sp := e.spill; sp != nil {
		out = append(out, byte(sp.typ))
		out = appendString(out, sp.key)
		out = appendString(out, sp.value)
	}
	if flags&diskSpanned == 0 {
		return out
	}
	count := 0
	for j := e.spanFrom; j < e.spanFrom+e.spanN; j++ {
		sp := r.spans.At(int(j))
		count += int(sp.hi - sp.lo)
	}
	out = binary.AppendUvarint(out, uint64(count))
	for j := e.spanFrom; j < e.spanFrom+e.spanN; j++ {
		sp := r.spans.At(int(j))
		sp.src.PolledRecords(int(sp.lo), int(sp.hi), func(off int64, key []byte, hasKey bool, value []byte) {
			out = binary.AppendUvarint(out, uint64(sp.topic))
			out = binary.AppendVarint(out, int64(sp.partition))
			out = binary.AppendVarint(out, off)
			if hasKey {
				out = append(out, 1)
			} else {
				out = append(out, 0)
			}
			out = binary.AppendUvarint(out, uint64(len(key)))
			out = append(out, key...)
			out = binary.AppendUvarint(out, uint64(len(value)))
			out = append(out, value...)
		})
	}
	return out
}

func appendString(out []byte, s string) []byte {
	out = binary.AppendUvarint(out, uint64(len(s)))
	return append(out, s...)
}

// opLen is the length of the operation at s's start in the stream.
func opLen(s []byte) int {
	d := opReader{b: s, k: 1}
	for range 7 { // time, process, function, isolation, topic, partition, offset
		d.uvarint()
	}
	if s[0]&flagSide != 0 {
		d.uvarint()
	}
	if s[0]&flagSpilled != 0 {
		return d.k
	}
	keyLen, valueLen := int(d.uvarint()), int(d.uvarint())
	return d.k + keyLen + valueLen
}

// letGo frees what the operations on disk held in memory: their position
// and step blocks, their stream chunks, side entries and spans.
func (r *Recorder) letGo() {
	d := &r.disk
	if d.spilled == 0 {
		return
	}
	last := d.spilled - 1
	lastChunk := int(r.pos[last>>chunkShift][last&chunkMask] >> streamChunkShift)
	for ; d.streamFreed < lastChunk; d.streamFreed++ {
		r.stream.chunks[d.streamFreed] = nil
	}
	for ; int64(d.posFreed+1)<<chunkShift <= d.spilled; d.posFreed++ {
		r.pos[d.posFreed] = nil
		if d.posFreed < len(r.steps) {
			r.steps[d.posFreed] = nil
		}
	}
	b := len(d.blocks)
	r.side.dropBelow(d.sideAt[b])
	r.spans.dropBelow(d.spanAt[b])
}
