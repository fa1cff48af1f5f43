package producer_test

import (
	"testing"
	"time"

	"kafkasim/history"
	"kafkasim/model/producer"
	"kafkasim/model/proto"
	"kafkasim/model/record"
	"kafkasim/sim"
)

// testBroker stands for the brokers of topic orders: with brokers = n > 0
// it is one of n brokers (ids 1..n on nodes 0..n-1), partition i led by
// broker i+1; with none, it alone leads partition 0. It answers each produce
// from a script (attempts past its end get its last answer; no script:
// NONE), after delay, or never when silent.
type testBroker struct {
	env      sim.Env
	brokers  int
	answers  []proto.ErrorCode
	delay    time.Duration
	silent   bool
	attempts []attemptSeen
	// disconnects counts the connections a producer closed on it.
	disconnects int
}

type attemptSeen struct {
	epoch int16
	seq   int32
	at    time.Duration
}

type answerLater struct {
	to   sim.NodeID
	resp *proto.ProduceResponse
}

func (b *testBroker) Start(env sim.Env) { b.env = env }
func (b *testBroker) Fire(t sim.Timer) {
	if a, ok := t.(answerLater); ok {
		b.env.Send(a.to, a.resp)
	}
}

func (b *testBroker) metadata(corr uint64) *proto.MetadataResponse {
	m := &proto.MetadataResponse{CorrelationID: corr, Topics: []proto.MetadataTopic{{Name: "orders"}}}
	if b.brokers == 0 {
		m.Brokers = []proto.MetadataBroker{{ID: 1, Node: b.env.ID()}}
		m.Topics[0].Partitions = []proto.MetadataPartition{{Partition: 0, Leader: 1, Replicas: []int32{1}, ISR: []int32{1}}}
		return m
	}
	for i := range b.brokers {
		id := int32(i + 1)
		m.Brokers = append(m.Brokers, proto.MetadataBroker{ID: id, Node: sim.NodeID(i)})
		m.Topics[0].Partitions = append(m.Topics[0].Partitions, proto.MetadataPartition{Partition: int32(i), Leader: id, Replicas: []int32{id}, ISR: []int32{id}})
	}
	return m
}

func (b *testBroker) Deliver(from sim.NodeID, m sim.Message) {
	switch m := m.(type) {
	case *sim.Disconnected:
		b.disconnects++
	case *proto.MetadataRequest:
		b.env.Send(from, b.metadata(m.CorrelationID))
	case *proto.InitProducerIDRequest:
		b.env.Send(from, &proto.InitProducerIDResponse{CorrelationID: m.CorrelationID, ProducerID: 7})
	case *proto.ProduceRequest:
		resp := &proto.ProduceResponse{CorrelationID: m.CorrelationID}
		for _, pp := range m.Partitions {
			b.attempts = append(b.attempts, attemptSeen{pp.Batch.ProducerEpoch, pp.Batch.BaseSequence, b.env.Now()})
			r := proto.ProducePartitionResponse{TopicPartition: pp.TopicPartition, BaseOffset: int64(len(b.attempts))}
			if len(b.answers) > 0 {
				r.Error = b.answers[min(len(b.attempts), len(b.answers))-1]
			}
			if r.Error != proto.None {
				r.BaseOffset = -1
			}
			resp.Partitions = append(resp.Partitions, r)
		}
		switch {
		case b.silent:
		case b.delay > 0:
			b.env.After(b.delay, answerLater{from, resp})
		default:
			b.env.Send(from, resp)
		}
	}
}

// oneBrokerProducer starts a world of broker (broker-1) and producer p-0 of
// topic orders, whose configuration tune adjusts.
func oneBrokerProducer(broker sim.Node, tune func(*producer.Config)) (*sim.World, sim.NodeID) {
	w := sim.NewWorld(sim.DefaultOptions(1))
	bid := w.AddNode(sim.NodeSpec{Name: "broker-1", Role: "broker", New: func() sim.Node { return broker }})
	cfg := producer.DefaultConfig("p-0", "orders")
	cfg.Brokers, cfg.Recorder = []sim.NodeID{bid}, history.NewRecorder(w.Now)
	tune(&cfg)
	pid := w.AddNode(sim.NodeSpec{Name: "p-0", Role: "producer", New: producer.New(cfg)})
	w.Start()
	return w, pid
}

