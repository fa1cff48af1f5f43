// Package brokertest is a fake broker for a coordinator's unit tests: what
// a coordinator sees of its broker through broker.InternalTopics, driven by
// the test instead of a world. The group and transaction coordinators'
// tests embed Topics and add what only their coordinator asks for.
package brokertest

import (
	"slices"
	"testing"
	"time"

	"kafkasim/model/broker"
	"kafkasim/model/metadata"
	"kafkasim/model/proto"
	"kafkasim/model/record"
	"kafkasim/sim"
)

// Coordinator is the coordinator under test, as the broker drives it.
type Coordinator interface {
	broker.Coordinator
	broker.RequestHandler
	broker.TimerHandler
}

// Topics is a broker as the coordinator sees it: one log per partition of
// the coordinator's topic, whose high watermark moves when the test says
// (Commit), the leaders of those partitions, timers that fire when the
// test advances the clock, and the messages sent.
type Topics[C Coordinator] struct {
	T testing.TB
	// C is the coordinator under test (a test may replace it, as a new
	// broker start would): Advance fires its timers, Lead makes it lead,
	// Request hands it requests.
	C C
	// Topic is the coordinator's internal topic (Lead's).
	Topic string
	// Clock is the time Now tells.
	Clock time.Duration
	// NumPartitions is the topic's partition count (0: the topic does not
	// exist yet).
	NumPartitions int
	// Leaders are the nodes that lead the topic's partitions (Leader).
	Leaders map[int32]sim.NodeID
	Logs    map[int32]*Log
	Timers  []Timer
	// NextTimer numbers the timers set, which orders those due at once.
	NextTimer uint64
	Sent      []Sent
	Created   []proto.CreatableTopic
	// AppendErr: the next appends fail at once with it.
	AppendErr proto.ErrorCode
	// CheckAppend, when set, is shown each append's acks and timeout (the
	// coordinator's own settings, which the test checks).
	CheckAppend func(acks int16, timeout time.Duration)
}

// Log is a partition's log: batches stamped at the log end offset in the
// leader epoch, and the appends waiting for the high watermark.
type Log struct {
	Batches []*record.Batch
	Start   int64
	LEO, HW int64
	Epoch   int32
	Dones   []Done
}

// readBatches is how many batches a read returns (the loader's chunks).
const readBatches = 2

// Done is an append waiting for the high watermark to pass Last.
type Done struct {
	Last int64
	Fn   func(broker.AppendResult)
}

// Timer is a timer set, due At.
type Timer struct {
	ID uint64
	At time.Duration
	T  sim.Timer
}

// Sent is a message sent To.
type Sent struct {
	To sim.NodeID
	M  sim.Message
}

// New is a broker with one partition of topic whose log is empty; the
// caller sets C once it has built the coordinator on it.
func New[C Coordinator](t testing.TB, topic string) *Topics[C] {
	return &Topics[C]{T: t, Topic: topic, NumPartitions: 1, Leaders: map[int32]sim.NodeID{}, Logs: map[int32]*Log{}}
}

func (f *Topics[C]) BrokerID() int32                   { return 1 }
func (f *Topics[C]) Send(to sim.NodeID, m sim.Message) { f.Sent = append(f.Sent, Sent{to, m}) }
func (f *Topics[C]) Now() time.Duration                { return f.Clock }
func (f *Topics[C]) Partitions() int                   { return f.NumPartitions }
func (f *Topics[C]) CreateTopic(c proto.CreatableTopic) {
	f.Created = append(f.Created, c)
}

func (f *Topics[C]) Leader(p int32) (int32, sim.NodeID, bool) {
	n, ok := f.Leaders[p]
	return 1, n, ok
}

// After keeps the timer; Cancel cannot tell sim.TimerIDs apart outside
// the world, so a cancelled timer still fires here: the coordinator must
// ignore it (which the real broker's Cancel spares it).
func (f *Topics[C]) After(d time.Duration, t sim.Timer) sim.TimerID {
	f.NextTimer++
	f.Timers = append(f.Timers, Timer{ID: f.NextTimer, At: f.Clock + d, T: t})
	return sim.TimerID{}
}

func (f *Topics[C]) Cancel(sim.TimerID) {}

