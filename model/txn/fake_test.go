package txn

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

// fakeTopics is a broker as the coordinator sees it, driven by the test:
// one log per partition of __transaction_state whose high watermark moves
// when the test says (commit), the leaders of the data partitions, timers
// that fire when the test advances the clock, and the messages sent.
type fakeTopics struct {
	t          *testing.T
	now        time.Duration
	partitions int
	logs       map[int32]*fakeLog
	leaders    map[proto.TopicPartition]sim.NodeID // absent: no such partition; NoNode: no leader
	timers     []fakeTimer
	nextTimer  uint64
	sent       []sentMsg
	created    []proto.CreatableTopic
	appendErr  proto.ErrorCode
	c          *coordinator
}

type fakeLog struct {
	batches []*record.Batch
	leo, hw int64
	epoch   int32
	dones   []fakeDone
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

const (
	controllerNode sim.NodeID = 100
	client         sim.NodeID = 50
	brokerA        sim.NodeID = 11
	brokerB        sim.NodeID = 12
)

func newFake(t *testing.T) *fakeTopics {
	f := &fakeTopics{t: t, partitions: 1, logs: map[int32]*fakeLog{}, leaders: map[proto.TopicPartition]sim.NodeID{}}
	cfg := DefaultConfig()
	cfg.NumPartitions = 1
	f.c = newCoordinator(cfg, f)
	return f
}

func (f *fakeTopics) BrokerID() int32                   { return 1 }
func (f *fakeTopics) Send(to sim.NodeID, m sim.Message) { f.sent = append(f.sent, sentMsg{to, m}) }
func (f *fakeTopics) Now() time.Duration                { return f.now }
func (f *fakeTopics) Partitions() int                   { return f.partitions }
func (f *fakeTopics) CreateTopic(c proto.CreatableTopic) {
	f.created = append(f.created, c)
}
func (f *fakeTopics) Leader(p int32) (int32, sim.NodeID, bool) { return 1, 10, true }
func (f *fakeTopics) Controller() (sim.NodeID, int64)          { return controllerNode, 5 }

func (f *fakeTopics) PartitionLeader(tp metadata.TopicPartition) (int32, sim.NodeID, bool, bool) {
	n, ok := f.leaders[proto.TopicPartition{Topic: tp.Topic, Partition: tp.Partition}]
	if !ok {
		return -1, sim.NoNode, false, false
	}
	if n == sim.NoNode {
		return -1, sim.NoNode, true, false
	}
	return int32(n), n, true, true
}

// After keeps the timer; Cancel cannot tell sim.TimerIDs apart outside
// the world, so a cancelled timer still fires here: the coordinator must
// ignore it.
func (f *fakeTopics) After(d time.Duration, t sim.Timer) sim.TimerID {
	f.nextTimer++
	f.timers = append(f.timers, fakeTimer{id: f.nextTimer, at: f.now + d, t: t})
	return sim.TimerID{}
}

func (f *fakeTopics) Cancel(sim.TimerID) {}

func (f *fakeTopics) log(p int32) *fakeLog {
	if f.logs[p] == nil {
		f.logs[p] = &fakeLog{}
	}
	return f.logs[p]
}

func (f *fakeTopics) Append(tp metadata.TopicPartition, b *record.Batch, acks int16, timeout time.Duration, done func(broker.AppendResult)) broker.AppendResult {
	if acks != proto.AcksAll || timeout <= 0 {
		f.t.Errorf("an append with acks=%d timeout %v, want acks=all and the transaction timeout", acks, timeout)
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
	r := broker.LogRead{LogStartOffset: 0, HighWatermark: l.hw, LogEndOffset: l.leo, LeaderEpoch: l.epoch}
	for _, b := range l.batches {
		if b.NextOffset() > from && len(r.Batches) < 2 {
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

// fail tells the waiting appends they failed with err.
func (f *fakeTopics) fail(err proto.ErrorCode) {
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

// request hands m from node from to the coordinator and returns what was
// sent back to from at once.
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

// markerRequests returns the WriteTxnMarkers sent from the n-th message on,
// by destination.
func (f *fakeTopics) markerRequests(n int) map[sim.NodeID]*proto.WriteTxnMarkersRequest {
	out := map[sim.NodeID]*proto.WriteTxnMarkersRequest{}
	for _, s := range f.sent[n:] {
		if r, ok := s.m.(*proto.WriteTxnMarkersRequest); ok {
			if out[s.to] != nil {
				f.t.Fatalf("two WriteTxnMarkers to %d in one flush", s.to)
			}
			out[s.to] = r
		}
	}
	return out
}

// grantBlock answers the coordinator's AllocateProducerIds with a block
// starting at start.
func (f *fakeTopics) grantBlock(start int64) {
	f.t.Helper()
	for i := len(f.sent) - 1; i >= 0; i-- {
		if r, ok := f.sent[i].m.(*proto.AllocateProducerIdsRequest); ok {
			if f.sent[i].to != controllerNode || r.BrokerEpoch != 5 {
				f.t.Fatalf("AllocateProducerIds to %d with broker epoch %d", f.sent[i].to, r.BrokerEpoch)
			}
			f.c.HandleRequest(controllerNode, &proto.AllocateProducerIdsResponse{CorrelationID: r.CorrelationID, ProducerIDStart: start, ProducerIDLen: 1000})
			return
		}
	}
	f.t.Fatal("no AllocateProducerIds sent")
}

// ackMarkers answers a WriteTxnMarkers, every partition with err.
func (f *fakeTopics) ackMarkers(from sim.NodeID, r *proto.WriteTxnMarkersRequest, err func(proto.TopicPartition) proto.ErrorCode) {
	resp := &proto.WriteTxnMarkersResponse{CorrelationID: r.CorrelationID}
	for _, m := range r.Markers {
		res := proto.TxnMarkerResult{ProducerID: m.ProducerID}
		for _, tp := range m.Partitions {
			res.Partitions = append(res.Partitions, proto.TxnPartitionResult{TopicPartition: tp, Error: err(tp)})
		}
		resp.Markers = append(resp.Markers, res)
	}
	f.c.HandleRequest(from, resp)
}

func allNone(proto.TopicPartition) proto.ErrorCode { return proto.None }

// describe returns the coordinator's view of id.
func (f *fakeTopics) describe(id string) proto.TransactionDescription {
	f.t.Helper()
	out := f.request(client, &proto.DescribeTransactionsRequest{TransactionalIDs: []string{id}})
	return out[0].(*proto.DescribeTransactionsResponse).Transactions[0]
}

// initPID runs InitProducerId for id to its committed answer.
func (f *fakeTopics) initPID(id string, timeout time.Duration) *proto.InitProducerIDResponse {
	f.t.Helper()
	req := &proto.InitProducerIDRequest{TransactionalID: id, TransactionTimeout: timeout, ProducerID: -1, ProducerEpoch: -1}
	out := f.request(client, req)
	if len(out) > 0 {
		return out[0].(*proto.InitProducerIDResponse)
	}
	n := len(f.sent)
	f.commit()
	out = f.to(client, n)
	if len(out) != 1 {
		f.t.Fatalf("InitProducerId answered %d times after the commit", len(out))
	}
	return out[0].(*proto.InitProducerIDResponse)
}

func tp(topic string, p int32) proto.TopicPartition {
	return proto.TopicPartition{Topic: topic, Partition: p}
}
