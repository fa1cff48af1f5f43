package reader_test

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"kafkasim/history"
	"kafkasim/model/proto"
	"kafkasim/model/reader"
	"kafkasim/model/record"
	"kafkasim/sim"
)

// leader is broker 1, the leader of orders-0, with a log of one-record
// batches, all of it committed (the high watermark is the log end). It
// answers at once; a fetch that names an older leader epoch than its own is
// fenced, as Kafka's leader fences it.
type leader struct {
	env   sim.Env
	epoch int32
	log   []*record.Batch
	// serveTo, when above 0, starves fetches: they return nothing at or
	// past it (a saturated link, a leader too slow to answer).
	serveTo int64
	// leaderless: the metadata names no leader, and fetches are answered
	// NOT_LEADER_OR_FOLLOWER (the leader is down, none elected yet).
	leaderless bool
	// metadataAsked counts the metadata requests, metadataAt says when
	// each arrived.
	metadataAsked int
	metadataAt    []time.Duration
}

func (l *leader) Start(env sim.Env) { l.env = env }
func (l *leader) Fire(sim.Timer)    {}

// appendRecords appends records with values prefix+offset in the current epoch.
func (l *leader) appendRecords(prefix string, n int) {
	for range n {
		off := int64(len(l.log))
		r := []record.Record{{Value: prefix + strconv.FormatInt(off, 10)}}
		l.log = append(l.log, record.New(r, record.Producer{ID: record.NoProducer}, false, record.CompressionNone).Stamp(off, l.epoch))
	}
}

// epochEnd is where the leader's log ends epoch e (Kafka's
// OffsetsForLeaderEpoch): the largest epoch at most e that it knows, and
// the first offset after it.
func (l *leader) epochEnd(e int32) proto.EpochEndOffset {
	if e >= l.epoch {
		return proto.EpochEndOffset{Epoch: l.epoch, EndOffset: int64(len(l.log))}
	}
	found := int32(-1)
	for _, b := range l.log {
		if b.PartitionLeaderEpoch > e {
			if found < 0 {
				break
			}
			return proto.EpochEndOffset{Epoch: found, EndOffset: b.BaseOffset}
		}
		found = b.PartitionLeaderEpoch
	}
	if found >= 0 {
		// No later epoch has written yet: epoch found ends at the log end.
		return proto.EpochEndOffset{Epoch: found, EndOffset: int64(len(l.log))}
	}
	return proto.EpochEndOffset{Epoch: -1, EndOffset: -1}
}

func (l *leader) Deliver(from sim.NodeID, m sim.Message) {
	tp := proto.TopicPartition{Topic: "orders", Partition: 0}
	switch m := m.(type) {
	case *proto.MetadataRequest:
		l.metadataAsked++
		l.metadataAt = append(l.metadataAt, l.env.WorldTime())
		ldr := int32(1)
		if l.leaderless {
			ldr = -1
		}
		l.env.Send(from, &proto.MetadataResponse{CorrelationID: m.CorrelationID,
			Brokers: []proto.MetadataBroker{{ID: 1, Node: l.env.ID()}},
			Topics: []proto.MetadataTopic{{Name: "orders", Partitions: []proto.MetadataPartition{
				{Partition: 0, Leader: ldr, LeaderEpoch: l.epoch, Replicas: []int32{1}, ISR: []int32{1}}}}}})
	case *proto.ListOffsetsRequest:
		resp := &proto.ListOffsetsResponse{CorrelationID: m.CorrelationID}
		for _, p := range m.Partitions {
			off := int64(len(l.log))
			if p.Timestamp == proto.ListEarliest {
				off = 0
			}
			resp.Partitions = append(resp.Partitions, proto.ListOffsetsPartitionResponse{TopicPartition: p.TopicPartition, Offset: off, LeaderEpoch: l.epoch})
		}
		l.env.Send(from, resp)
	case *proto.OffsetsForLeaderEpochRequest:
		resp := &proto.OffsetsForLeaderEpochResponse{CorrelationID: m.CorrelationID}
		for _, p := range m.Partitions {
			end := l.epochEnd(p.LeaderEpoch)
			resp.Partitions = append(resp.Partitions, proto.OffsetsForLeaderEpochPartitionResponse{TopicPartition: p.TopicPartition, LeaderEpoch: end.Epoch, EndOffset: end.EndOffset})
		}
		l.env.Send(from, resp)
	case *proto.FetchRequest:
		resp := &proto.FetchResponse{CorrelationID: m.CorrelationID}
		for _, p := range m.Partitions {
			fp := proto.FetchPartitionResponse{TopicPartition: tp, HighWatermark: int64(len(l.log)), LeaderEpoch: l.epoch}
			switch {
			case l.leaderless:
				fp.Error = proto.NotLeaderOrFollower
			case p.CurrentLeaderEpoch < l.epoch:
				fp.Error = proto.FencedLeaderEpoch
			case p.FetchOffset > int64(len(l.log)):
				fp.Error = proto.OffsetOutOfRange
			case l.serveTo > 0 && p.FetchOffset >= l.serveTo:
			default:
				end := int64(len(l.log))
				if l.serveTo > 0 {
					end = min(end, l.serveTo)
				}
				fp.Batches = l.log[p.FetchOffset:end]
			}
			resp.Partitions = append(resp.Partitions, fp)
		}
		l.env.Send(from, resp)
	}
}

