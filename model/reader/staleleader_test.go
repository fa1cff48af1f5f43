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

// handover is orders-0 moving from broker 1 (epoch 0) to broker 2 (epoch
// 1), while broker 2 leads orders-1 throughout (its answers, every 200 ms,
// keep the reader fetching between polls). Both brokers answer metadata
// with what the controller says now; a fetch that names orders-0 waits
// until the test lets its broker answer, so that the test orders a deposed
// leader's late answer against the new leader's.
type handover struct {
	leader, epoch int32
	brokers       [2]*parkingBroker
}

type parkingBroker struct {
	h      *handover
	epoch  int32 // the epoch of orders-0 this broker believes it leads
	env    sim.Env
	log    []*record.Batch // orders-0's
	parked []parkedFetch
	// outOfRange: retention has raised orders-0's log start past every
	// offset fetched; the broker answers OFFSET_OUT_OF_RANGE.
	outOfRange bool
	logStart   int64 // what ListOffsets gives for the earliest offset
}

type parkedFetch struct {
	from sim.NodeID
	req  *proto.FetchRequest
}

func (b *parkingBroker) Start(env sim.Env) { b.env = env }

func (b *parkingBroker) Fire(t sim.Timer) { b.reply(t.(parkedFetch)) }

func (b *parkingBroker) appendRecord(value string) {
	r := []record.Record{{Value: value}}
	off := int64(len(b.log))
	b.log = append(b.log, record.New(r, record.Producer{ID: record.NoProducer}, false, record.CompressionNone).Stamp(off, b.epoch))
}

func (b *parkingBroker) Deliver(from sim.NodeID, m sim.Message) {
	h := b.h
	switch m := m.(type) {
	case *proto.MetadataRequest:
		b.env.Send(from, &proto.MetadataResponse{CorrelationID: m.CorrelationID,
			Brokers: []proto.MetadataBroker{{ID: 1, Node: h.brokers[0].env.ID()}, {ID: 2, Node: h.brokers[1].env.ID()}},
			Topics: []proto.MetadataTopic{{Name: "orders", Partitions: []proto.MetadataPartition{
				{Partition: 0, Leader: h.leader, LeaderEpoch: h.epoch, Replicas: []int32{1, 2}, ISR: []int32{h.leader}},
				{Partition: 1, Leader: 2, LeaderEpoch: 0, Replicas: []int32{2}, ISR: []int32{2}}}}}})
	case *proto.ListOffsetsRequest:
		resp := &proto.ListOffsetsResponse{CorrelationID: m.CorrelationID}
		for _, p := range m.Partitions {
			resp.Partitions = append(resp.Partitions, proto.ListOffsetsPartitionResponse{TopicPartition: p.TopicPartition, Offset: b.logStart, LeaderEpoch: b.epoch})
		}
		b.env.Send(from, resp)
	case *proto.OffsetsForLeaderEpochRequest:
		resp := &proto.OffsetsForLeaderEpochResponse{CorrelationID: m.CorrelationID}
		for _, p := range m.Partitions {
			end := (&leader{epoch: b.epoch, log: b.log}).epochEnd(p.LeaderEpoch)
			resp.Partitions = append(resp.Partitions, proto.OffsetsForLeaderEpochPartitionResponse{TopicPartition: p.TopicPartition, LeaderEpoch: end.Epoch, EndOffset: end.EndOffset})
		}
		b.env.Send(from, resp)
	case *proto.FetchRequest:
		pf := parkedFetch{from, m}
		if slices.ContainsFunc(m.Partitions, func(p proto.FetchPartition) bool { return p.Partition == 0 }) {
			b.parked = append(b.parked, pf)
			return
		}
		b.env.After(200*time.Millisecond, pf)
	}
}

// answer answers every parked fetch as the leader of the epoch the broker
// believes current: a deposed leader that has not heard of its successor
// answers as if nothing happened.
func (b *parkingBroker) answer() {
	for _, pf := range b.parked {
		b.reply(pf)
	}
	b.parked = nil
}

// reply answers a fetch with what orders-0's log holds from its offset
// (orders-1 holds nothing).
func (b *parkingBroker) reply(pf parkedFetch) {
	resp := &proto.FetchResponse{CorrelationID: pf.req.CorrelationID}
	for _, p := range pf.req.Partitions {
		fp := proto.FetchPartitionResponse{TopicPartition: p.TopicPartition, LeaderEpoch: b.epoch}
		if p.Partition == 0 && b.outOfRange {
			fp.Error = proto.OffsetOutOfRange
		} else if p.Partition == 0 {
			fp.HighWatermark = int64(len(b.log))
			if p.FetchOffset < int64(len(b.log)) {
				fp.Batches = b.log[p.FetchOffset:]
			}
		}
		resp.Partitions = append(resp.Partitions, fp)
	}
	b.env.Send(pf.from, resp)
}

type staleReads struct{ got, resets, rewinds []string }

func (s *staleReads) OutOfRangeReset(node sim.NodeID, tp proto.TopicPartition, from, to int64) {
	s.resets = append(s.resets, tp.String()+"@"+itoa(from)+".."+itoa(to))
}