// An out-of-order answer to the very sequence the leader should expect
// next makes the idempotent producer bump its epoch and send the batch again
// from sequence 0 (KIP-360), but it does not say the batch is not in the
// log: a leader whose producer state came from a snapshot knows only each
// producer's last batch, and takes a retry of an earlier one it holds as out
// of order. So a batch an earlier attempt may have written stays
// indeterminate: when its delivery timeout ends it is info, never fail
// (fuzz seed 4005450: fail, and the record was read at offset 39).
func TestOutOfOrderRetryOfAMaybeWrittenBatchStaysIndeterminate(t *testing.T) {
	w := sim.NewWorld(sim.DefaultOptions(1))
	broker := &testBroker{answers: []proto.ErrorCode{
		proto.RequestTimedOut,          // may have been appended
		proto.OutOfOrderSequenceNumber, // the next sequence expected: bump, rewrite
		proto.NotEnoughReplicas,        // not appended, retriable: until the delivery timeout
	}}
	bid := w.AddNode(sim.NodeSpec{Name: "broker-1", Role: "broker", New: func() sim.Node { return broker }})
	rec := history.NewRecorder(w.Now)
	cfg := producer.DefaultConfig("p-0", "orders")
	cfg.Brokers, cfg.Recorder = []sim.NodeID{bid}, rec
	cfg.DeliveryTimeout, cfg.RequestTimeout = 3*time.Second, time.Second
	pid := w.AddNode(sim.NodeSpec{Name: "p-0", Role: "producer", New: producer.New(cfg)})
	w.Start()
	w.RunUntil(100 * time.Millisecond)
	p := w.Node(pid).(*producer.Producer)
	p.Probe()
	w.RunUntil(10 * time.Second)

	if len(broker.attempts) < 3 {
		t.Fatalf("the broker saw %d attempts, want at least 3: %+v", len(broker.attempts), broker.attempts)
	}
	if a := broker.attempts[2]; a.epoch != 1 || a.seq != 0 {
		t.Errorf("the attempt after the out-of-order answer went as epoch %d sequence %d, want epoch 1 sequence 0 (rewritten)", a.epoch, a.seq)
	}
	var sends []history.Op
	for _, op := range rec.Ops() {
		if op.F == history.FSend && op.Type != history.Invoke {
			sends = append(sends, op)
		}
	}
	if len(sends) != 1 {
		t.Fatalf("%d sends completed, want 1: %v", len(sends), sends)
	}
	if sends[0].Type != history.Info {
		t.Errorf("the send ended %s (%s), want info: its first attempt may have been written", sends[0].Type, sends[0].Value.Error)
	}
}