// polls are the records of the reader's completed polls, "offset=value",
// final ones or the others.
func polls(rec *history.Recorder, final bool) []string {
	var out []string
	for _, op := range rec.Ops() {
		if op.F == history.FPoll && op.Type == history.OK && op.Value.Final == final {
			for _, r := range op.Value.Records {
				out = append(out, strconv.FormatInt(r.Offset, 10)+"="+r.Value)
			}
		}
	}
	return out
}

// A reader read orders-0 to offset 10 when a new leader epoch truncated the
// log to 6 and wrote on: fenced, it learns the new epoch, validates its
// position (KIP-320), seeks back to 6, where epoch 0 ends, and reads the
// new records. Its final reads then read the whole log, to its end.
func TestReaderSeeksBackAfterATruncationAndReadsToTheEnd(t *testing.T) {
	w, l, rec, r := readerAtTen(t)

	l.epoch, l.log = 1, l.log[:6]
	l.appendRecords("b", 3)
	w.RunUntil(20 * time.Second)
	if pos := r.Position("orders", 0); pos != 9 || r.Stats.Validations != 1 || r.Stats.Truncations != 1 {
		t.Fatalf("position %d, %d validations, %d truncations; want 9, 1, 1", pos, r.Stats.Validations, r.Stats.Truncations)
	}
	want := []string{"0=a0", "1=a1", "2=a2", "3=a3", "4=a4", "5=a5", "6=a6", "7=a7", "8=a8", "9=a9", "6=b6", "7=b7", "8=b8"}
	if got := polls(rec, false); !slices.Equal(got, want) {
		t.Fatalf("polled %v, want %v", got, want)
	}

	r.StartFinal()
	if r.FinalDone() {
		t.Fatal("final reads done before they read anything")
	}
	w.RunUntil(30 * time.Second)
	if !r.FinalDone() {
		t.Fatalf("final reads not done: %s", r.FinalPending())
	}
	want = []string{"0=a0", "1=a1", "2=a2", "3=a3", "4=a4", "5=a5", "6=b6", "7=b7", "8=b8"}
	if got := polls(rec, true); !slices.Equal(got, want) {
		t.Fatalf("final reads polled %v, want %v", got, want)
	}
}

// A reader whose partition has no leader keeps asking for metadata while
// its poll waits (Kafka's fetcher requests a metadata update for a position
// without a leader, and the network client sends it once the backoff
// passes), so that it finds the leader elected meanwhile and validates its
// position against it (KIP-320) within the poll, not after the poll's wait
// (fuzz --groups seed 27057). The backoff grows while the answers change
// nothing, as Kafka's Metadata.timeToAllowUpdate has it since KIP-580:
// retry.backoff.ms doubled per equivalent answer, ±20%, up to
// retry.backoff.max.ms; an answer with a higher leader epoch starts it again.
func TestReaderLeaderlessAsksForMetadataDuringAPoll(t *testing.T) {
	w, l, rec, r := readerAtTen(t)
	cfg := reader.DefaultConfig("c-0", nil)
	from := len(l.metadataAt)
	l.leaderless = true
	w.RunUntil(15 * time.Second)
	gaps := metadataGaps(l.metadataAt[from:])
	if len(gaps) < 6 {
		t.Fatalf("metadata asked at %v in 5 s without a leader: want several", l.metadataAt[from:])
	}
	// The answers name the same epoch, so each wait is about twice the last,
	// from retry.backoff.ms (100 ms ±20%) to retry.backoff.max.ms (1 s).
	const slack = 20 * time.Millisecond // the round trip on top of the wait
	lo, hi := cfg.RetryBackoff*8/10, cfg.RetryBackoff*12/10+slack
	for i, g := range gaps {
		if g < lo || g > hi {
			t.Fatalf("wait %d between metadata requests %v, want %v..%v (all: %v)", i, g, lo, hi, gaps)
		}
		lo, hi = min(lo*2, cfg.RetryBackoffMax*8/10), min(hi*2-slack, cfg.RetryBackoffMax)+slack
	}
	if last := gaps[len(gaps)-1]; last < cfg.RetryBackoffMax*8/10 {
		t.Fatalf("after 5 s without a leader the reader waits %v between metadata requests, want retry.backoff.max.ms (%v, -20%%)", last, cfg.RetryBackoffMax)
	}

	// A new leader, in a new epoch, truncated the log to 6 and wrote on: the
	// reader learns of it within one retry.backoff.max.ms.
	l.leaderless, l.epoch, l.log = false, 1, l.log[:6]
	l.appendRecords("b", 3)
	w.RunUntil(15*time.Second + cfg.RetryBackoffMax + 100*time.Millisecond)
	if pos := r.Position("orders", 0); pos != 6 || r.Stats.Truncations != 1 {
		t.Fatalf("a retry.backoff.max.ms after the election: position %d, %d truncations; want 6 (validated against the new leader), 1", pos, r.Stats.Truncations)
	}
	w.RunUntil(20 * time.Second)
	if pos := r.Position("orders", 0); pos != 9 {
		t.Fatalf("position %d, want 9; polled %v", pos, polls(rec, false))
	}

	// The leader is lost again: the waits grow to retry.backoff.max.ms
	// again. Then a leader is elected and lost between two answers, so the
	// next answer names a higher epoch, still without a leader: the backoff
	// starts over from retry.backoff.ms.
	l.leaderless = true
	w.RunUntil(25 * time.Second)
	if gaps = metadataGaps(l.metadataAt); gaps[len(gaps)-1] < cfg.RetryBackoffMax*8/10 {
		t.Fatalf("5 s without a leader again: waits %v, want the last at least retry.backoff.max.ms (%v, -20%%)", gaps, cfg.RetryBackoffMax)
	}
	from = len(l.metadataAt)
	l.epoch = 2
	w.RunUntil(27 * time.Second)
	gaps = metadataGaps(l.metadataAt[from:])
	if len(gaps) < 3 || gaps[1] > cfg.RetryBackoff*12/10+slack {
		t.Fatalf("waits %v between metadata requests after an epoch change, want the first after the new epoch's answer at most retry.backoff.ms (%v, +20%%)", gaps, cfg.RetryBackoff)
	}
}