func (s *staleReads) OutOfRangeRewind(node sim.NodeID, tp proto.TopicPartition, from, to int64) {
	s.rewinds = append(s.rewinds, tp.String()+"@"+itoa(from)+".."+itoa(to))
}

func (s *staleReads) StaleLeaderRead(node sim.NodeID, tp proto.TopicPartition, from, to int64) {
	s.got = append(s.got, tp.String()+"@"+itoa(from)+".."+itoa(to))
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// A deposed leader answers, late, a fetch the reader sent it before the
// leader changed: Kafka's consumer takes the answer when the fetch began at
// its position (FetchCollector checks no leader epoch), even once it has
// moved to the new leader, and then discards the new leader's answer from
// the same offset (fuzz seed 216882). The reader tells the god view of that
// read, and only of that one: an answer that came before it learned of the
// new leader is no stale read.
func TestReaderTellsTheGodViewOfADeposedLeadersAnswerItTook(t *testing.T) {
	for _, c := range []struct {
		name string
		// deposedFirst: the deposed leader answers before the reader
		// learns of its successor.
		deposedFirst bool
		polled       []string
		stale        []string
	}{
		{"answered after the reader moved to the new leader", false, []string{"0=x", "1=z"}, []string{"orders-0@0..1"}},
		// The reader validates its position with the new leader, finds
		// the log truncated under it and reads what the new leader holds.
		{"answered before", true, []string{"0=x", "0=y", "1=z"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, h, rec, audit, _ := handoverWorld(t)
			old, next := h.brokers[0], h.brokers[1]
			// broker-1 takes x at offset 0, unreplicated; broker-2 is elected
			// without it and takes y there.
			old.appendRecord("x")
			if c.deposedFirst {
				old.answer()
				w.RunUntil(w.Now() + 100*time.Millisecond)
			}
			h.leader, h.epoch, next.epoch = 2, 1, 1
			next.appendRecord("y")
			w.RunUntil(w.Now() + 1500*time.Millisecond)
			if len(next.parked) == 0 {
				t.Fatal("the reader did not fetch orders-0 from the new leader")
			}
			if !c.deposedFirst {
				old.answer()
				w.RunUntil(w.Now() + 100*time.Millisecond)
			}
			next.appendRecord("z")
			for range 3 {
				next.answer()
				w.RunUntil(w.Now() + 500*time.Millisecond)
			}
			got := polledOrders0(rec)
			if !slices.Equal(got, c.polled) {
				t.Fatalf("polled %v, want %v", got, c.polled)
			}
			if !slices.Equal(audit.got, c.stale) {
				t.Fatalf("stale leader reads %v, want %v", audit.got, c.stale)
			}
		})
	}
}

// A leader paused with the reader's fetch from offset 0 parked in it loses
// leadership; the reader reads 0 and 1 from the new leader. Then the old
// one wakes, its retention past offset 0, and answers the parked fetch
// OFFSET_OUT_OF_RANGE: an answer about offset 0, not about the reader's
// position 2, which Kafka's FetchCollector.handleInitializeErrors discards
// as stale (fetchOffset != position.offset). The reader keeps its position
// and reads on from 2; resetting it would have it read 0 and 1 again (fuzz
// seed 366796: offset 2864 after 6251). The god view hears of no reset
// then; it hears of the one that follows the current leader's own
// OFFSET_OUT_OF_RANGE at the position, and how far it moved it.
func TestReaderDiscardsAStaleOutOfRangeAnswer(t *testing.T) {
	w, h, rec, audit, rid := handoverWorld(t)
	old, next := h.brokers[0], h.brokers[1]
	h.leader, h.epoch, next.epoch = 2, 1, 1
	next.appendRecord("a")
	next.appendRecord("b")
	w.RunUntil(w.Now() + 1500*time.Millisecond)
	if len(next.parked) == 0 {
		t.Fatal("the reader did not fetch orders-0 from the new leader")
	}
	next.answer()
	w.RunUntil(w.Now() + 100*time.Millisecond)
	r := w.Node(rid).(*reader.Reader)
	if pos := r.Position("orders", 0); pos != 2 {
		t.Fatalf("position %d after reading the new leader's log, want 2", pos)
	}
	resets := r.Stats.Resets
	old.outOfRange = true
	old.answer()
	w.RunUntil(w.Now() + 100*time.Millisecond)
	if pos := r.Position("orders", 0); pos != 2 || r.Stats.Resets != resets {
		t.Fatalf("position %d, %d resets after the stale out-of-range answer; want 2, %d", pos, r.Stats.Resets, resets)
	}
	next.appendRecord("c")
	for range 3 {
		next.answer()
		w.RunUntil(w.Now() + 500*time.Millisecond)
	}
	got := polledOrders0(rec)
	if want := []string{"0=a", "1=b", "2=c"}; !slices.Equal(got, want) {
		t.Fatalf("polled %v, want %v", got, want)
	}
	if len(audit.resets) != 0 {
		t.Fatalf("out-of-range resets %v, want none", audit.resets)
	}

	// Now retention at the leader passes the position: its own fetch
	// from 3 is answered OFFSET_OUT_OF_RANGE, auto.offset.reset moves it
	// to the log start 5, and the god view hears of [3, 5).
	for _, v := range []string{"d", "e", "f"} {
		next.appendRecord(v)
	}
	answerOutOfRange(w, next, 5)
	if pos := r.Position("orders", 0); pos != 6 {
		t.Fatalf("position %d after the reset to the log start, want 6", pos)
	}
	if want := []string{"orders-0@3..5"}; !slices.Equal(audit.resets, want) {
		t.Fatalf("out-of-range resets %v, want %v", audit.resets, want)
	}
	if len(audit.rewinds) != 0 {
		t.Fatalf("out-of-range rewinds %v after a reset forward, want none", audit.rewinds)
	}
}

// The leader answers OFFSET_OUT_OF_RANGE at the reader's position, but the
// log start ListOffsets gives next lies below that position: a power loss
// undid the leader's unsynced segment deletions (fuzz seed 2840: offset
// 2747 after 3496), or a replica whose retention had not gone as far leads
// by then. Kafka's consumer seeks to whatever ListOffsets answered
// (SubscriptionState.maybeSeekUnvalidated), so the reader reads those
// offsets again; the god view hears of the rewind, and of no reset past
// records.
func TestReaderTellsTheGodViewOfAResetBelowItsPosition(t *testing.T) {
	w, h, rec, audit, rid := handoverWorld(t)
	b := h.brokers[0]
	for _, v := range []string{"a", "b", "c"} {
		b.appendRecord(v)
	}
	for range 3 {
		b.answer()
		w.RunUntil(w.Now() + 500*time.Millisecond)
	}
	r := w.Node(rid).(*reader.Reader)
	if pos := r.Position("orders", 0); pos != 3 {
		t.Fatalf("position %d after reading the leader's log, want 3", pos)
	}
	answerOutOfRange(w, b, 1)
	got := polledOrders0(rec)
	if want := []string{"0=a", "1=b", "2=c", "1=b", "2=c"}; !slices.Equal(got, want) {
		t.Fatalf("polled %v, want %v", got, want)
	}
	if want := []string{"orders-0@1..3"}; !slices.Equal(audit.rewinds, want) {
		t.Fatalf("out-of-range rewinds %v, want %v", audit.rewinds, want)
	}
	if len(audit.resets) != 0 {
		t.Fatalf("out-of-range resets %v after a reset back, want none", audit.resets)
	}
}

// handoverWorld starts the brokers of a handover, broker-1 leading orders-0,
// and reader c-0 (metadata every second, its fetches audited), and runs
// until c-0 has a fetch parked in broker-1.
func handoverWorld(t *testing.T) (*sim.World, *handover, *history.Recorder, *staleReads, sim.NodeID) {
	t.Helper()
	w := sim.NewWorld(sim.DefaultOptions(1))
	h := &handover{leader: 1, epoch: 0}
	var first sim.NodeID
	for i := range h.brokers {
		b := &parkingBroker{h: h}
		h.brokers[i] = b
		id := w.AddNode(sim.NodeSpec{Name: "broker-" + itoa(int64(i+1)), Role: "broker", New: func() sim.Node { return b }})
		if i == 0 {
			first = id
		}
	}
	rec := history.NewRecorder(w.Now)
	audit := &staleReads{}
	cfg := reader.DefaultConfig("c-0", []string{"orders"})
	cfg.Brokers, cfg.Recorder, cfg.FetchAudit = []sim.NodeID{first}, rec, audit
	cfg.MetadataMaxAge = time.Second
	rid := w.AddNode(sim.NodeSpec{Name: "c-0", Role: "consumer", New: reader.New(cfg)})
	w.Start()
	w.RunUntil(5 * time.Second)
	if len(h.brokers[0].parked) == 0 {
		t.Fatal("the reader sent broker-1 no fetch of orders-0")
	}
	return w, h, rec, audit, rid
}

// polledOrders0 is what the reader's polls returned of orders-0, in order,
// as "offset=value".
func polledOrders0(rec *history.Recorder) []string {
	var got []string
	for _, op := range rec.Ops() {
		if op.F == history.FPoll && op.Type == history.OK {
			for _, r := range op.Value.Records {
				if r.Partition == 0 {
					got = append(got, itoa(r.Offset)+"="+r.Value)
				}
			}
		}
	}
	return got
}

// answerOutOfRange has b answer the reader's parked fetch OFFSET_OUT_OF_RANGE
// with its log starting at logStart, then answer its next three fetches
// (the reset's ListOffsets and the reads from where it put the reader).
func answerOutOfRange(w *sim.World, b *parkingBroker, logStart int64) {
	b.logStart, b.outOfRange = logStart, true
	b.answer()
	w.RunUntil(w.Now() + 100*time.Millisecond)
	b.outOfRange = false
	for range 3 {
		b.answer()
		w.RunUntil(w.Now() + 500*time.Millisecond)
	}
}
