package producer_test

import (
	"testing"
	"time"

	"kafkasim/checker"
	"kafkasim/history"
	"kafkasim/model/producer"
	"kafkasim/model/proto"
	"kafkasim/model/record"
	"kafkasim/sim"
)

// txnCluster is a fake cluster for the transactional producer: brokers
// 1..n on nodes 0..n-1, broker 1 leading partition 0 of topic orders, one
// of them the transaction coordinator (and the group coordinator). It
// bumps the epoch at every InitProducerId and EndTxn (TV2), and answers
// from scripts: each list's first entry answers the next request of its
// kind (none left: NONE).
type txnCluster struct {
	nodes       []sim.NodeID
	coordinator int // index of the coordinator's node
	pid         int64
	epoch       int16

	initErrs, endErrs, produceErrs, offsetErrs []proto.ErrorCode

	produced []producedBatch
	ends     []endSeen
	inits    int
	initAsks []proto.InitProducerIDRequest
	offsets  []*proto.TxnOffsetCommitRequest
	// log holds what partition 0 took, by value.
	log []string
}

type producedBatch struct {
	txnID         string
	transactional bool
	pid           int64
	epoch         int16
	seq           int32
	n             int
}

type endSeen struct {
	node   int
	commit bool
	epoch  int16
}

type txnBroker struct {
	env sim.Env
	i   int
	c   *txnCluster
}

func (b *txnBroker) Start(env sim.Env) { b.env = env }
func (b *txnBroker) Fire(sim.Timer)    {}

func pop(errs *[]proto.ErrorCode) proto.ErrorCode {
	if len(*errs) == 0 {
		return proto.None
	}
	e := (*errs)[0]
	*errs = (*errs)[1:]
	return e
}

func (b *txnBroker) Deliver(from sim.NodeID, m sim.Message) {
	c := b.c
	coord := b.i == c.coordinator
	switch m := m.(type) {
	case *proto.MetadataRequest:
		r := &proto.MetadataResponse{CorrelationID: m.CorrelationID, Topics: []proto.MetadataTopic{{Name: "orders",
			Partitions: []proto.MetadataPartition{{Partition: 0, Leader: 1, Replicas: []int32{1}, ISR: []int32{1}}}}}}
		for i, n := range c.nodes {
			r.Brokers = append(r.Brokers, proto.MetadataBroker{ID: int32(i + 1), Node: n})
		}
		b.env.Send(from, r)
	case *proto.FindCoordinatorRequest:
		b.env.Send(from, &proto.FindCoordinatorResponse{CorrelationID: m.CorrelationID, Key: m.Key,
			NodeID: int32(c.coordinator + 1), Node: c.nodes[c.coordinator]})
	case *proto.InitProducerIDRequest:
		c.initAsks = append(c.initAsks, *m)
		r := &proto.InitProducerIDResponse{CorrelationID: m.CorrelationID, ProducerID: -1, ProducerEpoch: -1}
		switch {
		case m.TransactionalID == "" || m.TransactionTimeout <= 0:
			r.Error = proto.InvalidRequest
		case !coord:
			r.Error = proto.NotCoordinator
		default:
			if r.Error = pop(&c.initErrs); r.Error == proto.None {
				c.inits++
				c.epoch++
				r.ProducerID, r.ProducerEpoch = c.pid, c.epoch
			}
		}
		b.env.Send(from, r)
	case *proto.EndTxnRequest:
		r := &proto.EndTxnResponse{CorrelationID: m.CorrelationID, ProducerID: -1, ProducerEpoch: -1}
		c.ends = append(c.ends, endSeen{node: b.i, commit: m.Committed, epoch: m.ProducerEpoch})
		switch {
		case !coord:
			r.Error = proto.NotCoordinator
		case m.ProducerEpoch != c.epoch:
			r.Error = proto.ProducerFenced
		default:
			if r.Error = pop(&c.endErrs); r.Error == proto.None {
				c.epoch++
				r.ProducerID, r.ProducerEpoch = c.pid, c.epoch
			}
		}
		b.env.Send(from, r)
	case *proto.TxnOffsetCommitRequest:
		c.offsets = append(c.offsets, m)
		r := &proto.TxnOffsetCommitResponse{CorrelationID: m.CorrelationID}
		err := pop(&c.offsetErrs)
		if !coord {
			err = proto.NotCoordinator
		}
		for _, p := range m.Partitions {
			r.Partitions = append(r.Partitions, proto.TxnPartitionResult{TopicPartition: p.TopicPartition, Error: err})
		}
		b.env.Send(from, r)
	case *proto.ProduceRequest:
		r := &proto.ProduceResponse{CorrelationID: m.CorrelationID}
		for _, pp := range m.Partitions {
			bt := pp.Batch
			c.produced = append(c.produced, producedBatch{txnID: m.TransactionalID, transactional: bt.Transactional,
				pid: bt.ProducerID, epoch: bt.ProducerEpoch, seq: bt.BaseSequence, n: len(bt.Records())})
			pr := proto.ProducePartitionResponse{TopicPartition: pp.TopicPartition, BaseOffset: -1}
			switch {
			case bt.ProducerEpoch < c.epoch:
				pr.Error = proto.InvalidProducerEpoch
			default:
				pr.Error = pop(&c.produceErrs)
			}
			if pr.Error == proto.None {
				pr.BaseOffset = int64(len(c.log))
				for _, rec := range bt.Records() {
					c.log = append(c.log, rec.Value)
				}
			}
			r.Partitions = append(r.Partitions, pr)
		}
		b.env.Send(from, r)
	}
}

