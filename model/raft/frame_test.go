package raft

import (
	"bytes"
	"testing"

	"kafkasim/model/storage"
	"kafkasim/sim"
)

// TestSharedEntryFramesAreItsOwn holds the frame an entry's Memo keeps to
// the entry: two logs appending the same entry write the bytes of its own
// encoding, and a copy with another offset or data, sharing the Memo,
// writes its own frame, not the one kept.
func TestSharedEntryFramesAreItsOwn(t *testing.T) {
	w := sim.NewWorld(sim.DefaultOptions(1))
	w.AddNode(sim.NodeSpec{Name: "a", New: func() sim.Node { return idle{} }})
	w.AddNode(sim.NodeSpec{Name: "b", New: func() sim.Node { return idle{} }})
	w.Start()
	w.RunUntil(0)
	memo := &Memo{}
	e := Entry{Offset: 0, Epoch: 2, Data: []byte("a metadata batch"), Memo: memo}
	want := storage.AppendFrame(nil, encodeEntry(e))
	for i, name := range []string{"a", "b"} {
		l, _ := OpenLog(w.Disk(sim.NodeID(i)), "log")
		if err := l.Append(e); err != nil {
			t.Fatal(err)
		}
		got, err := w.Disk(sim.NodeID(i)).ReadFile("log")
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s's log holds %x, want %x (%v)", name, got, want, err)
		}
	}
	if !bytes.Equal(memo.frame.bytes, want) {
		t.Fatalf("the memo keeps %x, want the entry's frame %x", memo.frame.bytes, want)
	}
	for _, other := range []Entry{
		{Offset: 1, Epoch: 2, Data: e.Data, Memo: memo},
		{Offset: 0, Epoch: 3, Data: e.Data, Memo: memo},
		{Offset: 0, Epoch: 2, Control: true, Data: e.Data, Memo: memo},
		{Offset: 0, Epoch: 2, Data: []byte("another batch!!!"), Memo: memo},
		{Offset: 0, Epoch: 2, Data: e.Data[:4], Memo: memo},
	} {
		if got, want := entryFrame(other), storage.AppendFrame(nil, encodeEntry(other)); !bytes.Equal(got, want) {
			t.Fatalf("entry %+v framed as %x, want %x", other, got, want)
		}
	}
}
