package group

import (
	"math/rand/v2"
	"testing"
	"time"

	"kafkasim/model/broker"
	"kafkasim/model/broker/brokertest"
	"kafkasim/model/metadata"
	"kafkasim/model/proto"
	"kafkasim/model/record"
	"kafkasim/sim"
)

// fakeTopics is a broker as the coordinator sees it, driven by the test
// (brokertest.Topics: one log per partition of __consumer_offsets, timers,
// the messages sent), with what only the group coordinator asks of it.
type fakeTopics struct {
	*brokertest.Topics[*coordinator]
	rng *rand.Rand
	// topicCounts are the metadata's partition counts (the consumer
	// protocol's target assignment reads them).
	topicCounts map[string]int32
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
	b := record.NewControl(pid, epoch, committed, coordEpoch, f.Clock.Milliseconds())
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

func newFake(t *testing.T, cfg Config) *fakeTopics {
	f := &fakeTopics{Topics: brokertest.New[*coordinator](t, Topic), rng: rand.New(rand.NewPCG(1, 2))}
	f.Leaders[0] = 11
	cfg.OffsetsTopicNumPartitions = 1
	f.C = newCoordinator(cfg, f)
	f.CheckAppend = func(acks int16, timeout time.Duration) {
		if acks != proto.AcksLeader || timeout != f.C.cfg.OffsetsCommitTimeout {
			t.Errorf("an append with acks=%d timeout %v, want acks=1 and offsets.commit.timeout.ms", acks, timeout)
		}
	}
	return f
}

func (f *fakeTopics) Rand() *rand.Rand { return f.rng }
func (f *fakeTopics) TopicPartitionCount(topic string) (int32, bool) {
	n, ok := f.topicCounts[topic]
	return n, ok
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