// txnWorld starts n brokers of cluster c and a client with
// transactional.id "tx-0"; it runs until the client is initialized.
func txnWorld(t *testing.T, n int, c *txnCluster, tune func(*producer.ClientConfig)) (*sim.World, *producer.Client, *txnResults) {
	t.Helper()
	w := sim.NewWorld(sim.DefaultOptions(1))
	for i := range n {
		b := &txnBroker{i: i, c: c}
		c.nodes = append(c.nodes, w.AddNode(sim.NodeSpec{Name: "broker-" + string(rune('1'+i)), Role: "broker", New: func() sim.Node { return b }}))
	}
	cfg := producer.DefaultClientConfig("p-0", "orders")
	cfg.Brokers, cfg.TransactionalID = c.nodes[:1], "tx-0"
	cfg.Acks, cfg.EnableIdempotence = 1, false // forced back
	if tune != nil {
		tune(&cfg)
	}
	cl := producer.NewClient(cfg)
	w.AddNode(sim.NodeSpec{Name: "p-0", Role: "producer", New: func() sim.Node { return cl }})
	w.Start()
	res := &txnResults{}
	w.RunUntil(10 * time.Millisecond)
	cl.InitTransactions(res)
	w.RunUntil(time.Second)
	if got := res.take(); len(got) != 1 || got[0] != (txnResult{producer.TxnOpInit, history.OK, ""}) || cl.TxnState() != producer.TxnReady {
		t.Fatalf("initTransactions: %v, state %s; want ok, READY", got, cl.TxnState())
	}
	return w, cl, res
}

type txnResult struct {
	op      producer.TxnOp
	outcome history.Type
	why     string
}

type txnResults struct {
	got []txnResult
	// then, when set, runs as the application's reaction to each result.
	then func(txnResult)
}

func (r *txnResults) OnTxnResult(op producer.TxnOp, outcome history.Type, why string) {
	r.got = append(r.got, txnResult{op, outcome, why})
	if r.then != nil {
		r.then(txnResult{op, outcome, why})
	}
}

func (r *txnResults) take() []txnResult {
	g := r.got
	r.got = nil
	return g
}

func sendN(cl *producer.Client, cb *completions, values ...string) {
	for _, v := range values {
		cl.Send(recordOf(v), -1, cb)
	}
}

// A transaction: init gets epoch 1 from the coordinator; the records go
// as a transactional batch with the transactional.id under it; commit
// flushes them first, then EndTxn(commit), whose answer carries epoch 2,
// under which the next transaction's sequences start from 0.
func TestTxnCommitBumpsTheEpoch(t *testing.T) {
	c := &txnCluster{pid: 42}
	w, cl, res := txnWorld(t, 1, c, func(cfg *producer.ClientConfig) { cfg.LingerMs = time.Hour })
	if pid, epoch := cl.ProducerIDAndEpoch(); pid != 42 || epoch != 1 {
		t.Fatalf("producer id and epoch %d/%d after init, want 42/1", pid, epoch)
	}
	if !cl.BeginTransaction() {
		t.Fatal("beginTransaction refused in READY")
	}
	cb := &completions{}
	sendN(cl, cb, "a", "b", "c")
	w.RunUntil(2 * time.Second)
	if len(c.produced) != 0 {
		t.Fatalf("a batch went before its linger (an hour) or the commit: %+v", c.produced)
	}
	cl.CommitTransaction()
	w.RunUntil(3 * time.Second)
	if got := res.take(); len(got) != 1 || got[0].op != producer.TxnOpCommit || got[0].outcome != history.OK {
		t.Fatalf("commit: %v, want ok", got)
	}
	if len(c.produced) != 1 || len(c.ends) != 1 {
		t.Fatalf("produced %+v, EndTxn %+v: want one batch, then one EndTxn", c.produced, c.ends)
	}
	if b := c.produced[0]; b.txnID != "tx-0" || !b.transactional || b.pid != 42 || b.epoch != 1 || b.seq != 0 || b.n != 3 {
		t.Fatalf("batch %+v: want transactional, tx-0, 42/1 from sequence 0, 3 records", b)
	}
	if e := c.ends[0]; !e.commit || e.epoch != 1 {
		t.Fatalf("EndTxn %+v: want commit with epoch 1", e)
	}
	for i, tp := range cb.types {
		if tp != history.OK {
			t.Fatalf("send %s: %s, want ok", cb.values[i], tp)
		}
	}
	if pid, epoch := cl.ProducerIDAndEpoch(); pid != 42 || epoch != 2 || cl.TxnState() != producer.TxnReady {
		t.Fatalf("after the commit: %d/%d in %s, want 42/2 READY", pid, epoch, cl.TxnState())
	}
	cl.BeginTransaction()
	sendN(cl, cb, "d")
	cl.CommitTransaction()
	w.RunUntil(4 * time.Second)
	if b := c.produced[len(c.produced)-1]; b.epoch != 2 || b.seq != 0 {
		t.Fatalf("the next transaction's batch %+v: want epoch 2 from sequence 0", b)
	}
	if got := res.take(); len(got) != 1 || got[0].outcome != history.OK {
		t.Fatalf("second commit: %v", got)
	}
	// An empty transaction ends locally: no EndTxn, no bump.
	cl.BeginTransaction()
	cl.CommitTransaction()
	w.RunUntil(5 * time.Second)
	if got := res.take(); len(got) != 1 || got[0].outcome != history.OK || len(c.ends) != 2 {
		t.Fatalf("empty commit: %v, %d EndTxn (want ok, still 2)", got, len(c.ends))
	}
}

