package raft

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"kafkasim/model/storage"
	"kafkasim/sim"
)

// plainDisk hides the disk's memo: OpenLog then decodes every entry, as
// it did before the memo (the reference).
type plainDisk struct{ sim.NodeDisk }

// comparingDisk claims nothing of the file is unchanged, so that every
// entry is taken back only after comparing its bytes.
type comparingDisk struct{ *sim.Disk }

func (comparingDisk) UnchangedBelow(string) int64 { return 0 }

// decoded stands for what a reader makes of an entry's data (a pure
// function of it, as metadata.DecodeEntry's batch is).
func decoded(e Entry) string {
	return fmt.Sprintf("%d:%d:%v:%q", e.Offset, e.Epoch, e.Control, e.Data)
}

// decodeAll plays the reader: every entry's Memo gets its value.
func decodeAll(l *Log) {
	for _, e := range l.entries {
		if e.Memo.Value == nil {
			e.Memo.Value = decoded(e)
		}
	}
}

func oneIdleNode(t *testing.T) (*sim.World, *sim.Disk) {
	t.Helper()
	w := sim.NewWorld(sim.DefaultOptions(1))
	w.AddNode(sim.NodeSpec{Name: "n", New: func() sim.Node { return idle{} }})
	w.Start()
	w.RunUntil(0)
	return w, w.Disk(0)
}

func appendN(t *testing.T, l *Log, epoch int32, data ...string) {
	t.Helper()
	for _, s := range data {
		if err := l.Append(Entry{Offset: l.EndOffset(), Epoch: epoch, Data: []byte(s), Memo: &Memo{}}); err != nil {
			t.Fatal(err)
		}
	}
}

// A restarted node takes back every entry it held, Memo and all: what was
// decoded before the restart is not decoded again, whether the bytes are
// known unchanged (a kill -9, or a power loss after the fsync) or compared.
func TestRestartRecallsTheEntriesItHeld(t *testing.T) {
	for _, compare := range []bool{false, true} {
		w, d := oneIdleNode(t)
		var disk sim.NodeDisk = d
		if compare {
			disk = comparingDisk{d}
		}
		l, _ := OpenLog(disk, "log")
		appendN(t, l, 1, "a", "b", "c")
		appendN(t, l, 2, "d", "")
		decodeAll(l)
		d.Fsync("log", nil)
		w.RunFor(time.Second)
		w.Crash(0, true)
		w.Restart(0)
		got, cut := OpenLog(disk, "log")
		if cut != 0 || got.EndOffset() != 5 || got.recalled != 5 {
			t.Fatalf("compare %v: end %d cut %d recalled %d, want all 5 entries recalled", compare, got.EndOffset(), cut, got.recalled)
		}
		for i := range int64(5) {
			if got.Entry(i).Memo != l.Entry(i).Memo || got.Entry(i).Memo.Value != decoded(got.Entry(i)) {
				t.Fatalf("compare %v: entry %d lost what was made of it: %+v", compare, i, got.Entry(i))
			}
		}
	}
}

// What the file no longer holds as the node held it is decoded anew: a
// torn tail is cut, a corrupted entry ends the log, and an entry at the
// same offset with another epoch or other data gets a fresh Memo.
func TestRestartDecodesAnewWhatChanged(t *testing.T) {
	t.Run("torn tail, then another epoch's entry", func(t *testing.T) {
		w, d := oneIdleNode(t)
		l, _ := OpenLog(d, "log")
		appendN(t, l, 1, "a", "b", "c")
		decodeAll(l)
		d.Fsync("log", nil)
		w.RunFor(time.Second)
		appendN(t, l, 1, "torn-away")
		decodeAll(l)
		if err := w.InjectFault(sim.Fault{Kind: sim.FaultDisk, Disk: sim.DiskTornWrite, Target: "n"}); err != nil {
			t.Fatal(err)
		}
		w.Restart(0)
		got, cut := OpenLog(d, "log")
		if got.EndOffset() != 3 || cut == 0 || got.recalled != 3 {
			t.Fatalf("end %d cut %d recalled %d: want the 3 durable entries recalled and the torn one cut", got.EndOffset(), cut, got.recalled)
		}
		appendN(t, got, 2, "torn-away")
		again, _ := OpenLog(comparingDisk{d}, "log")
		if e := again.Entry(3); e.Epoch != 2 || e.Memo != got.Entry(3).Memo || e.Memo == l.Entry(3).Memo {
			t.Fatalf("offset 3 holds %+v: want the epoch-2 entry appended after recovery", e)
		}
	})
	t.Run("an entry of the same offset from another epoch, or with other data", func(t *testing.T) {
		for _, other := range []Entry{{Offset: 2, Epoch: 2, Data: []byte("c")}, {Offset: 2, Epoch: 1, Data: []byte("C")}, {Offset: 2, Epoch: 1, Control: true, Data: []byte("c")}} {
			_, d := oneIdleNode(t)
			l, _ := OpenLog(d, "log")
			appendN(t, l, 1, "a", "b", "c")
			decodeAll(l)
			// Written where the log does not look: the memo's claim that
			// the bytes are the node's is dropped, so that only comparing
			// can tell.
			var frame []byte
			frame = appendFrame(frame, other)
			if err := d.Write("log", l.starts[2], frame); err != nil {
				t.Fatal(err)
			}
			got, _ := OpenLog(comparingDisk{d}, "log")
			e := got.Entry(2)
			if got.EndOffset() != 3 || got.recalled != 2 || !e.Same(other) || e.Memo == l.Entry(2).Memo || e.Memo == nil || e.Memo.Value != nil {
				t.Fatalf("with %+v written at offset 2: recalled %d, got %+v", other, got.recalled, e)
			}
		}
	})
	t.Run("corrupted entry", func(t *testing.T) {
		w, d := oneIdleNode(t)
		l, _ := OpenLog(d, "log")
		appendN(t, l, 1, "aaaaaaaaaaaa", "bbbbbbbbbbbb", "cccccccccccc", "dddddddddddd")
		decodeAll(l)
		if err := w.InjectFault(sim.Fault{Kind: sim.FaultDisk, Disk: sim.DiskCorrupt, Target: "n", File: "log"}); err != nil {
			t.Fatal(err)
		}
		off := d.Flips()[0].Offset
		hit := 0
		for l.end(hit) <= off {
			hit++
		}
		got, cut := OpenLog(d, "log")
		if got.EndOffset() != int64(hit) || cut == 0 || got.recalled != hit {
			t.Fatalf("bit flipped at %d (entry %d): end %d cut %d recalled %d, want the log to end before the corrupt entry", off, hit, got.EndOffset(), cut, got.recalled)
		}
	})
}