// A batch waits for linger.ms unless it is full or another batch waits
// behind it to be sent (Kafka's RecordAccumulator.ready); a batch in flight
// has left the accumulator's deque and does not count. Here partition 0's
// first batch stays in flight, and the answer for partition 1 wakes the
// sender 6 ms after partition 0's second batch was made: that batch still
// waits for its linger.
func TestLingerWaitsWhileAnEarlierBatchIsInFlight(t *testing.T) {
	w := sim.NewWorld(sim.DefaultOptions(1))
	silent, slow := &testBroker{brokers: 2, silent: true}, &testBroker{brokers: 2, delay: 80 * time.Millisecond}
	b1 := w.AddNode(sim.NodeSpec{Name: "broker-1", Role: "broker", New: func() sim.Node { return silent }})
	b2 := w.AddNode(sim.NodeSpec{Name: "broker-2", Role: "broker", New: func() sim.Node { return slow }})
	cfg := producer.DefaultConfig("p-0", "orders")
	cfg.Brokers, cfg.Recorder = []sim.NodeID{b1, b2}, history.NewRecorder(w.Now)
	cfg.LingerMs = 20 * time.Millisecond
	pid := w.AddNode(sim.NodeSpec{Name: "p-0", Role: "producer", New: producer.New(cfg)})
	w.Start()
	w.RunUntil(100 * time.Millisecond)
	p := w.Node(pid).(*producer.Producer)
	p.Probe() // a record for each partition
	w.RunUntil(200 * time.Millisecond)
	if len(silent.attempts) != 1 || len(slow.attempts) != 1 {
		t.Fatalf("first batches: %+v and %+v, want one each", silent.attempts, slow.attempts)
	}
	p.Probe()
	w.RunUntil(400 * time.Millisecond)
	if len(silent.attempts) != 2 {
		t.Fatalf("partition 0 saw %d batches, want 2: %+v", len(silent.attempts), silent.attempts)
	}
	if wait := silent.attempts[1].at - 200*time.Millisecond; wait < cfg.LingerMs || wait > cfg.LingerMs+10*time.Millisecond {
		t.Errorf("partition 0's second batch reached its leader %v after its record, want linger.ms (%v) plus the network", wait, cfg.LingerMs)
	}
}

// Every answer comes after its request timed out: the producer settles each
// batch when its delivery timeout ends (info: an attempt may have been
// written) and makes its next batches from the settled ones, while the late
// answers keep arriving for requests long given up. They change nothing:
// each send completes exactly once, info, none acknowledged.
func TestLateAnswersAfterBatchesAreSettledAndReused(t *testing.T) {
	w := sim.NewWorld(sim.DefaultOptions(3))
	broker := &testBroker{delay: 150 * time.Millisecond}
	bid := w.AddNode(sim.NodeSpec{Name: "broker-1", Role: "broker", New: func() sim.Node { return broker }})
	rec := history.NewRecorder(w.Now)
	cfg := producer.DefaultConfig("p-0", "orders")
	cfg.Brokers, cfg.Recorder = []sim.NodeID{bid}, rec
	cfg.Rate = 500
	cfg.RequestTimeout, cfg.DeliveryTimeout = 100*time.Millisecond, 350*time.Millisecond
	pid := w.AddNode(sim.NodeSpec{Name: "p-0", Role: "producer", New: producer.New(cfg)})
	w.Start()
	w.RunUntil(5 * time.Second)

	invoked := map[string]bool{}
	completed := map[string]int{}
	for _, op := range rec.Ops() {
		if op.F != history.FSend {
			continue
		}
		if op.Type == history.Invoke {
			invoked[op.Value.Value] = true
			continue
		}
		completed[op.Value.Value]++
		if op.Type != history.Info {
			t.Fatalf("send %s ended %s (%s), want info: every answer came too late", op.Value.Value, op.Type, op.Value.Error)
		}
	}
	st := w.Node(pid).(*producer.Producer).Stats
	if len(completed) < 1000 || st.Batches < 50 || st.Retries < 10 {
		t.Fatalf("%d sends completed in %d batches, %d retries: too few to reuse batches many times", len(completed), st.Batches, st.Retries)
	}
	for v, n := range completed {
		if n != 1 || !invoked[v] {
			t.Fatalf("send %s completed %d times (invoked: %v)", v, n, invoked[v])
		}
	}
	// Only the last half second's sends may still be open.
	if open := len(invoked) - len(completed); open > 250 {
		t.Fatalf("%d of %d sends never completed", open, len(invoked))
	}
}

// logBroker leads every partition and appends each batch to one log, so
// that an offset names exactly the record it received there.
type logBroker struct {
	testBroker
	log []record.Record
}

func (b *logBroker) Deliver(from sim.NodeID, m sim.Message) {
	req, ok := m.(*proto.ProduceRequest)
	if !ok {
		b.testBroker.Deliver(from, m)
		return
	}
	resp := &proto.ProduceResponse{CorrelationID: req.CorrelationID}
	for _, pp := range req.Partitions {
		resp.Partitions = append(resp.Partitions, proto.ProducePartitionResponse{TopicPartition: pp.TopicPartition, BaseOffset: int64(len(b.log))})
		b.log = append(b.log, pp.Batch.Records()...)
	}
	b.env.Send(from, resp)
}