// A send outside a transaction fails at once.
func TestTxnSendOutsideATransactionFails(t *testing.T) {
	c := &txnCluster{pid: 1}
	w, cl, _ := txnWorld(t, 1, c, nil)
	cb := &completions{}
	sendN(cl, cb, "x")
	w.RunUntil(2 * time.Second)
	if len(cb.types) != 1 || cb.types[0] != history.Fail || len(c.produced) != 0 {
		t.Fatalf("send before beginTransaction: %v, produced %+v; want fail, nothing sent", cb.types, c.produced)
	}
}

// Abort drops the batches not yet drained (they fail) and sends
// EndTxn(abort); its answer bumps the epoch.
func TestTxnAbortDropsUndrainedBatches(t *testing.T) {
	c := &txnCluster{pid: 5}
	w, cl, res := txnWorld(t, 1, c, func(cfg *producer.ClientConfig) { cfg.LingerMs = time.Hour })
	cl.BeginTransaction()
	cb := &completions{}
	sendN(cl, cb, "a", "b")
	cl.AbortTransaction()
	w.RunUntil(2 * time.Second)
	if got := res.take(); len(got) != 1 || got[0] != (txnResult{producer.TxnOpAbort, history.OK, ""}) {
		t.Fatalf("abort: %v, want ok", got)
	}
	if len(c.produced) != 0 || len(c.ends) != 1 || c.ends[0].commit {
		t.Fatalf("produced %+v, EndTxn %+v: want nothing produced, one EndTxn(abort)", c.produced, c.ends)
	}
	if len(cb.types) != 2 || cb.types[0] != history.Fail || cb.types[1] != history.Fail {
		t.Fatalf("the aborted sends ended %v, want fail, fail", cb.types)
	}
	if _, epoch := cl.ProducerIDAndEpoch(); epoch != 2 || cl.TxnState() != producer.TxnReady {
		t.Fatalf("after the abort: epoch %d in %s, want 2 READY", epoch, cl.TxnState())
	}
}

// A batch that fails makes the transaction abortable: the commit fails
// without an EndTxn(commit), and only an abort gets the producer back to
// READY, under the epoch the abort's answer gives.
func TestTxnAbortableErrorFailsTheCommit(t *testing.T) {
	c := &txnCluster{pid: 9, produceErrs: []proto.ErrorCode{proto.TransactionAbortable}}
	w, cl, res := txnWorld(t, 1, c, nil)
	cl.BeginTransaction()
	cb := &completions{}
	sendN(cl, cb, "a")
	w.RunUntil(2 * time.Second)
	if cl.TxnState() != producer.TxnAbortableError || len(cb.types) != 1 || cb.types[0] != history.Fail {
		t.Fatalf("after TRANSACTION_ABORTABLE: %s, send %v; want ABORTABLE_ERROR, fail", cl.TxnState(), cb.types)
	}
	sendN(cl, cb, "b")
	if len(cb.types) != 2 || cb.types[1] != history.Fail {
		t.Fatalf("a send in ABORTABLE_ERROR: %v, want fail at once", cb.types)
	}
	cl.CommitTransaction()
	if got := res.take(); len(got) != 1 || got[0].op != producer.TxnOpCommit || got[0].outcome != history.Fail {
		t.Fatalf("commit in ABORTABLE_ERROR: %v, want fail", got)
	}
	cl.AbortTransaction()
	w.RunUntil(3 * time.Second)
	if got := res.take(); len(got) != 1 || got[0].op != producer.TxnOpAbort || got[0].outcome != history.OK {
		t.Fatalf("abort: %v, want ok", got)
	}
	if len(c.ends) != 1 || c.ends[0].commit {
		t.Fatalf("EndTxn %+v: want only the abort", c.ends)
	}
	if _, epoch := cl.ProducerIDAndEpoch(); epoch != 2 || cl.TxnState() != producer.TxnReady {
		t.Fatalf("after the abort: epoch %d in %s, want 2 READY", epoch, cl.TxnState())
	}
	cl.BeginTransaction()
	sendN(cl, cb, "c")
	cl.CommitTransaction()
	w.RunUntil(4 * time.Second)
	if got := res.take(); len(got) != 1 || got[0].outcome != history.OK {
		t.Fatalf("the next transaction's commit: %v, want ok", got)
	}
}

