package partlog

import (
	"fmt"
	"testing"
	"time"

	"kafkasim/model/proto"
	"kafkasim/model/record"
)

// appendBatch appends one record at the log end: of producer pid at
// sequence seq, or of no producer when pid is negative.
func (b *logBench) appendBatch(t *testing.T, pid int64, seq int32) *record.Batch {
	t.Helper()
	p := record.Producer{ID: record.NoProducer}
	if pid >= 0 {
		p = record.Producer{ID: pid, BaseSequence: seq}
	}
	r := record.Record{Key: "k", HasKey: true, Value: fmt.Sprintf("v%d", b.log.LEO())}
	bt := record.New([]record.Record{r}, p, false, record.CompressionNone).Stamped(b.log.LEO(), 0)
	if err := b.log.Append([]*record.Batch{bt}, true); err != nil {
		t.Fatal(err)
	}
	return bt
}

// retentionBench: producer 7 writes the first batch, others follow, every
// batch in a segment of its own; retention then deletes every segment but
// the active one, producer 7's batch with them.
func retentionBench(t *testing.T) (*logBench, *record.Batch) {
	cfg := DefaultConfig()
	cfg.SegmentBytes = 1
	cfg.RetentionTime = time.Millisecond
	b := newLogBench(1, cfg, false)
	mine := b.appendBatch(t, 7, 0)
	for range 3 {
		b.appendBatch(t, -1, 0)
	}
	if n := b.log.DeleteOldSegments(b.log.LEO(), 1<<40); n != 3 || b.log.LogStartOffset() != 3 {
		t.Fatalf("retention deleted %d segments, log start %d", n, b.log.LogStartOffset())
	}
	// In memory the producer stays (KIP-360): its retry is a duplicate.
	if dup, err := b.log.Producers().Check(mine); err != proto.None || dup == nil || dup.FirstOffset != 0 {
		t.Fatalf("retry before the restart: %+v %v", dup, err)
	}
	// Nor does retention move where the state was rebuilt from: a producer
	// it lost now would be lost some other way (the audit excuses none).
	if from := b.log.ProducersRebuiltFrom(); from != 0 {
		t.Fatalf("producer state rebuilt from %d after retention, want 0 (the open)", from)
	}
	return b, mine
}

// A clean shutdown's snapshot at the log end remembers a producer whose
// batches retention deleted: the retry after the restart is still a
// duplicate (fuzz seed 4009935: the state rebuilt from the log alone forgot
// it, and the retry was written again).
func TestCleanRestartRemembersAProducerRetentionDeleted(t *testing.T) {
	b, mine := retentionBench(t)
	b.log.Close()
	b.wait(time.Second)
	// The checkpoints a clean shutdown writes are up to date.
	b.ck = Checkpoints{LogStart: 3, RecoveryPoint: 4, Clean: true}
	b.crash(true) // the snapshot was fsynced: even a power loss keeps it
	dup, err := b.log.Producers().Check(mine)
	if err != proto.None || dup == nil || dup.FirstOffset != 0 || dup.LastOffset != 0 {
		t.Fatalf("retry after a clean restart: %+v %v, want the duplicate at 0", dup, err)
	}
}

// Without a clean shutdown the latest snapshot is the one taken when the
// active segment was rolled, at the log start. The recovery of that segment
// loads it if the log-start checkpoint is older than the log start (it is
// written once a minute), and the snapshot it takes at the segment's end
// keeps the producer; if the checkpoint is up to date, that snapshot is
// deleted as at or below the log start (truncateAndReload), producer state is
// rebuilt from the log alone and the producer is forgotten — as in Kafka,
// where the retry is then taken as new.
func TestUncleanRestartForgetsAProducerRetentionDeletedOnlyWithAFreshCheckpoint(t *testing.T) {
	for _, c := range []struct {
		ck       Checkpoints
		remember bool
	}{
		{Checkpoints{}, true},
		{Checkpoints{LogStart: 1, RecoveryPoint: 3}, true},
		{Checkpoints{LogStart: 3}, false},
		{Checkpoints{LogStart: 3, RecoveryPoint: 3}, false},
		{Checkpoints{LogStart: 3, RecoveryPoint: 9}, false},
	} {
		b, mine := retentionBench(t)
		b.wait(time.Second)
		b.ck = c.ck
		b.crash(false)
		dup, err := b.log.Producers().Check(mine)
		if err != proto.None || (dup != nil) != c.remember {
			t.Errorf("%+v: retry after an unclean restart: %+v %v, want remembered %v", c.ck, dup, err, c.remember)
		}
		// Forgotten, the batch lies below where the state was rebuilt from:
		// what the audit requires to excuse the duplicate that follows.
		if from := b.log.ProducersRebuiltFrom(); !c.remember && from <= mine.LastOffset() {
			t.Errorf("%+v: producer state rebuilt from %d, want past the forgotten batch at %d", c.ck, from, mine.LastOffset())
		}
	}
}