// Log is partition p's log, empty until written.
func (f *Topics[C]) Log(p int32) *Log {
	if f.Logs[p] == nil {
		f.Logs[p] = &Log{}
	}
	return f.Logs[p]
}

// Append stamps b at the log end; done hears of it at the next Commit or
// FailAppends.
func (f *Topics[C]) Append(tp metadata.TopicPartition, b *record.Batch, acks int16, timeout time.Duration, done func(broker.AppendResult)) broker.AppendResult {
	if f.CheckAppend != nil {
		f.CheckAppend(acks, timeout)
	}
	if f.AppendErr != proto.None {
		return broker.AppendResult{BaseOffset: -1, LastOffset: -1, Error: f.AppendErr}
	}
	l := f.Log(tp.Partition)
	s := b.Stamped(l.LEO, l.Epoch)
	l.Batches = append(l.Batches, s)
	l.LEO = s.NextOffset()
	l.Dones = append(l.Dones, Done{Last: s.LastOffset(), Fn: done})
	return broker.AppendResult{BaseOffset: s.BaseOffset, LastOffset: s.LastOffset()}
}

// Read returns a chunk of the batches from from on, up to the log end
// whatever the isolation (the coordinators' loaders read with
// IsolationLogEnd).
func (f *Topics[C]) Read(tp metadata.TopicPartition, from, to int64, maxBytes int, isolation broker.FetchIsolation) broker.LogRead {
	l := f.Log(tp.Partition)
	r := broker.LogRead{LogStartOffset: l.Start, HighWatermark: l.HW, LogEndOffset: l.LEO, LeaderEpoch: l.Epoch}
	if from < l.Start || from > l.LEO {
		r.Error = proto.OffsetOutOfRange
		return r
	}
	for _, b := range l.Batches {
		if b.NextOffset() > from && len(r.Batches) < readBatches {
			r.Batches = append(r.Batches, b)
		}
	}
	return r
}

// Commit moves partition 0's high watermark to its log end and tells the
// appends waiting.
func (f *Topics[C]) Commit() {
	l := f.Log(0)
	l.HW = l.LEO
	f.answer(l, proto.None)
}

// FailAppends tells partition 0's waiting appends they failed with err.
func (f *Topics[C]) FailAppends(err proto.ErrorCode) {
	f.answer(f.Log(0), err)
}

func (f *Topics[C]) answer(l *Log, err proto.ErrorCode) {
	dones := l.Dones
	l.Dones = nil
	for _, d := range dones {
		d.Fn(broker.AppendResult{LastOffset: d.Last, Error: err})
	}
}

// Advance runs the clock d on, firing the timers due in order.
func (f *Topics[C]) Advance(d time.Duration) {
	end := f.Clock + d
	for {
		i := -1
		for j, t := range f.Timers {
			if t.At <= end && (i < 0 || t.At < f.Timers[i].At || (t.At == f.Timers[i].At && t.ID < f.Timers[i].ID)) {
				i = j
			}
		}
		if i < 0 {
			break
		}
		t := f.Timers[i]
		f.Timers = slices.Delete(f.Timers, i, i+1)
		f.Clock = t.At
		f.C.OnTimer(t.T)
	}
	f.Clock = end
}

// Lead makes the coordinator lead partition 0 in epoch and load it.
func (f *Topics[C]) Lead(epoch int32) {
	f.Log(0).Epoch = epoch
	f.C.OnBecomeLeader(metadata.TopicPartition{Topic: f.Topic, Partition: 0}, epoch)
	f.Advance(0)
}

// Request hands m from node from to the coordinator and returns what was
// sent back to from at once (possibly nothing).
func (f *Topics[C]) Request(from sim.NodeID, m sim.Message) []sim.Message {
	n := len(f.Sent)
	if !f.C.Handles(m) {
		f.T.Fatalf("the coordinator does not handle %T", m)
	}
	f.C.HandleRequest(from, m)
	return f.To(from, n)
}

// To returns the messages sent to node from the n-th on.
func (f *Topics[C]) To(node sim.NodeID, n int) []sim.Message {
	var out []sim.Message
	for _, s := range f.Sent[n:] {
		if s.To == node {
			out = append(out, s.M)
		}
	}
	return out
}