// Another instance of the transactional.id took a new epoch: the produce
// is answered INVALID_PRODUCER_EPOCH, which is abortable (KIP-588's
// InvalidProducerEpochException); the application aborts, the abort's
// EndTxn is answered PRODUCER_FENCED: fatal, nothing more is sent, and
// every later call fails.
func TestTxnFencedIsFatal(t *testing.T) {
	c := &txnCluster{pid: 3}
	w, cl, res := txnWorld(t, 1, c, nil)
	cl.BeginTransaction()
	c.epoch++ // a new instance's InitProducerId
	cb := &completions{}
	sendN(cl, cb, "a")
	w.RunUntil(2 * time.Second)
	if cl.TxnState() != producer.TxnAbortableError || cl.TxnError() != "INVALID_PRODUCER_EPOCH" {
		t.Fatalf("state %s (%s), want ABORTABLE_ERROR (INVALID_PRODUCER_EPOCH)", cl.TxnState(), cl.TxnError())
	}
	if len(cb.types) != 1 || cb.types[0] != history.Fail {
		t.Fatalf("the fenced send ended %v, want fail", cb.types)
	}
	cl.AbortTransaction()
	w.RunUntil(4 * time.Second)
	if cl.TxnState() != producer.TxnFatalError || cl.TxnError() != "PRODUCER_FENCED" {
		t.Fatalf("after the abort: state %s (%s), want FATAL_ERROR (PRODUCER_FENCED)", cl.TxnState(), cl.TxnError())
	}
	if got := res.take(); len(got) != 1 || got[0].outcome != history.Fail {
		t.Fatalf("the fenced abort: %v, want fail", got)
	}
	cl.CommitTransaction()
	cl.AbortTransaction()
	if got := res.take(); len(got) != 2 || got[0].outcome != history.Fail || got[1].outcome != history.Fail {
		t.Fatalf("commit and abort when fenced: %v, want fail, fail", got)
	}
	n, e := len(c.produced), len(c.ends)
	sendN(cl, cb, "b")
	w.RunUntil(6 * time.Second)
	if len(c.produced) != n || len(c.ends) != e || cb.types[1] != history.Fail {
		t.Fatalf("a fenced producer sent: %d batches, %d EndTxn", len(c.produced)-n, len(c.ends)-e)
	}
}

// Fenced while committing (the EndTxn is answered PRODUCER_FENCED): the
// commit's outcome is unknown, as an earlier attempt may have been written.
func TestTxnFencedDuringCommitIsUnknown(t *testing.T) {
	c := &txnCluster{pid: 3, endErrs: []proto.ErrorCode{proto.ConcurrentTransactions, proto.ProducerFenced}}
	w, cl, res := txnWorld(t, 1, c, nil)
	cl.BeginTransaction()
	sendN(cl, &completions{}, "a")
	cl.CommitTransaction()
	w.RunUntil(3 * time.Second)
	if got := res.take(); len(got) != 1 || got[0].op != producer.TxnOpCommit || got[0].outcome != history.Info || cl.TxnState() != producer.TxnFatalError {
		t.Fatalf("commit answered CONCURRENT_TRANSACTIONS then PRODUCER_FENCED: %v in %s, want info, FATAL_ERROR", got, cl.TxnState())
	}
	if len(c.ends) != 2 {
		t.Fatalf("%d EndTxn, want 2 (CONCURRENT_TRANSACTIONS is retried)", len(c.ends))
	}
}

// The coordinator moves while the commit is under way: EndTxn is answered
// NOT_COORDINATOR, the producer finds the coordinator again and sends it
// there.
func TestTxnEndTxnFollowsTheCoordinator(t *testing.T) {
	c := &txnCluster{pid: 8}
	w, cl, res := txnWorld(t, 2, c, nil)
	cl.BeginTransaction()
	sendN(cl, &completions{}, "a")
	w.RunUntil(1100 * time.Millisecond)
	c.coordinator = 1
	cl.CommitTransaction()
	w.RunUntil(3 * time.Second)
	if got := res.take(); len(got) != 1 || got[0].outcome != history.OK {
		t.Fatalf("commit: %v, want ok", got)
	}
	if len(c.ends) != 2 || c.ends[0].node != 0 || c.ends[1].node != 1 {
		t.Fatalf("EndTxn went to %+v, want broker 1 (NOT_COORDINATOR) then broker 2", c.ends)
	}
	if _, epoch := cl.ProducerIDAndEpoch(); epoch != 2 {
		t.Fatalf("epoch %d after the commit, want 2", epoch)
	}
}

