package metadata

import (
	"reflect"
	"testing"
	"time"

	"kafkasim/model/raft"
	"kafkasim/sim"
)

type idle struct{}

func (idle) Start(sim.Env)                   {}
func (idle) Deliver(sim.NodeID, sim.Message) {}
func (idle) Fire(sim.Timer)                  {}

// A restarted node replaying its metadata log gets back the batches it
// decoded before (the very same, not decoded again), and only the entries
// its file no longer holds as it held them (here a torn tail, and the entry
// a new leader wrote at that offset since) are decoded anew: each equal to
// what decoding the bytes gives.
func TestReplayAfterARestartDecodesOnlyWhatChanged(t *testing.T) {
	w := sim.NewWorld(sim.DefaultOptions(1))
	w.AddNode(sim.NodeSpec{Name: "b", New: func() sim.Node { return idle{} }})
	w.Start()
	w.RunUntil(0)
	d := w.Disk(0)
	batch := func(id int32) Batch {
		return Batch{{RegisterBroker: &RegisterBroker{BrokerID: id, BrokerEpoch: int64(id)}}}
	}
	l, _ := raft.OpenLog(d, "metadata/log")
	var before []Batch
	for i := range int32(4) {
		if i == 3 {
			d.Fsync("metadata/log", nil)
			w.RunFor(time.Second)
		}
		if err := l.Append(raft.Entry{Offset: int64(i), Epoch: 1, Data: batch(i).Encode(), Memo: &raft.Memo{}}); err != nil {
			t.Fatal(err)
		}
		b, err := DecodeEntry(l.Entry(int64(i)))
		if err != nil {
			t.Fatal(err)
		}
		before = append(before, b)
	}
	if err := w.InjectFault(sim.Fault{Kind: sim.FaultDisk, Disk: sim.DiskTornWrite, Target: "b"}); err != nil {
		t.Fatal(err)
	}
	w.Restart(0)
	l, _ = raft.OpenLog(d, "metadata/log")
	if l.EndOffset() != 3 {
		t.Fatalf("the torn entry should be cut: end %d", l.EndOffset())
	}
	if err := l.Append(raft.Entry{Offset: 3, Epoch: 2, Data: batch(7).Encode()}); err != nil {
		t.Fatal(err)
	}
	w.Crash(0, false)
	w.Restart(0)
	l, _ = raft.OpenLog(d, "metadata/log")
	for i := range int64(4) {
		b, err := DecodeEntry(l.Entry(i))
		if err != nil {
			t.Fatal(err)
		}
		fresh, _ := DecodeBatch(l.Entry(i).Data)
		if !reflect.DeepEqual(b, fresh) {
			t.Fatalf("entry %d replays as %+v, its bytes decode to %+v", i, b, fresh)
		}
		if reused := &b[0] == &before[i][0]; reused != (i < 3) {
			t.Fatalf("entry %d: batch decoded before the restart reused %v, want %v", i, reused, i < 3)
		}
	}
}
