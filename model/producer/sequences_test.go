package producer_test

import (
	"testing"
	"time"

	"kafkasim/history"
	"kafkasim/model/producer"
	"kafkasim/model/proto"
	"kafkasim/sim"
)

// step is how a scriptBroker answers one produce attempt: with err, after
// delay, or never when silent.
type step struct {
	err    proto.ErrorCode
	delay  time.Duration
	silent bool
}

// scriptBroker is a testBroker (with brokers = n, one of n, leading
// partition id-1) that answers its produce attempts, in the order they
// come, from script (attempts past its end: NONE at once), each after its
// own delay; answered notes when each answer left.
type scriptBroker struct {
	testBroker
	script   []step
	answered []time.Duration
	// past, when set, answers the attempts past the script's end instead.
	past func(a attemptSeen) step
}

type scriptAnswer struct {
	to   sim.NodeID
	resp *proto.ProduceResponse
}

func (b *scriptBroker) Fire(t sim.Timer) {
	if a, ok := t.(scriptAnswer); ok {
		b.answered = append(b.answered, b.env.Now())
		b.env.Send(a.to, a.resp)
	}
}

func (b *scriptBroker) Deliver(from sim.NodeID, m sim.Message) {
	req, ok := m.(*proto.ProduceRequest)
	if !ok {
		b.testBroker.Deliver(from, m)
		return
	}
	resp := &proto.ProduceResponse{CorrelationID: req.CorrelationID}
	var s step
	for _, pp := range req.Partitions {
		b.attempts = append(b.attempts, attemptSeen{pp.Batch.ProducerEpoch, pp.Batch.BaseSequence, b.env.Now()})
		if k := len(b.attempts) - 1; k < len(b.script) {
			s = b.script[k]
		} else if b.past != nil {
			s = b.past(b.attempts[k])
		}
		r := proto.ProducePartitionResponse{TopicPartition: pp.TopicPartition, BaseOffset: int64(len(b.attempts)), Error: s.err}
		if s.err != proto.None {
			r.BaseOffset = -1
		}
		resp.Partitions = append(resp.Partitions, r)
	}
	if !s.silent {
		b.env.After(s.delay, scriptAnswer{from, resp})
	}
}

// scriptedProducer starts brokers (broker-1.., broker i leading partition
// i-1 when there are several) and producer p-0 of topic orders, whose
// configuration tune adjusts; the history records its sends.
func scriptedProducer(t *testing.T, brokers []*scriptBroker, tune func(*producer.Config)) (*sim.World, *producer.Producer, *history.Recorder) {
	t.Helper()
	w := sim.NewWorld(sim.DefaultOptions(1))
	var ids []sim.NodeID
	for i, b := range brokers {
		if len(brokers) > 1 {
			b.brokers = len(brokers)
		}
		ids = append(ids, w.AddNode(sim.NodeSpec{Name: "broker-" + string(rune('1'+i)), Role: "broker", New: func() sim.Node { return b }}))
	}
	rec := history.NewRecorder(w.Now)
	cfg := producer.DefaultConfig("p-0", "orders")
	cfg.Brokers, cfg.Recorder = ids, rec
	tune(&cfg)
	pid := w.AddNode(sim.NodeSpec{Name: "p-0", Role: "producer", New: producer.New(cfg)})
	w.Start()
	w.RunUntil(100 * time.Millisecond)
	return w, w.Node(pid).(*producer.Producer), rec
}

// sendsEnded are the sends' completions, in order.
func sendsEnded(rec *history.Recorder) []history.Op {
	var out []history.Op
	for _, op := range rec.Ops() {
		if op.F == history.FSend && op.Type != history.Invoke {
			out = append(out, op)
		}
	}
	return out
}