// InitProducerId is retried while the coordinator loads or has a
// transaction of the id still ending.
func TestTxnInitRetries(t *testing.T) {
	c := &txnCluster{pid: 4, initErrs: []proto.ErrorCode{proto.CoordinatorLoadInProgress, proto.ConcurrentTransactions}}
	_, cl, _ := txnWorld(t, 1, c, nil)
	if _, epoch := cl.ProducerIDAndEpoch(); epoch != 1 || c.inits != 1 {
		t.Fatalf("epoch %d after %d grants, want 1", epoch, c.inits)
	}
}

// sendOffsetsToTransaction: a TxnOffsetCommit to the group coordinator
// with the producer's id and epoch and the member's generation, retried on
// COORDINATOR_LOAD_IN_PROGRESS; a fenced member makes it fail and the
// transaction abortable.
func TestTxnSendOffsets(t *testing.T) {
	c := &txnCluster{pid: 6, offsetErrs: []proto.ErrorCode{proto.CoordinatorLoadInProgress, proto.None, proto.IllegalGeneration}}
	w, cl, res := txnWorld(t, 1, c, nil)
	cl.BeginTransaction()
	g := producer.GroupMetadata{GroupID: "billing", GenerationIDOrMemberEpoch: 3, MemberID: "m-1"}
	offs := []proto.OffsetCommitPartition{{TopicPartition: proto.TopicPartition{Topic: "orders", Partition: 0}, CommittedOffset: 17, CommittedLeaderEpoch: -1}}
	cl.SendOffsetsToTransaction(offs, g)
	w.RunUntil(2 * time.Second)
	if got := res.take(); len(got) != 1 || got[0] != (txnResult{producer.TxnOpSendOffsets, history.OK, ""}) {
		t.Fatalf("sendOffsetsToTransaction: %v, want ok", got)
	}
	if len(c.offsets) != 2 {
		t.Fatalf("%d TxnOffsetCommit, want 2 (one retried)", len(c.offsets))
	}
	if m := c.offsets[1]; m.TransactionalID != "tx-0" || m.GroupID != "billing" || m.ProducerID != 6 || m.ProducerEpoch != 1 ||
		m.GenerationIDOrMemberEpoch != 3 || m.MemberID != "m-1" || len(m.Partitions) != 1 || m.Partitions[0].CommittedOffset != 17 {
		t.Fatalf("TxnOffsetCommit %+v", m)
	}
	cl.CommitTransaction()
	w.RunUntil(3 * time.Second)
	if got := res.take(); len(got) != 1 || got[0].outcome != history.OK || len(c.ends) != 1 {
		t.Fatalf("commit of the offsets-only transaction: %v, %d EndTxn; want ok, 1", got, len(c.ends))
	}
	cl.BeginTransaction()
	cl.SendOffsetsToTransaction(offs, g)
	w.RunUntil(4 * time.Second)
	if got := res.take(); len(got) != 1 || got[0].outcome != history.Fail || cl.TxnState() != producer.TxnAbortableError {
		t.Fatalf("TxnOffsetCommit of a stale generation: %v in %s, want fail, ABORTABLE_ERROR", got, cl.TxnState())
	}
}

func recordOf(v string) record.Record { return record.Record{Value: v} }

