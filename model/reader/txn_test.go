package reader_test

import (
	"slices"
	"testing"
	"time"

	"kafkasim/history"
	"kafkasim/model/proto"
	"kafkasim/model/reader"
	"kafkasim/model/record"
	"kafkasim/sim"
)

// txnLeader is leader with transactions in its log: it answers a
// read_committed fetch up to its last stable offset with the aborted list,
// and ListOffsets "latest" at read_committed with the LSO.
type txnLeader struct {
	leader
	lso       int64
	aborted   []proto.AbortedTransaction
	abortedAt []int64 // each aborted transaction's marker offset
	isolation []proto.IsolationLevel
}

func (l *txnLeader) Deliver(from sim.NodeID, m sim.Message) {
	switch m := m.(type) {
	case *proto.FetchRequest:
		l.isolation = append(l.isolation, m.Isolation)
		resp := &proto.FetchResponse{CorrelationID: m.CorrelationID}
		for _, p := range m.Partitions {
			end := int64(len(l.log))
			fp := proto.FetchPartitionResponse{TopicPartition: p.TopicPartition, HighWatermark: end, LastStableOffset: l.lso, LeaderEpoch: l.epoch}
			if m.Isolation == proto.ReadCommitted {
				end = l.lso
			}
			if p.FetchOffset < end {
				fp.Batches = l.log[p.FetchOffset:end]
				for i, a := range l.aborted {
					if l.abortedAt[i] >= p.FetchOffset && a.FirstOffset < end && m.Isolation == proto.ReadCommitted {
						fp.AbortedTransactions = append(fp.AbortedTransactions, a)
					}
				}
			}
			resp.Partitions = append(resp.Partitions, fp)
		}
		l.env.Send(from, resp)
	case *proto.ListOffsetsRequest:
		resp := &proto.ListOffsetsResponse{CorrelationID: m.CorrelationID}
		for _, p := range m.Partitions {
			off := int64(len(l.log))
			if m.ReadCommitted {
				off = l.lso
			}
			if p.Timestamp == proto.ListEarliest {
				off = 0
			}
			resp.Partitions = append(resp.Partitions, proto.ListOffsetsPartitionResponse{TopicPartition: p.TopicPartition, Offset: off, LeaderEpoch: l.epoch})
		}
		l.env.Send(from, resp)
	default:
		l.leader.Deliver(from, m)
	}
}

// A read_committed reader asks for read_committed fetches, never sees a
// marker or an aborted transaction's record, reads nothing of a
// transaction still open past the LSO, and its final reads end at the LSO;
// a read_uncommitted one sees every data record but no marker.
func TestReaderReadCommittedDropsAbortedTransactions(t *testing.T) {
	data := func(pid int64, epoch int16, seq int32, off int64, v string) *record.Batch {
		p := record.Producer{ID: pid, Epoch: epoch, BaseSequence: seq}
		if pid < 0 {
			p = record.Producer{ID: record.NoProducer}
		}
		return record.New([]record.Record{{Value: v}}, p, pid >= 0, record.CompressionNone).Stamp(off, 0)
	}
	marker := func(pid int64, epoch int16, commit bool, off int64) *record.Batch {
		return record.NewControl(pid, epoch, commit, 0, 0).Stamp(off, 0)
	}
	for _, c := range []struct {
		isolation string
		want      []string
		end       int64
	}{
		{"read_committed", []string{"1=b1", "5=p5"}, 6},
		{"read_uncommitted", []string{"0=a0", "1=b1", "2=a2", "5=p5", "6=a6"}, 7},
	} {
		w := sim.NewWorld(sim.DefaultOptions(1))
		// 0 a0 (producer 1), 1 b1 (producer 2), 2 a2, 3 ABORT 1, 4 COMMIT 2,
		// 5 p5, 6 a6 (producer 1, open: the LSO is 6).
		l := &txnLeader{lso: 6, aborted: []proto.AbortedTransaction{{ProducerID: 1, FirstOffset: 0}}, abortedAt: []int64{3}}
		l.log = []*record.Batch{data(1, 0, 0, 0, "a0"), data(2, 0, 0, 1, "b1"), data(1, 0, 1, 2, "a2"), marker(1, 1, false, 3),
			marker(2, 1, true, 4), data(-1, 0, 0, 5, "p5"), data(1, 1, 0, 6, "a6")}
		bid := w.AddNode(sim.NodeSpec{Name: "broker-1", Role: "broker", New: func() sim.Node { return l }})
		rec := history.NewRecorder(w.Now)
		cfg := reader.DefaultConfig("c-0", []string{"orders"})
		cfg.Brokers, cfg.Recorder, cfg.Isolation = []sim.NodeID{bid}, rec, c.isolation
		rid := w.AddNode(sim.NodeSpec{Name: "c-0", Role: "consumer", New: reader.New(cfg)})
		w.Start()
		w.RunUntil(10 * time.Second)
		r := w.Node(rid).(*reader.Reader)
		if got := polls(rec, false); !slices.Equal(got, c.want) {
			t.Errorf("%s: polled %v, want %v", c.isolation, got, c.want)
		}
		if pos := r.Position("orders", 0); pos != c.end {
			t.Errorf("%s: position %d, want %d", c.isolation, pos, c.end)
		}
		wantIso := proto.ReadUncommitted
		if c.isolation == "read_committed" {
			wantIso = proto.ReadCommitted
		}
		if len(l.isolation) == 0 || slices.ContainsFunc(l.isolation, func(i proto.IsolationLevel) bool { return i != wantIso }) {
			t.Errorf("%s: fetched at isolation levels %v", c.isolation, l.isolation)
		}
		r.StartFinal()
		w.RunUntil(20 * time.Second)
		if !r.FinalDone() {
			t.Fatalf("%s: final reads not done: %s", c.isolation, r.FinalPending())
		}
		if got := polls(rec, true); !slices.Equal(got, c.want) {
			t.Errorf("%s: final reads polled %v, want %v", c.isolation, got, c.want)
		}
		for _, op := range rec.Ops() {
			if op.F == history.FPoll && op.Type == history.Invoke && op.Value.Isolation != c.isolation {
				t.Fatalf("%s: a poll invoked with isolation %q", c.isolation, op.Value.Isolation)
			}
		}
	}
}