// Settled batches are reused with their record arrays: every send completes
// once, acknowledged at the offset of the very record it sent (its key and
// value), through thousands of batches.
func TestReusedBatchesAcknowledgeTheirOwnRecords(t *testing.T) {
	w := sim.NewWorld(sim.DefaultOptions(5))
	broker := &logBroker{}
	bid := w.AddNode(sim.NodeSpec{Name: "broker-1", Role: "broker", New: func() sim.Node { return broker }})
	rec := history.NewRecorder(w.Now)
	cfg := producer.DefaultConfig("p-0", "orders")
	cfg.Brokers, cfg.Recorder = []sim.NodeID{bid}, rec
	cfg.Rate, cfg.Keys = 2000, 50
	pid := w.AddNode(sim.NodeSpec{Name: "p-0", Role: "producer", New: producer.New(cfg)})
	w.Start()
	w.RunUntil(5 * time.Second)

	invoked := map[string]string{} // value → key
	completed := map[string]bool{}
	for _, op := range rec.Ops() {
		if op.F != history.FSend {
			continue
		}
		if op.Type == history.Invoke {
			invoked[op.Value.Value] = op.Value.Key
			continue
		}
		v := op.Value
		if op.Type != history.OK || completed[v.Value] || invoked[v.Value] != v.Key {
			t.Fatalf("send %q (key %q) ended %s, completed before: %v, invoked with key %q", v.Value, v.Key, op.Type, completed[v.Value], invoked[v.Value])
		}
		completed[v.Value] = true
		if v.Offset < 0 || v.Offset >= int64(len(broker.log)) {
			t.Fatalf("send %q acknowledged at offset %d: the log has %d records", v.Value, v.Offset, len(broker.log))
		}
		if r := broker.log[v.Offset]; r.Value != v.Value || r.Key != v.Key {
			t.Fatalf("send %q (key %q) acknowledged at offset %d, which holds %q (key %q)", v.Value, v.Key, v.Offset, r.Value, r.Key)
		}
	}
	if st := w.Node(pid).(*producer.Producer).Stats; len(completed) < 8000 || st.Batches < 800 {
		t.Fatalf("%d sends completed in %d batches: too few to reuse batches many times", len(completed), st.Batches)
	}
}

// roomBroker leads partitions 0 and 1. It answers a request carrying
// partition 1 after 10 ms, the first time with NOT_ENOUGH_REPLICAS (a retry
// with backoff), and one carrying partition 0 alone after 700 ms; it notes
// when each partition's attempts arrive.
type roomBroker struct {
	env      sim.Env
	attempts map[int32][]time.Duration
}

func (b *roomBroker) Start(env sim.Env) { b.env, b.attempts = env, map[int32][]time.Duration{} }
func (b *roomBroker) Fire(t sim.Timer) {
	if a, ok := t.(answerLater); ok {
		b.env.Send(a.to, a.resp)
	}
}
func (b *roomBroker) Deliver(from sim.NodeID, m sim.Message) {
	switch m := m.(type) {
	case *proto.MetadataRequest:
		r := &proto.MetadataResponse{CorrelationID: m.CorrelationID, Topics: []proto.MetadataTopic{{Name: "orders"}},
			Brokers: []proto.MetadataBroker{{ID: 1, Node: b.env.ID()}}}
		for i := range int32(2) {
			r.Topics[0].Partitions = append(r.Topics[0].Partitions, proto.MetadataPartition{Partition: i, Leader: 1, Replicas: []int32{1}, ISR: []int32{1}})
		}
		b.env.Send(from, r)
	case *proto.ProduceRequest:
		resp := &proto.ProduceResponse{CorrelationID: m.CorrelationID}
		delay := 700 * time.Millisecond
		for _, pp := range m.Partitions {
			b.attempts[pp.Partition] = append(b.attempts[pp.Partition], b.env.WorldTime())
			r := proto.ProducePartitionResponse{TopicPartition: pp.TopicPartition}
			if pp.Partition == 1 {
				delay = 10 * time.Millisecond
				if len(b.attempts[1]) == 1 {
					r.Error, r.BaseOffset = proto.NotEnoughReplicas, -1
				}
			}
			resp.Partitions = append(resp.Partitions, r)
		}
		b.env.After(delay, answerLater{from, resp})
	}
}