// The transactional workload: each tick a transaction of 1..4 records,
// committed or aborted (a quarter of them); the history has txn-begin,
// sends carrying the transactional_id, producer id and epoch, and each
// commit's or abort's completion lists its sends with their offsets.
func TestTxnWorkloadHistory(t *testing.T) {
	c := &txnCluster{pid: 11}
	w := sim.NewWorld(sim.DefaultOptions(7))
	b := &txnBroker{c: c}
	c.nodes = append(c.nodes, w.AddNode(sim.NodeSpec{Name: "broker-1", Role: "broker", New: func() sim.Node { return b }}))
	rec := history.NewRecorder(w.Now)
	cfg := producer.DefaultConfig("p-0", "orders")
	cfg.Brokers, cfg.Recorder, cfg.TransactionalID = c.nodes, rec, "tx-0"
	cfg.Rate, cfg.Keys = 20, 5
	cfg.Transactions = &producer.TxnWorkload{RecordsMin: 1, RecordsMax: 4, Abort: 0.25}
	w.AddNode(sim.NodeSpec{Name: "p-0", Role: "producer", New: producer.New(cfg)})
	w.Start()
	w.RunUntil(10 * time.Second)

	var begins, commits, aborts int
	sent := map[string]history.Op{} // value -> its send's completion
	open := false
	for _, op := range rec.Ops() {
		x := op.Value.Ext
		switch op.F {
		case history.FSend:
			if x == nil || x.TransactionalID != "tx-0" || x.Producer == nil || x.Producer.ID != 11 {
				t.Fatalf("send %v without its transaction's fields", op)
			}
			if !open {
				t.Fatalf("send %v outside a transaction", op)
			}
			if op.Type != history.Invoke {
				sent[op.Value.Value] = op
			}
		case history.FTxnBegin:
			if op.Type == history.Invoke {
				if open {
					t.Fatalf("txn-begin %v while a transaction is open", op)
				}
				begins++
				open = true
			}
		case history.FTxnCommit, history.FTxnAbort:
			if x == nil || x.TransactionalID != "tx-0" {
				t.Fatalf("%v without its transactional_id", op)
			}
			if op.Type == history.Invoke {
				continue
			}
			if op.Type != history.OK {
				t.Fatalf("%v: want ok (nothing fails here)", op)
			}
			open = false
			if op.F == history.FTxnCommit {
				commits++
			} else {
				aborts++
			}
			if len(x.Sends) < 1 || len(x.Sends) > 4 {
				t.Fatalf("%v lists %d sends, want 1..4", op, len(x.Sends))
			}
			for _, s := range x.Sends {
				so, ok := sent[s.Value]
				if !ok {
					t.Fatalf("%v lists %s, whose send did not complete before", op, s.Value)
				}
				if so.Type == history.OK && (s.Offset != so.Value.Offset || s.Partition != 0) {
					t.Fatalf("%v lists %+v, its send completed at %d", op, s, so.Value.Offset)
				}
				if op.F == history.FTxnCommit && so.Type != history.OK {
					t.Fatalf("committed %v with a send that ended %s", op, so.Type)
				}
				if so.Value.Ext.Producer.Epoch != int32(begins) {
					t.Fatalf("send %s of transaction %d went with epoch %d, want %d (one bump per EndTxn)", s.Value, begins, so.Value.Ext.Producer.Epoch, begins)
				}
			}
		}
	}
	if begins < 100 || aborts < begins/8 || aborts > begins/2 || commits+aborts < begins-1 {
		t.Fatalf("%d transactions begun, %d committed, %d aborted", begins, commits, aborts)
	}
	// The checker reads the history as the workload meant it.
	r := checker.Check(rec.Ops(), checker.Config{})
	if st := r.Stats; st.TxnCommitted != commits || st.TxnAborted != aborts || st.TxnIndeterminate != 0 || st.TxnNeverCommitted > 1 || r.Violations != 0 {
		t.Fatalf("the checker saw %d committed, %d aborted, %d indeterminate, %d never committed, %d violations; want %d, %d, 0, at most 1 (open at the end), 0",
			st.TxnCommitted, st.TxnAborted, st.TxnIndeterminate, st.TxnNeverCommitted, r.Violations, commits, aborts)
	}
}

// The workload meets an abortable error (a batch answered
// TRANSACTION_ABORTABLE): that transaction's commit fails, it is aborted
// without a second end in the history, and the next ones commit. Then
// another instance fences it: its commit fails and it begins no more.
func TestTxnWorkloadAbortableThenFenced(t *testing.T) {
	c := &txnCluster{pid: 2, produceErrs: []proto.ErrorCode{proto.None, proto.TransactionAbortable}}
	w := sim.NewWorld(sim.DefaultOptions(3))
	b := &txnBroker{c: c}
	c.nodes = append(c.nodes, w.AddNode(sim.NodeSpec{Name: "broker-1", Role: "broker", New: func() sim.Node { return b }}))
	rec := history.NewRecorder(w.Now)
	cfg := producer.DefaultConfig("p-0", "orders")
	cfg.Brokers, cfg.Recorder, cfg.TransactionalID = c.nodes, rec, "tx-0"
	cfg.Rate = 10
	cfg.Transactions = &producer.TxnWorkload{RecordsMin: 1, RecordsMax: 1}
	pid := w.AddNode(sim.NodeSpec{Name: "p-0", Role: "producer", New: producer.New(cfg)})
	w.Start()
	w.RunUntil(3 * time.Second)
	c.epoch += 5 // another instance's InitProducerId
	w.RunUntil(6 * time.Second)

	var ends []history.Op
	begins, beginsAfterFence := 0, 0
	for _, op := range rec.Ops() {
		switch {
		case op.F == history.FTxnBegin && op.Type == history.Invoke:
			begins++
			if op.Time > int64(3*time.Second) {
				beginsAfterFence++
			}
		case (op.F == history.FTxnCommit || op.F == history.FTxnAbort) && op.Type != history.Invoke:
			ends = append(ends, op)
		}
	}
	if len(ends) < 5 || ends[0].Type != history.OK || ends[1].Type != history.Fail || ends[1].F != history.FTxnCommit || ends[1].Value.Error != "TRANSACTION_ABORTABLE" {
		t.Fatalf("ends %v: want ok, then a commit failed with TRANSACTION_ABORTABLE, then more", ends)
	}
	if ends[2].Type != history.OK || ends[2].F != history.FTxnCommit {
		t.Fatalf("after the aborted transaction: %v, want the next commit ok", ends[2])
	}
	// The fenced transaction's produce is refused (INVALID_PRODUCER_EPOCH,
	// abortable): its commit fails, and the abort that follows is fenced.
	last := ends[len(ends)-1]
	if last.F != history.FTxnCommit || last.Type == history.OK || last.Value.Error != "INVALID_PRODUCER_EPOCH" || beginsAfterFence > 1 {
		t.Fatalf("fenced: last end %v, %d transactions begun after the fence; want a commit not ok with INVALID_PRODUCER_EPOCH, at most one begun", last, beginsAfterFence)
	}
	if st := w.Node(pid).(*producer.Producer).TxnState(); st != producer.TxnFatalError {
		t.Fatalf("state %s, want FATAL_ERROR", st)
	}
	if len(ends) != begins {
		t.Fatalf("%d transactions begun, %d ended: want each ended once", begins, len(ends))
	}
}

