package group

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"kafkasim/model/broker"
	"kafkasim/model/metadata"
	"kafkasim/model/proto"
	"kafkasim/model/record"
	"kafkasim/sim"
)

// fakeTopics is a broker as the coordinator sees it, driven by the test:
// one log per partition of __consumer_offsets, whose high watermark moves
// when the test says (commit), timers that fire when the test advances the
// clock, and the messages sent.
type fakeTopics struct {
	t          *testing.T
	now        time.Duration
	partitions int
	leaders    map[int32]sim.NodeID
	logs       map[int32]*fakeLog
	timers     []fakeTimer
	nextTimer  uint64
	sent       []sentMsg
	created    []proto.CreatableTopic
	rng        *rand.Rand
	appendErr  proto.ErrorCode // the next appends fail at once with it
	// topicCounts are the metadata's partition counts (the consumer
	// protocol's target assignment reads them).
	topicCounts map[string]int32
	c           *coordinator
	// addedToTxn are the AddPartitionToTxn calls waiting for the test's
	// answer.
	addedToTxn []fakeAddToTxn
	// fencedMarkers refuses the markers of these producers.
	fencedMarkers map[int64]proto.ErrorCode
}

type fakeAddToTxn struct {
	transactionalID string
	producerID      int64
	producerEpoch   int16
	done            func(proto.ErrorCode)
}

func (f *fakeTopics) AddPartitionToTxn(_ metadata.TopicPartition, tid string, pid int64, epoch int16, done func(proto.ErrorCode)) {
	f.addedToTxn = append(f.addedToTxn, fakeAddToTxn{tid, pid, epoch, done})
}

// AppendMarker appends the marker as a batch of the log; the fake log
// checks no producer state (fencedMarkers refuses the producers listed).
func (f *fakeTopics) AppendMarker(tp metadata.TopicPartition, pid int64, epoch int16, coordEpoch int32, committed, noEpochBump bool, timeout time.Duration, done func(broker.AppendResult)) broker.AppendResult {
	if err, ok := f.fencedMarkers[pid]; ok {
		return broker.AppendResult{BaseOffset: -1, LastOffset: -1, Error: err}
	}
	b := record.NewControl(pid, epoch, committed, coordEpoch, f.now.Milliseconds())
	return f.Append(tp, b, proto.AcksLeader, timeout, done)
}

// answerAddToTxn answers the AddPartitionToTxn calls waiting with err.
func (f *fakeTopics) answerAddToTxn(err proto.ErrorCode) {
	calls := f.addedToTxn
	f.addedToTxn = nil
	for _, c := range calls {
		c.done(err)
	}
}

type fakeLog struct {
	batches  []*record.Batch
	start    int64
	leo, hw  int64
	epoch    int32
	dones    []fakeDone
	maxBatch int // batches per read (the loader's chunks)
}

type fakeDone struct {
	last int64
	fn   func(broker.AppendResult)
}

type fakeTimer struct {
	id uint64
	at time.Duration
	t  sim.Timer
}

type sentMsg struct {
	to sim.NodeID
	m  sim.Message
}

func newFake(t *testing.T, cfg Config) *fakeTopics {
	f := &fakeTopics{t: t, partitions: 1, leaders: map[int32]sim.NodeID{0: 11}, logs: map[int32]*fakeLog{}, rng: rand.New(rand.NewPCG(1, 2))}
	cfg.OffsetsTopicNumPartitions = 1
	f.c = newCoordinator(cfg, f)
	return f
}

func (f *fakeTopics) BrokerID() int32                   { return 1 }
func (f *fakeTopics) Send(to sim.NodeID, m sim.Message) { f.sent = append(f.sent, sentMsg{to, m}) }
func (f *fakeTopics) Now() time.Duration                { return f.now }
func (f *fakeTopics) Partitions() int                   { return f.partitions }
func (f *fakeTopics) Rand() *rand.Rand                  { return f.rng }
func (f *fakeTopics) TopicPartitionCount(topic string) (int32, bool) {
	n, ok := f.topicCounts[topic]
	return n, ok
}
func (f *fakeTopics) CreateTopic(c proto.CreatableTopic) {
	f.created = append(f.created, c)
}

func (f *fakeTopics) Leader(p int32) (int32, sim.NodeID, bool) {
	n, ok := f.leaders[p]
	return 1, n, ok
}

// After keeps the timer; Cancel cannot tell sim.TimerIDs apart outside
// the world, so a cancelled timer still fires here: the shard must ignore
// it (which the real broker's Cancel spares it).
func (f *fakeTopics) After(d time.Duration, t sim.Timer) sim.TimerID {
	f.nextTimer++
	f.timers = append(f.timers, fakeTimer{id: f.nextTimer, at: f.now + d, t: t})
	return sim.TimerID{}
}