// A retry that waits out its backoff while its leader has no room for
// another request goes once the room is made and the backoff is over —
// also when the producer's clock is set back meanwhile, which makes a
// wake-up it had passed lie ahead again (a wake-up remembered past the
// jump held the retry back until the delivery timeout, at 125 s).
func TestRetryGoesAfterTheClockIsSetBack(t *testing.T) {
	br := &roomBroker{}
	w, pid := oneBrokerProducer(br, func(cfg *producer.Config) {
		cfg.EnableIdempotence, cfg.Acks = false, 1
		cfg.MaxInFlight = 2
		cfg.BatchSize = 10 // every batch is full at once
	})
	w.RunUntil(5000 * time.Millisecond)
	p := w.Node(pid).(*producer.Producer)
	for _, at := range []time.Duration{5020, 5030, 5500} {
		p.Probe()
		w.RunUntil(at * time.Millisecond)
	}
	if err := w.InjectFault(sim.Fault{Kind: sim.FaultClock, Target: "p-0", ClockJump: -time.Second}); err != nil {
		t.Fatal(err)
	}
	w.RunUntil(200 * time.Second)
	retries := br.attempts[1]
	if len(retries) < 2 || retries[1] > 10*time.Second {
		t.Fatalf("partition 1's attempts at %v: want the retry within seconds of the backoff", retries)
	}
}

// A producer whose clock is set forward past its pending sender wake-up
// still sends what it is given next at once: the pending wake-up's timer
// waits for the world's time, and a wake-up asked for after the jump is
// not later than it by the world's time (it was dropped as later, and the
// send waited for the silent broker's request timeout, 30 s).
func TestSendAfterTheClockIsSetForward(t *testing.T) {
	w := sim.NewWorld(sim.DefaultOptions(1))
	silent, fast := &testBroker{brokers: 2, silent: true}, &testBroker{brokers: 2}
	w.AddNode(sim.NodeSpec{Name: "broker-1", Role: "broker", New: func() sim.Node { return silent }})
	w.AddNode(sim.NodeSpec{Name: "broker-2", Role: "broker", New: func() sim.Node { return fast }})
	cfg := producer.DefaultConfig("p-0", "orders")
	cfg.Brokers, cfg.Recorder = []sim.NodeID{0, 1}, history.NewRecorder(w.Now)
	cfg.EnableIdempotence, cfg.Acks = false, 1
	pid := w.AddNode(sim.NodeSpec{Name: "p-0", Role: "producer", New: producer.New(cfg)})
	w.Start()
	w.RunUntil(100 * time.Millisecond)
	p := w.Node(pid).(*producer.Producer)
	p.Probe() // one record to each broker; the silent one's request waits for its timeout
	w.RunUntil(time.Second)
	if err := w.InjectFault(sim.Fault{Kind: sim.FaultClock, Target: "p-0", ClockJump: 200 * time.Second}); err != nil {
		t.Fatal(err)
	}
	w.RunUntil(2 * time.Second)
	p.Probe()
	w.RunUntil(60 * time.Second)
	if len(fast.attempts) < 2 || fast.attempts[1].at > 3*time.Second {
		t.Fatalf("the fast broker saw attempts %+v: want the second within a second of the send at 2 s", fast.attempts)
	}
}