// A transactional instance that restarts initializes again: the
// coordinator gives it a new epoch (fencing its former self), and it goes
// on with new transactions, under the coordinator's latest epoch.
func TestTxnWorkloadRestartInitializesAgain(t *testing.T) {
	c := &txnCluster{pid: 21}
	w := sim.NewWorld(sim.DefaultOptions(5))
	b := &txnBroker{c: c}
	c.nodes = append(c.nodes, w.AddNode(sim.NodeSpec{Name: "broker-1", Role: "broker", New: func() sim.Node { return b }}))
	rec := history.NewRecorder(w.Now)
	cfg := producer.DefaultConfig("p-0", "orders")
	cfg.Brokers, cfg.Recorder, cfg.TransactionalID = c.nodes, rec, "tx-0"
	cfg.Rate = 10
	cfg.Transactions = &producer.TxnWorkload{RecordsMin: 2, RecordsMax: 2}
	pid := w.AddNode(sim.NodeSpec{Name: "p-0", Role: "producer", New: producer.New(cfg)})
	w.Start()
	w.RunUntil(2 * time.Second)
	w.Crash(pid, false)
	w.RunUntil(2100 * time.Millisecond)
	initsBefore := c.inits
	w.Restart(pid)
	w.RunUntil(4 * time.Second)
	if c.inits != initsBefore+1 || initsBefore != 1 {
		t.Fatalf("InitProducerId granted %d times before the restart, %d after; want 1, then 1 more", initsBefore, c.inits-initsBefore)
	}
	epochNow := c.epoch
	var lastEnd history.Op
	for _, op := range rec.Ops() {
		if op.F == history.FTxnCommit && op.Type == history.OK {
			lastEnd = op
		}
	}
	if lastEnd.Time < int64(2100*time.Millisecond) {
		t.Fatalf("no transaction committed after the restart (last %v)", lastEnd)
	}
	if pid2, epoch := w.Node(pid).(*producer.Producer).ProducerIDAndEpoch(); pid2 != 21 || epoch != epochNow {
		t.Fatalf("the restarted instance writes with %d/%d, want 21/%d", pid2, epoch, epochNow)
	}
}

// The coordinator lost the transactional id's mapping to the producer id
// (its __transaction_state lost it): the produce is answered
// INVALID_PRODUCER_ID_MAPPING. The abort does not send EndTxn, which the
// coordinator would refuse the same way for ever, but InitProducerId with
// the id and epoch (TransactionManager.beginCompletingTransaction), whose
// answer maps the id again; the abort ends there and the producer goes on.
// The same when the commit's EndTxn is what hears it.
func TestTxnInvalidProducerIDMappingAbortsThroughInitProducerID(t *testing.T) {
	for _, where := range []string{"produce", "end"} {
		t.Run(where, func(t *testing.T) {
			c := &txnCluster{pid: 9}
			if where == "produce" {
				c.produceErrs = []proto.ErrorCode{proto.InvalidProducerIDMapping}
			} else {
				c.endErrs = []proto.ErrorCode{proto.InvalidProducerIDMapping}
			}
			w, cl, res := txnWorld(t, 1, c, nil)
			cl.BeginTransaction()
			cb := &completions{}
			sendN(cl, cb, "a")
			if where == "end" {
				cl.CommitTransaction()
			}
			w.RunUntil(2 * time.Second)
			if cl.TxnState() != producer.TxnAbortableError {
				t.Fatalf("after INVALID_PRODUCER_ID_MAPPING: %s, want ABORTABLE_ERROR", cl.TxnState())
			}
			ends := len(c.ends)
			res.take()
			cl.AbortTransaction()
			w.RunUntil(3 * time.Second)
			if got := res.take(); len(got) != 1 || got[0].op != producer.TxnOpAbort || got[0].outcome != history.OK {
				t.Fatalf("abort: %v, want ok", got)
			}
			if len(c.ends) != ends {
				t.Fatalf("EndTxn sent on abort: %+v", c.ends[ends:])
			}
			if last := c.initAsks[len(c.initAsks)-1]; len(c.initAsks) != 2 || last.ProducerID != 9 || last.ProducerEpoch != 1 {
				t.Fatalf("InitProducerId requests %+v: want the init, then one naming producer 9 epoch 1", c.initAsks)
			}
			if _, epoch := cl.ProducerIDAndEpoch(); epoch != 2 || cl.TxnState() != producer.TxnReady {
				t.Fatalf("after the abort: epoch %d in %s, want 2 READY", epoch, cl.TxnState())
			}
			cl.BeginTransaction()
			sendN(cl, cb, "b")
			cl.CommitTransaction()
			w.RunUntil(4 * time.Second)
			if got := res.take(); len(got) != 1 || got[0].op != producer.TxnOpCommit || got[0].outcome != history.OK {
				t.Fatalf("the next transaction's commit: %v, want ok", got)
			}
		})
	}
}