func (f *fakeTopics) Cancel(sim.TimerID) {}

func (f *fakeTopics) log(p int32) *fakeLog {
	if f.logs[p] == nil {
		f.logs[p] = &fakeLog{maxBatch: 2}
	}
	return f.logs[p]
}

func (f *fakeTopics) Append(tp metadata.TopicPartition, b *record.Batch, acks int16, timeout time.Duration, done func(broker.AppendResult)) broker.AppendResult {
	if acks != proto.AcksLeader || timeout != f.c.cfg.OffsetsCommitTimeout {
		f.t.Errorf("an append with acks=%d timeout %v, want acks=1 and offsets.commit.timeout.ms", acks, timeout)
	}
	if f.appendErr != proto.None {
		return broker.AppendResult{BaseOffset: -1, LastOffset: -1, Error: f.appendErr}
	}
	l := f.log(tp.Partition)
	s := b.Stamped(l.leo, l.epoch)
	l.batches = append(l.batches, s)
	l.leo = s.NextOffset()
	l.dones = append(l.dones, fakeDone{last: s.LastOffset(), fn: done})
	return broker.AppendResult{BaseOffset: s.BaseOffset, LastOffset: s.LastOffset()}
}

func (f *fakeTopics) Read(tp metadata.TopicPartition, from, to int64, maxBytes int, isolation broker.FetchIsolation) broker.LogRead {
	l := f.log(tp.Partition)
	r := broker.LogRead{LogStartOffset: l.start, HighWatermark: l.hw, LogEndOffset: l.leo, LeaderEpoch: l.epoch}
	if from < l.start || from > l.leo {
		r.Error = proto.OffsetOutOfRange
		return r
	}
	for _, b := range l.batches {
		if b.NextOffset() > from && len(r.Batches) < l.maxBatch {
			r.Batches = append(r.Batches, b)
		}
	}
	return r
}

// commit moves partition 0's high watermark to its log end and tells the
// appends waiting.
func (f *fakeTopics) commit() {
	l := f.log(0)
	l.hw = l.leo
	dones := l.dones
	l.dones = nil
	for _, d := range dones {
		d.fn(broker.AppendResult{LastOffset: d.last})
	}
}

// failAppends tells the waiting appends they failed with err.
func (f *fakeTopics) failAppends(err proto.ErrorCode) {
	l := f.log(0)
	dones := l.dones
	l.dones = nil
	for _, d := range dones {
		d.fn(broker.AppendResult{LastOffset: d.last, Error: err})
	}
}

// advance runs the clock d on, firing the timers due in order.
func (f *fakeTopics) advance(d time.Duration) {
	end := f.now + d
	for {
		i := -1
		for j, t := range f.timers {
			if t.at <= end && (i < 0 || t.at < f.timers[i].at || (t.at == f.timers[i].at && t.id < f.timers[i].id)) {
				i = j
			}
		}
		if i < 0 {
			break
		}
		t := f.timers[i]
		f.timers = slices.Delete(f.timers, i, i+1)
		f.now = t.at
		f.c.OnTimer(t.t)
	}
	f.now = end
}

// lead makes the coordinator lead partition 0 in epoch and load it.
func (f *fakeTopics) lead(epoch int32) {
	f.log(0).epoch = epoch
	f.c.OnBecomeLeader(metadata.TopicPartition{Topic: Topic, Partition: 0}, epoch)
	f.advance(0)
}

// request sends m from client node from and returns what was sent back
// at once (possibly nothing).
func (f *fakeTopics) request(from sim.NodeID, m sim.Message) []sim.Message {
	n := len(f.sent)
	if !f.c.Handles(m) {
		f.t.Fatalf("the coordinator does not handle %T", m)
	}
	f.c.HandleRequest(from, m)
	return f.to(from, n)
}

// to returns the messages sent to node from the n-th on.
func (f *fakeTopics) to(node sim.NodeID, n int) []sim.Message {
	var out []sim.Message
	for _, s := range f.sent[n:] {
		if s.to == node {
			out = append(out, s.m)
		}
	}
	return out
}

// answer is the one answer to a request, which must have come.
func answer[T sim.Message](t *testing.T, msgs []sim.Message) T {
	t.Helper()
	if len(msgs) != 1 {
		t.Fatalf("want one answer, got %d: %+v", len(msgs), msgs)
	}
	r, ok := msgs[0].(T)
	if !ok {
		t.Fatalf("want %T, got %T %+v", r, msgs[0], msgs[0])
	}
	return r
}