// A request that times out closes its connection, and every request in
// flight on it fails with it, as Kafka's NetworkClient.handleTimedOutRequests
// does: the second request, sent 300ms after the first, is retried when the
// first times out, not a request timeout after it was sent. Its fate is
// unknown either way; the broker learns the connection was closed.
func TestRequestTimeoutFailsEveryRequestOnItsConnection(t *testing.T) {
	broker := &testBroker{silent: true}
	const requestTimeout = time.Second
	w, pid := oneBrokerProducer(broker, func(cfg *producer.Config) {
		cfg.EnableIdempotence, cfg.Acks = false, proto.AcksAll
		cfg.RequestTimeout, cfg.DeliveryTimeout = requestTimeout, 10*time.Second
	})
	w.RunUntil(100 * time.Millisecond)
	p := w.Node(pid).(*producer.Producer)
	p.Probe()
	w.RunUntil(400 * time.Millisecond)
	p.Probe()
	w.RunUntil(1600 * time.Millisecond)

	if len(broker.attempts) < 4 {
		t.Fatalf("the broker saw %d attempts by 1.6s, want both sends and both retries: %+v", len(broker.attempts), broker.attempts)
	}
	first, second := broker.attempts[0].at, broker.attempts[1].at
	if second-first < 200*time.Millisecond {
		t.Fatalf("sends at %v and %v, want them apart", first, second)
	}
	for _, a := range broker.attempts[2:4] {
		// Retried after the first request's timeout and a backoff of at
		// most retry.backoff.ms plus jitter, before the second's own
		// timeout would have come.
		if a.at < first+requestTimeout || a.at >= second+requestTimeout {
			t.Fatalf("a retry at %v, want between %v and %v (attempts %+v)", a.at, first+requestTimeout, second+requestTimeout, broker.attempts)
		}
	}
	if broker.disconnects == 0 {
		t.Fatal("the broker never learned the producer closed the connection")
	}
}

// closingBroker is a testBroker that closes the connection instead of
// answering the first metadata request and the first InitProducerId
// request, and notes when each kind of request came.
type closingBroker struct {
	testBroker
	metaAt, pidAt []time.Duration
}

func (b *closingBroker) Deliver(from sim.NodeID, m sim.Message) {
	switch m.(type) {
	case *proto.MetadataRequest:
		b.metaAt = append(b.metaAt, b.env.Now())
		if len(b.metaAt) == 1 {
			b.env.CloseConnection(from)
			return
		}
	case *proto.InitProducerIDRequest:
		b.pidAt = append(b.pidAt, b.env.Now())
		if len(b.pidAt) == 1 {
			b.env.CloseConnection(from)
			return
		}
	}
	b.testBroker.Deliver(from, m)
}

// A metadata request or an InitProducerId request lost with its connection
// is asked again after retry.backoff.ms, as Kafka's are (Metadata.
// failedUpdate and timeToAllowUpdate; TransactionManager re-enqueues the
// InitProducerId request as a retry, and the Sender sleeps retryBackoffMs
// before sending it): not at once, and not after the request's own timeout.
func TestRequestsLostWithTheirConnectionAreAskedAgainAfterTheBackoff(t *testing.T) {
	broker := &closingBroker{}
	const retryBackoff = 500 * time.Millisecond
	w, _ := oneBrokerProducer(broker, func(cfg *producer.Config) {
		cfg.RequestTimeout, cfg.RetryBackoff = 30*time.Second, retryBackoff
	})
	w.RunUntil(10 * time.Second)

	for _, c := range []struct {
		what string
		at   []time.Duration
	}{{"metadata", broker.metaAt}, {"InitProducerId", broker.pidAt}} {
		if len(c.at) < 2 {
			t.Fatalf("%s requests at %v: want it asked again after the connection closed", c.what, c.at)
		}
		// The close reaches the producer within the network's latency.
		if gap := c.at[1] - c.at[0]; gap < retryBackoff || gap > retryBackoff+100*time.Millisecond {
			t.Errorf("%s asked again %v after the lost request, want retry.backoff.ms (%v) after its connection closed", c.what, gap, retryBackoff)
		}
	}
}