// A batch whose delivery timeout passes while it is in flight is failed to
// the application then, as unknown (info: its attempt may still be
// written), as Kafka's Sender.getExpiredInflightBatches has it; the answer
// that comes after tells the application nothing (ProducerBatch.isDone).
// The expired batch, a retry, leaves its partition's sequence unresolved,
// and as no other batch of the partition holds a sequence, the partition's
// epoch is bumped at once (TransactionManager.maybeResolveSequences): the
// acknowledgement comes for a sequence of the former epoch, and the next
// batch goes under the new one, from sequence 0.
func TestDeliveryTimeoutExpiresABatchInFlight(t *testing.T) {
	broker := &scriptBroker{script: []step{
		{err: proto.NotEnoughReplicas},        // not appended: retried
		{err: proto.None, delay: time.Second}, // the retry's answer comes late
	}}
	const deliveryTimeout = 600 * time.Millisecond
	w, p, rec := scriptedProducer(t, []*scriptBroker{broker}, func(cfg *producer.Config) {
		cfg.DeliveryTimeout, cfg.RequestTimeout = deliveryTimeout, 2*time.Second
	})
	p.Probe()
	sent := w.Now()
	w.RunUntil(3 * time.Second)

	got := sendsEnded(rec)
	if len(got) != 1 {
		t.Fatalf("%d completions, want the send completed once: %+v", len(got), got)
	}
	if got[0].Type != history.Info {
		t.Errorf("the send ended %s (%s), want info: its delivery timeout passed with an attempt in flight", got[0].Type, got[0].Value.Error)
	}
	if at := time.Duration(got[0].Time) - sent; at < deliveryTimeout || at > deliveryTimeout+50*time.Millisecond {
		t.Errorf("the send completed %v after it began, want at its delivery timeout (%v), before the late answer", at, deliveryTimeout)
	}
	if len(broker.answered) != 2 || time.Duration(broker.answered[1]) < time.Duration(got[0].Time) {
		t.Fatalf("answers at %v: want the retry's acknowledgement after the send expired", broker.answered)
	}

	p.Probe()
	w.RunUntil(4 * time.Second)
	if len(broker.attempts) != 3 {
		t.Fatalf("attempts %+v, want the next probe's", broker.attempts)
	}
	if a := broker.attempts[2]; a.epoch != 1 || a.seq != 0 {
		t.Errorf("the next batch went as epoch %d sequence %d, want epoch 1 sequence 0", a.epoch, a.seq)
	}
	if got := sendsEnded(rec); len(got) != 2 || got[1].Type != history.OK {
		t.Errorf("completions %+v, want the second probe acknowledged", got)
	}
}

// An expired batch in flight whose answer never says it was written leaves
// its partition's sequence unresolved: once none of the partition's
// batches holds a sequence, the partition's epoch is bumped and its
// sequences start again (TransactionManager.maybeResolveSequences) — while
// the expired batch's request is still in flight, under the old epoch. The
// late answer is dropped.
func TestAnExpiredRetryLeftUnresolvedBumpsItsPartitionsEpoch(t *testing.T) {
	broker := &scriptBroker{script: []step{
		{err: proto.NotEnoughReplicas},
		{err: proto.NotEnoughReplicas, delay: time.Second}, // not appended, but after the delivery timeout
	}}
	w, p, rec := scriptedProducer(t, []*scriptBroker{broker}, func(cfg *producer.Config) {
		cfg.DeliveryTimeout, cfg.RequestTimeout = 600*time.Millisecond, 2*time.Second
	})
	p.Probe()
	w.RunUntil(900 * time.Millisecond)
	p.Probe() // while the first retry's request is in flight
	w.RunUntil(3 * time.Second)

	if len(broker.attempts) != 3 {
		t.Fatalf("attempts %+v, want two of the first probe and one of the second", broker.attempts)
	}
	if a := broker.attempts[2]; a.epoch != 1 || a.seq != 0 || a.at > time.Second {
		t.Errorf("the second probe went as epoch %d sequence %d at %v, want epoch 1 sequence 0 at once (by 1s)", a.epoch, a.seq, a.at)
	}
	got := sendsEnded(rec)
	if len(got) != 2 || got[0].Type != history.Info || got[1].Type != history.OK {
		t.Fatalf("completions %+v, want the first probe info (expired in flight), the second ok", got)
	}
}

// An idempotent producer resends a retried batch once it is the first of
// its partition's batches holding sequences (Kafka's RecordAccumulator.
// shouldStopDrainBatchesForPartition: firstInFlightSequence), not once
// nothing of the partition is in flight: a later batch in flight does not
// hold it back, an earlier one does.
func TestARetryGoesOnceItIsTheFirstInFlight(t *testing.T) {
	broker := &scriptBroker{script: []step{
		{err: proto.NotEnoughReplicas, delay: 50 * time.Millisecond}, // batch 0: retried
		{err: proto.None, delay: time.Second},                        // batch 1: its answer is slow
		{err: proto.None},                                            // batch 0's retry
		{err: proto.None, delay: time.Second},                        // batch 2: slow
		{err: proto.NotEnoughReplicas},                               // batch 3: retried, behind batch 2
	}}
	w, p, _ := scriptedProducer(t, []*scriptBroker{broker}, func(*producer.Config) {})
	p.Probe()
	w.RunUntil(120 * time.Millisecond) // batch 0 in flight
	p.Probe()
	w.RunUntil(time.Second)
	if len(broker.attempts) < 3 {
		t.Fatalf("attempts %+v by 1s: want batch 0's retry, while batch 1 is in flight", broker.attempts)
	}
	if a := broker.attempts[2]; a.seq != 0 || a.at > 400*time.Millisecond {
		t.Errorf("batch 0's retry went as sequence %d at %v, want sequence 0 after its backoff, before batch 1's answer", a.seq, a.at)
	}

	w.RunUntil(2500 * time.Millisecond) // everything answered
	p.Probe()
	w.RunUntil(2510 * time.Millisecond)
	p.Probe()
	w.RunUntil(5 * time.Second)
	if len(broker.attempts) != 6 {
		t.Fatalf("attempts %+v, want batches 2 and 3 and batch 3's retry", broker.attempts)
	}
	batch2, retry := broker.attempts[3], broker.attempts[5]
	if retry.seq != batch2.seq+1 || retry.at < batch2.at+time.Second {
		t.Errorf("batch 3's retry went as sequence %d at %v, want sequence %d once batch 2 (sent at %v) was answered", retry.seq, retry.at, batch2.seq+1, batch2.at)
	}
}

