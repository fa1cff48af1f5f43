package reader_test

import (
	"strconv"
	"testing"
	"time"

	"kafkasim/checker"
	"kafkasim/history"
	"kafkasim/model/reader"
)

// finalSaid is the highest position and the last end offset of orders-0 the
// final polls recorded (-1: none).
func finalSaid(rec *history.Recorder) (position, end int64) {
	position, end = -1, -1
	for _, op := range rec.Ops() {
		if op.F != history.FPoll || op.Type != history.OK || !op.Value.Final || op.Value.Ext == nil {
			continue
		}
		if p, ok := op.Value.Ext.Positions["orders-0"]; ok {
			position = max(position, p)
		}
		if e, ok := op.Value.Ext.EndOffsets["orders-0"]; ok {
			end = e
		}
	}
	return position, end
}

// finalRun has a reader read orders-0, of ten records, then make its final
// reads; a leader that serves fetches only below serveTo (0: all) starves
// it. It returns the reader and the history with the ten sends acknowledged
// before it, and one more acknowledged at offset 12, beyond the log's end
// (a truncation took it).
func finalRun(t *testing.T, serveTo int64) (*reader.Reader, *history.Recorder, []history.Op) {
	t.Helper()
	w, rec, r := readerOfTen(&leader{serveTo: serveTo}, 5*time.Second)
	r.StartFinal()
	w.RunUntil(20 * time.Second)

	var ops []history.Op
	send := func(value string, offset int64) {
		v := history.NoValue()
		v.Topic, v.Value = "orders", value
		ops = append(ops, history.Op{Index: int64(len(ops)), Process: "p-0", Type: history.Invoke, F: history.FSend, Value: v})
		v.Partition, v.Offset = 0, offset
		ops = append(ops, history.Op{Index: int64(len(ops)), Process: "p-0", Type: history.OK, F: history.FSend, Value: v})
	}
	for off := int64(0); off < 10; off++ {
		send("a"+strconv.FormatInt(off, 10), off)
	}
	send("z", 12)
	for _, op := range rec.Ops() {
		op.Index = int64(len(ops))
		ops = append(ops, op)
	}
	return r, rec, ops
}

var acksAll = checker.Config{
	Producers: []checker.ProducerGuarantees{{Prefix: "p", Acks: "all", Idempotence: true, MaxInFlight: 5, Retries: 100}},
	Topics:    []checker.TopicGuarantees{{Name: "orders", ReplicationFactor: 3, MinInsyncReplicas: 2}},
}

// Final reads that reach the end say so: their polls carry the position
// they read orders-0 to and its end offset, equal; the checker then judges
// the whole partition, and the write acknowledged at 12, above the end, is
// lost.
func TestFinalPollsSayTheyReachedTheEnd(t *testing.T) {
	r, rec, ops := finalRun(t, 0)
	if !r.FinalDone() {
		t.Fatalf("final reads not done: %s", r.FinalPending())
	}
	if p, e := finalSaid(rec); p != 10 || e != 10 {
		t.Fatalf("final polls said position %d, end %d; want 10 and 10", p, e)
	}
	rep := checker.Check(ops, acksAll)
	if rep.Count(checker.LostAckedWrite) != 1 || rep.Count(checker.Unseen) != 0 {
		t.Fatalf("want z lost and nothing unseen, got\n%s", rep.Summary())
	}
}

// A starved final reader stops short of the end: its polls say where
// (position 4 of end 10), and the checker judges nothing at or above it —
// the records it never reached and the write at 12 are unseen, not lost,
// though the final polls name orders-0 (log_start_offsets), which alone
// would have made them lost.
func TestStarvedFinalReadsJudgeOnlyWhatTheyRead(t *testing.T) {
	r, rec, ops := finalRun(t, 4)
	if r.FinalDone() {
		t.Fatal("final reads done though the leader served only the first 4 records")
	}
	if p, e := finalSaid(rec); p != 4 || e != 10 {
		t.Fatalf("final polls said position %d, end %d; want 4 and 10", p, e)
	}
	rep := checker.Check(ops, acksAll)
	if rep.Count(checker.LostAckedWrite) != 0 || rep.Count(checker.Unseen) != 7 || rep.Violations != 0 {
		t.Fatalf("want a4..a9 and z unseen and nothing lost, got\n%s", rep.Summary())
	}
}