// A TxnOffsetCommit answered INVALID_PRODUCER_ID_MAPPING: the application
// that aborts as soon as it hears the failure (as a stream processor does)
// aborts through InitProducerId too, the error being known before the
// failure is told.
func TestTxnInvalidProducerIDMappingOnOffsetsAbortsThroughInitProducerID(t *testing.T) {
	c := &txnCluster{pid: 9, offsetErrs: []proto.ErrorCode{proto.InvalidProducerIDMapping}}
	w, cl, res := txnWorld(t, 1, c, nil)
	res.then = func(r txnResult) {
		if r.op == producer.TxnOpSendOffsets && r.outcome == history.Fail {
			cl.AbortTransaction()
		}
	}
	cl.BeginTransaction()
	g := producer.GroupMetadata{GroupID: "billing", GenerationIDOrMemberEpoch: 3, MemberID: "m-1"}
	cl.SendOffsetsToTransaction([]proto.OffsetCommitPartition{{TopicPartition: proto.TopicPartition{Topic: "orders", Partition: 0}, CommittedOffset: 17, CommittedLeaderEpoch: -1}}, g)
	w.RunUntil(2 * time.Second)
	got := res.take()
	if len(got) != 2 || got[0].op != producer.TxnOpSendOffsets || got[0].outcome != history.Fail ||
		got[1].op != producer.TxnOpAbort || got[1].outcome != history.OK {
		t.Fatalf("results %v: want the offsets failed, then the abort ok", got)
	}
	if len(c.ends) != 0 || len(c.initAsks) != 2 || c.initAsks[1].ProducerID != 9 {
		t.Fatalf("EndTxn %+v, InitProducerId %+v: want no EndTxn and one InitProducerId naming producer 9", c.ends, c.initAsks)
	}
	if cl.TxnState() != producer.TxnReady {
		t.Fatalf("after the abort: %s, want READY", cl.TxnState())
	}
}

// A transactional producer probed before initTransactions has answered
// (a new instance, created after the heal in place of a fenced one) holds
// its probe transaction until it is ready: meanwhile its probe counts as
// pending, not as nothing to wait for; then the probe goes and is
// acknowledged. One whose initTransactions fails (fenced) fails its probe
// at once.
func TestTxnProbeWaitsForInitTransactions(t *testing.T) {
	for _, fenced := range []bool{false, true} {
		c := &txnCluster{pid: 4}
		if fenced {
			c.initErrs = []proto.ErrorCode{proto.ProducerFenced}
		}
		w := sim.NewWorld(sim.DefaultOptions(7))
		b := &txnBroker{c: c}
		c.nodes = append(c.nodes, w.AddNode(sim.NodeSpec{Name: "broker-1", Role: "broker", New: func() sim.Node { return b }}))
		cfg := producer.DefaultConfig("p-0", "orders")
		cfg.Brokers, cfg.Recorder, cfg.TransactionalID = c.nodes, history.NewRecorder(w.Now), "tx-0"
		cfg.Transactions = &producer.TxnWorkload{RecordsMin: 1, RecordsMax: 1}
		pid := w.AddNode(sim.NodeSpec{Name: "p-0", Role: "producer", New: producer.New(cfg)})
		w.Start()
		w.RunUntil(0)
		p := w.Node(pid).(*producer.Producer)
		p.Probe()
		if acked, failed, unknown, pending := p.ProbeOutcome(); acked+failed+unknown != 0 || pending != 1 {
			t.Fatalf("fenced %v: probed before initTransactions answered: %d acked, %d failed, %d unknown, %d pending; want the probe pending", fenced, acked, failed, unknown, pending)
		}
		w.RunUntil(time.Second)
		acked, failed, unknown, pending := p.ProbeOutcome()
		if want := [4]int{1, 0, 0, 0}; fenced && [4]int{acked, failed, unknown, pending} != [4]int{0, 1, 0, 0} ||
			!fenced && [4]int{acked, failed, unknown, pending} != want {
			t.Fatalf("fenced %v: after initTransactions: %d acked, %d failed, %d unknown, %d pending", fenced, acked, failed, unknown, pending)
		}
	}
}