// An idempotent producer bumps its epoch for the partition that asks for
// it, whatever the others have in flight, and rewrites that partition's
// sequences only (Kafka's TransactionManager.bumpIdempotentProducerEpoch,
// at the start of the sender's next pass, and TxnPartitionEntry.
// startSequencesAtBeginning); another partition moves to the new epoch,
// from sequence 0, once its batches in flight are settled
// (maybeUpdateProducerIdAndEpoch). Here partition 0's leader answers its
// first batch OUT_OF_ORDER_SEQUENCE_NUMBER at the very sequence it should
// expect (KIP-360), while partition 1's first batch waits a second for its
// answer.
func TestAnEpochBumpRewritesOnlyThePartitionThatAskedForIt(t *testing.T) {
	b0 := &scriptBroker{script: []step{{err: proto.OutOfOrderSequenceNumber}}}
	b1 := &scriptBroker{script: []step{{err: proto.None, delay: time.Second}}}
	w, p, _ := scriptedProducer(t, []*scriptBroker{b0, b1}, func(*producer.Config) {})
	p.Probe() // one record to each partition
	w.RunUntil(500 * time.Millisecond)
	p.Probe() // partition 1's second batch waits for its first: the epoch changed
	w.RunUntil(3 * time.Second)

	if len(b0.attempts) != 3 {
		t.Fatalf("partition 0's attempts %+v, want the first, its rewritten retry and the second probe", b0.attempts)
	}
	if a := b0.attempts[1]; a.epoch != 1 || a.seq != 0 || a.at > 400*time.Millisecond {
		t.Errorf("partition 0's retry went as epoch %d sequence %d at %v, want epoch 1 sequence 0 after its backoff, while partition 1's batch is in flight", a.epoch, a.seq, a.at)
	}
	if len(b1.attempts) != 2 {
		t.Fatalf("partition 1's attempts %+v, want two", b1.attempts)
	}
	if a := b1.attempts[0]; a.epoch != 0 || a.seq != 0 {
		t.Errorf("partition 1's first batch went as epoch %d sequence %d, want epoch 0 sequence 0", a.epoch, a.seq)
	}
	if a := b1.attempts[1]; a.epoch != 1 || a.seq != 0 || a.at < b1.answered[0] {
		t.Errorf("partition 1's second batch went as epoch %d sequence %d at %v, want epoch 1 sequence 0 once its first was answered (%v)", a.epoch, a.seq, a.at, b1.answered[0])
	}
}

// A batch the broker definitely refused, with retries left, makes an
// idempotent producer bump its partition's epoch (Kafka's
// TransactionManager.handleFailedBatch: requestIdempotentEpochBumpForPartition),
// rather than take its sequences back: the next batch goes under the new
// epoch from sequence 0.
func TestADefinitelyFailedBatchBumpsItsPartitionsEpoch(t *testing.T) {
	broker := &scriptBroker{script: []step{{err: proto.InvalidRecord}}}
	w, p, rec := scriptedProducer(t, []*scriptBroker{broker}, func(*producer.Config) {})
	p.Probe()
	w.RunUntil(500 * time.Millisecond)
	p.Probe()
	w.RunUntil(time.Second)

	if len(broker.attempts) != 2 {
		t.Fatalf("attempts %+v, want one per probe", broker.attempts)
	}
	if a := broker.attempts[1]; a.epoch != 1 || a.seq != 0 {
		t.Errorf("the batch after the failed one went as epoch %d sequence %d, want epoch 1 sequence 0", a.epoch, a.seq)
	}
	got := sendsEnded(rec)
	if len(got) != 2 || got[0].Type != history.Fail || got[1].Type != history.OK {
		t.Fatalf("completions %+v, want fail (refused, never appended) then ok", got)
	}
}