// A later segment's snapshot remembers the producer through an unclean
// restart too: it is above the log start.
func TestRollSnapshotAboveTheLogStartRemembersAProducer(t *testing.T) {
	b, mine := retentionBench(t)
	b.appendBatch(t, -1, 0) // rolls: a snapshot at 4 that has producer 7
	b.wait(time.Second)
	b.ck = Checkpoints{LogStart: 3, RecoveryPoint: 5}
	b.crash(true)
	if dup, err := b.log.Producers().Check(mine); err != proto.None || dup == nil || dup.FirstOffset != 0 {
		t.Fatalf("retry after the restart: %+v %v, want the duplicate at 0", dup, err)
	}
}

// A snapshot holds each producer's last batch only: after a clean restart a
// retry of an earlier one is out of order (the producer then resends it
// under a bumped epoch: the audit's forgotten batch).
func TestSnapshotKeepsEachProducersLastBatchOnly(t *testing.T) {
	b := newLogBench(1, DefaultConfig(), false)
	var sent []*record.Batch
	for seq := range int32(3) {
		sent = append(sent, b.appendBatch(t, 7, seq))
	}
	if dup, _ := b.log.Producers().Check(sent[1]); dup == nil {
		t.Fatal("before the restart the second batch is a known duplicate")
	}
	b.log.Close()
	b.wait(time.Second)
	b.ck = Checkpoints{RecoveryPoint: 3, Clean: true}
	b.crash(false)
	e := b.log.Producers().Entry(7)
	if e == nil || len(e.Batches) != 1 || e.Batches[0] != (BatchMeta{FirstSeq: 2, LastSeq: 2, FirstOffset: 2, LastOffset: 2}) {
		t.Fatalf("producer 7 after a clean restart: %+v", e)
	}
	if _, err := b.log.Producers().Check(sent[1]); err != proto.OutOfOrderSequenceNumber {
		t.Fatalf("retry of the second batch: %v, want OUT_OF_ORDER_SEQUENCE_NUMBER", err)
	}
	if dup, err := b.log.Producers().Check(sent[2]); err != proto.None || dup == nil || dup.FirstOffset != 2 {
		t.Fatalf("retry of the last batch: %+v %v", dup, err)
	}
}

// A snapshot that fails its checksum is deleted and the one before it
// loaded, the log after that replayed.
func TestCorruptSnapshotFallsBackToAnEarlierOne(t *testing.T) {
	cfg := DefaultConfig()
	cfg.SegmentBytes = 1
	b := newLogBench(1, cfg, false)
	for seq := range int32(4) {
		b.appendBatch(t, 7, seq) // each roll snapshots the state before it
	}
	b.log.Close() // and one at the end, 4
	b.wait(time.Second)
	disk := b.node.env.Disk()
	name := SnapshotFile(testDir, 4)
	data, err := disk.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-1] ^= 1
	if err := disk.WriteFile(name, data); err != nil {
		t.Fatal(err)
	}
	b.ck = Checkpoints{RecoveryPoint: 4, Clean: true}
	b.crash(false)
	e := b.log.Producers().Entry(7)
	if e == nil || e.Batches[len(e.Batches)-1].LastSeq != 3 {
		t.Fatalf("producer 7 after the restart: %+v, want its last sequence 3", e)
	}
	if d, _ := disk.ReadFile(name); d == nil {
		t.Fatal("no snapshot at the log end after the load")
	} else if _, err := decodeSnapshot(d); err != nil {
		t.Fatalf("the snapshot the load took at the log end: %v", err)
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	p := NewProducerState()
	for _, b := range []*record.Batch{
		record.New([]record.Record{{Value: "a"}, {Value: "b"}}, record.Producer{ID: 3, Epoch: 2, BaseSequence: 1<<31 - 1}, false, record.CompressionNone).Stamped(10, 0),
		record.New([]record.Record{{Value: "c"}}, record.Producer{ID: 1, Epoch: 0, BaseSequence: 5}, false, record.CompressionNone).Stamped(12, 0),
	} {
		p.Update(b)
	}
	got, err := decodeSnapshot(p.encodeSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	for _, pid := range []int64{1, 3} {
		w, g := p.Entry(pid), got.Entry(pid)
		if g == nil || g.Epoch != w.Epoch || len(g.Batches) != 1 || g.Batches[0] != w.Batches[len(w.Batches)-1] {
			t.Fatalf("producer %d: %+v, want %+v", pid, g, w)
		}
	}
}