func appendFrame(buf []byte, e Entry) []byte { return storage.AppendFrame(buf, encodeEntry(e)) }

// Whatever befalls the file (appends, truncations, fsyncs, kills, power
// losses, torn writes, bit flips), a log reopened with the disk's memo
// holds exactly the entries the same bytes decode to without it, cuts the
// same bytes, and every Memo it took back holds what its entry decodes to.
func TestRecallAgreesWithDecoding(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		w := sim.NewWorld(sim.DefaultOptions(sim.Seed(rapid.Uint64().Draw(rt, "seed"))))
		w.AddNode(sim.NodeSpec{Name: "n", New: func() sim.Node { return idle{} }})
		w.AddNode(sim.NodeSpec{Name: "ref", New: func() sim.Node { return idle{} }})
		w.Start()
		w.RunUntil(0)
		d, ref := w.Disk(0), w.Disk(1)
		l, _ := OpenLog(d, "log")
		reopen := func() {
			var disk sim.NodeDisk = d
			if rapid.Bool().Draw(rt, "compare") {
				disk = comparingDisk{d}
			}
			ref.Remove("log")
			if data, err := d.ReadFile("log"); err == nil {
				if err := ref.WriteFile("log", data); err != nil {
					rt.Fatal(err)
				}
			}
			want, wantCut := OpenLog(plainDisk{ref}, "log")
			got, cut := OpenLog(disk, "log")
			if cut != wantCut || got.EndOffset() != want.EndOffset() || got.size != want.size {
				rt.Fatalf("reopened: end %d cut %d size %d, decoding gives end %d cut %d size %d",
					got.EndOffset(), cut, got.size, want.EndOffset(), wantCut, want.size)
			}
			for i := range got.EndOffset() {
				e := got.Entry(i)
				if !e.Same(want.Entry(i)) || got.starts[i] != want.starts[i] {
					rt.Fatalf("entry %d: %+v at %d, decoding gives %+v at %d", i, e, got.starts[i], want.Entry(i), want.starts[i])
				}
				if e.Memo == nil || (e.Memo.Value != nil && e.Memo.Value != decoded(e)) {
					rt.Fatalf("entry %d %+v took back a Memo of another entry: %v", i, e, e.Memo)
				}
			}
			l = got
		}
		for range rapid.IntRange(1, 60).Draw(rt, "steps") {
			switch rapid.IntRange(0, 8).Draw(rt, "op") {
			case 0, 1, 2:
				for range rapid.IntRange(1, 3).Draw(rt, "n") {
					e := Entry{Offset: l.EndOffset(), Epoch: l.LastEpoch() + int32(rapid.IntRange(0, 1).Draw(rt, "bump")),
						Control: rapid.IntRange(0, 4).Draw(rt, "control") == 0,
						Data:    []byte(rapid.SampledFrom([]string{"", "a", "b", "ab"}).Draw(rt, "data")), Memo: &Memo{}}
					if err := l.Append(e); err != nil {
						rt.Fatal(err)
					}
				}
			case 3:
				l.TruncateTo(rapid.Int64Range(0, l.EndOffset()).Draw(rt, "to"))
			case 4:
				d.Fsync("log", nil)
				w.RunFor(time.Second)
			case 5:
				decodeAll(l)
			case 6:
				if size, _ := d.Size("log"); size > 0 {
					if err := w.InjectFault(sim.Fault{Kind: sim.FaultDisk, Disk: sim.DiskCorrupt, Target: "n", File: "log"}); err != nil {
						rt.Fatal(err)
					}
				}
			case 7:
				if rapid.Bool().Draw(rt, "torn") {
					if err := w.InjectFault(sim.Fault{Kind: sim.FaultDisk, Disk: sim.DiskTornWrite, Target: "n"}); err != nil {
						rt.Fatal(err)
					}
				} else {
					w.Crash(0, rapid.Bool().Draw(rt, "power loss"))
				}
				w.Restart(0)
				reopen()
			case 8:
				reopen()
			}
		}
		reopen()
	})
}