// A retry that expires in flight leaves its partition's sequence
// unresolved; a later batch of the partition was acknowledged meanwhile,
// so the broker took the expired one too (it takes sequences in order):
// once none of the partition's batches holds a sequence, the last sequence
// acknowledged is the one before the next, and the mark is dropped without
// an epoch bump (Kafka's TransactionManager.maybeResolveSequences).
func TestALaterAcknowledgementResolvesAnExpiredRetry(t *testing.T) {
	broker := &scriptBroker{script: []step{
		{err: proto.NotEnoughReplicas, delay: 50 * time.Millisecond}, // batch 0: retried
		{err: proto.None, delay: 400 * time.Millisecond},             // batch 1
		{err: proto.None, delay: time.Second},                        // batch 0's retry: answered after it expired
	}}
	w, p, rec := scriptedProducer(t, []*scriptBroker{broker}, func(cfg *producer.Config) {
		cfg.DeliveryTimeout, cfg.RequestTimeout = 500*time.Millisecond, 2*time.Second
	})
	p.Probe()
	w.RunUntil(120 * time.Millisecond) // batch 0 in flight
	p.Probe()
	w.RunUntil(1500 * time.Millisecond)
	p.Probe()
	w.RunUntil(3 * time.Second)

	if len(broker.attempts) != 4 {
		t.Fatalf("attempts %+v, want batch 0 twice, batch 1, batch 2", broker.attempts)
	}
	if a := broker.attempts[3]; a.epoch != 0 || a.seq != 2 {
		t.Errorf("batch 2 went as epoch %d sequence %d, want epoch 0 sequence 2: the acknowledgement of batch 1 resolved batch 0's sequence", a.epoch, a.seq)
	}
	got := sendsEnded(rec)
	if len(got) != 3 || got[0].Type != history.OK || got[1].Type != history.Info || got[2].Type != history.OK {
		t.Fatalf("completions %+v, want batch 1 ok, batch 0 info (expired in flight), batch 2 ok", got)
	}
}

// A batch whose delivery timeout passes in flight on its first attempt is
// not in retry, and Kafka 4.3's producer leaves no unresolved mark for it
// (Sender.failExpiredBatches). Here the broker refuses it
// (NOT_ENOUGH_REPLICAS, not appended) after it expired: the answer changes
// nothing, so the next batch goes as the sequence after it, which the broker
// answers OUT_OF_ORDER_SEQUENCE_NUMBER; the producer retries it as not the
// next sequence, without an epoch bump (TransactionManager.canRetry), until
// it expires in retry, which marks the gap; the epoch is bumped and the third
// batch goes under the new one from sequence 0 (maybeResolveSequences). The
// partition wrote nothing for a delivery timeout (fuzz seeds 353383, 353509).
func TestAFirstAttemptExpiredInFlightLeavesAGapUntilARetryExpires(t *testing.T) {
	broker := &scriptBroker{script: []step{
		{err: proto.NotEnoughReplicas, delay: time.Second}, // refused, after the delivery timeout
	}}
	broker.past = func(a attemptSeen) step {
		if a.epoch == 0 {
			return step{err: proto.OutOfOrderSequenceNumber} // sequence 0 was never written
		}
		return step{}
	}
	w, p, rec := scriptedProducer(t, []*scriptBroker{broker}, func(cfg *producer.Config) {
		cfg.DeliveryTimeout, cfg.RequestTimeout = 600*time.Millisecond, 2*time.Second
	})
	p.Probe()
	w.RunUntil(1500 * time.Millisecond) // expired in flight, then refused
	p.Probe()
	w.RunUntil(2500 * time.Millisecond) // out of order until it expires in retry
	p.Probe()
	w.RunUntil(4 * time.Second)

	n := len(broker.attempts)
	if n < 4 {
		t.Fatalf("attempts %+v, want the first probe once, the second more than once, the third once", broker.attempts)
	}
	for i, a := range broker.attempts[1 : n-1] {
		if a.epoch != 0 || a.seq != 1 {
			t.Errorf("attempt %d of the second probe went as epoch %d sequence %d, want epoch 0 sequence 1 (no bump: not the next sequence)", i+1, a.epoch, a.seq)
		}
	}
	if a := broker.attempts[n-1]; a.epoch != 1 || a.seq != 0 {
		t.Errorf("the third probe went as epoch %d sequence %d, want epoch 1 sequence 0: the expired retry marked the gap", a.epoch, a.seq)
	}
	got := sendsEnded(rec)
	if len(got) != 3 || got[0].Type != history.Info || got[1].Type != history.Fail || got[2].Type != history.OK {
		t.Fatalf("completions %+v, want the first probe info (expired in flight), the second failed (expired, refused each time), the third ok", got)
	}
}