// metadataGaps are the times between successive requests.
func metadataGaps(at []time.Duration) []time.Duration {
	var gaps []time.Duration
	for i := 1; i < len(at); i++ {
		gaps = append(gaps, at[i]-at[i-1])
	}
	return gaps
}

// A reader whose position the log was truncated under sits where KIP-320's
// validation sought it back to, with nothing consumed since, until a
// record arrives: TruncatedUnconsumed says so, and only then.
func TestReaderTruncatedUnconsumedUntilARecordArrives(t *testing.T) {
	w := sim.NewWorld(sim.DefaultOptions(1))
	l := &leader{}
	l.appendRecords("a", 10)
	bid := w.AddNode(sim.NodeSpec{Name: "broker-1", Role: "broker", New: func() sim.Node { return l }})
	cfg := reader.DefaultConfig("c-0", []string{"orders"})
	cfg.Brokers = []sim.NodeID{bid}
	rid := w.AddNode(sim.NodeSpec{Name: "c-0", Role: "consumer", New: reader.New(cfg)})
	w.Start()
	w.RunUntil(10 * time.Second)
	r := w.Node(rid).(*reader.Reader)
	if pos := r.Position("orders", 0); pos != 10 || r.TruncatedUnconsumed("orders", 0) {
		t.Fatalf("position %d, truncated-unconsumed %v after reading the log; want 10, false", pos, r.TruncatedUnconsumed("orders", 0))
	}

	l.epoch, l.log = 1, l.log[:6]
	w.RunUntil(20 * time.Second)
	if pos := r.Position("orders", 0); pos != 6 || r.Stats.Truncations != 1 || !r.TruncatedUnconsumed("orders", 0) {
		t.Fatalf("position %d, %d truncations, truncated-unconsumed %v; want 6, 1, true", pos, r.Stats.Truncations, r.TruncatedUnconsumed("orders", 0))
	}
	if r.TruncatedUnconsumed("orders", 1) {
		t.Fatal("a partition the reader is not assigned is truncated-unconsumed")
	}

	l.appendRecords("b", 2)
	w.RunUntil(30 * time.Second)
	if pos := r.Position("orders", 0); pos != 8 || r.TruncatedUnconsumed("orders", 0) {
		t.Fatalf("position %d, truncated-unconsumed %v after reading on; want 8, false", pos, r.TruncatedUnconsumed("orders", 0))
	}
}

// readerAtTen is reader c-0 of a one-broker world whose leader holds ten
// records of orders-0, once it has read them all.
// readerOfTen runs reader c-0 of orders until the given time against l, a
// leader holding ten records a0..a9.
func readerOfTen(l *leader, until time.Duration) (*sim.World, *history.Recorder, *reader.Reader) {
	w := sim.NewWorld(sim.DefaultOptions(1))
	l.appendRecords("a", 10)
	bid := w.AddNode(sim.NodeSpec{Name: "broker-1", Role: "broker", New: func() sim.Node { return l }})
	rec := history.NewRecorder(w.Now)
	cfg := reader.DefaultConfig("c-0", []string{"orders"})
	cfg.Brokers, cfg.Recorder = []sim.NodeID{bid}, rec
	rid := w.AddNode(sim.NodeSpec{Name: "c-0", Role: "consumer", New: reader.New(cfg)})
	w.Start()
	w.RunUntil(until)
	return w, rec, w.Node(rid).(*reader.Reader)
}

func readerAtTen(t *testing.T) (*sim.World, *leader, *history.Recorder, *reader.Reader) {
	t.Helper()
	l := &leader{}
	w, rec, r := readerOfTen(l, 10*time.Second)
	if pos := r.Position("orders", 0); pos != 10 {
		t.Fatalf("position %d after reading the log, want 10; polled %v", pos, polls(rec, false))
	}
	return w, l, rec, r
}
