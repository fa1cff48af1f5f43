// Package processor is a read-process-write stream processor instance, as
// a Kafka Streams application runs one (StreamThread with its TaskManager
// and StreamsProducer, processing.guarantee exactly_once_v2 or
// at_least_once): one process that is a consumer group member (a
// model/reader Reader) and a producer (a model/producer Client), crashing,
// pausing and restarting together. Each record the member polls is
// processed (a process operation) and produces one output record, keyed as
// the input, to the output topic; the send carries the input as its source.
//
// Exactly-once: the input is read read_committed; a transaction begins
// before the first record processed after a commit (beginTransaction is
// local: the first send makes the coordinator know it); every
// commit.interval.ms, and before partitions are revoked, the processed
// positions go to the transaction (sendOffsetsToTransaction, with the
// member's ConsumerGroupMetadata) and the transaction commits; partitions
// lost (the member fenced, or out of the group) abort it instead (Streams'
// handleLostAll closes the tasks dirty). An abortable failure aborts it
// and puts the positions back to the group's committed offsets (Streams'
// TaskCorruptedException); a fenced producer is created again and
// initializes its transactions anew (Streams' TaskMigrated handling
// recreates the StreamsProducer). At-least-once: the outputs go
// through the idempotent producer, and every commit.interval.ms the
// application waits for every output's answer (flush), then commits the
// positions with OffsetCommit; a failed output puts the positions back
// instead.
//
// A processor with no output topic is a consumer group member that commits
// its offsets inside transactions (commit: transactional): the same node,
// whose transactions hold its offset commits (TxnOffsetCommit) and no
// record. Kafka has no client for it; an application pairs a KafkaConsumer
// with a transactional KafkaProducer of its own and calls
// sendOffsetsToTransaction after processing each poll's records
// (commitTransaction every poll: CommitInterval 0).
//
// The node composes the two halves over demultiplexing environments:
// timers are tagged with their half, answers go by type, and those both
// halves ask for (Metadata, FindCoordinator) by the correlation id's
// channel bit (proto.ProducerChannel), which also keeps the producer's
// requests on a broker connection of their own.
package processor

import (
	"strconv"
	"time"

	"kafkasim/history"
	"kafkasim/model/producer"
	"kafkasim/model/proto"
	"kafkasim/model/reader"
	"kafkasim/model/record"
	"kafkasim/sim"
)

// Config is a processor instance's configuration.
type Config struct {
	// Name is the instance's name ("etl-0"), its process in the history.
	Name string
	// Reader is the consumer half (its Group set; Processor is filled in).
	Reader reader.Config
	// Producer is the producer half (Topic is the output topic, "" for
	// none: the transactions commit offsets only); a TransactionalID makes
	// the processor exactly-once.
	Producer producer.ClientConfig
	// CommitInterval is commit.interval.ms.
	CommitInterval time.Duration
	Recorder       *history.Recorder
}

// ExactlyOnce reports whether the processor runs exactly_once_v2.
func (c Config) ExactlyOnce() bool { return c.Producer.TransactionalID != "" }

// producerGenerationStep separates the correlation ids of the producers one
// incarnation creates (a fenced one is created again).
const producerGenerationStep = 1 << 24

// retryInit tags the timer that creates the producer again after its
// InitTransactions failed.
const retryInit = 255

// Node is one processor instance.
type Node struct {
	cfg  Config
	env  sim.Env
	hist history.Proc

	r *reader.Reader
	p *producer.Client
	// old is the producer before the current one (fenced), still handed
	// its timers so that it fails what it had pending; pgen numbers them.
	old    *producer.Client
	oldTag uint8
	pgen   uint8

	seq int
	// sources are the outputs sent and not yet answered, by value.
	sources map[string]history.Source
	// unanswered counts them; failed: an output failed since the last
	// commit (at-least-once: the positions go back).
	unanswered int
	failed     bool
	// flushed runs once every output is answered (a commit waits).
	flushed func()

	lastCommit time.Duration
	// Exactly-once: ready (InitTransactions done), the open transaction
	// (inTxn), its sends, and the commit under way.
	ready   bool
	inTxn   bool
	sends   []history.Send
	commit  *txnCommit
	started bool // the consumer half started
	// busy: a commit is under way (either guarantee); waiting are the
	// commits asked for meanwhile (a revocation's, as the member leaves),
	// run in turn once it ends: Streams commits on its one thread, never
	// two at once.
	busy    bool
	waiting []func()
}

// txnCommit is a transaction's closing: its offsets, the value its
// operations carry, and what the member waits on.
type txnCommit struct {
	value   history.Value
	offsets []proto.OffsetCommitPartition
	done    func(reset bool)
	// silent: the commit failed and the abort that follows is not
	// recorded; aborting: an abort is under way.
	silent bool
	// lost: the abort of the member's onPartitionsLost, recorded as a
	// txn-abort of its own.
	lost bool
}

// New returns a constructor for a processor instance.
func New(cfg Config) func() sim.Node { return func() sim.Node { return &Node{cfg: cfg} } }

// half tags a timer with the half that set it.
type half struct {
	env  sim.Env
	tag  uint8 // 0: reader; 1+pgen: a producer
	node *Node
}

// htimer is a half's timer.
type htimer struct {
	tag uint8
	t   sim.Timer
}

// String is how the trace shows it.
func (t htimer) String() string {
	s := "?"
	if st, ok := t.t.(interface{ String() string }); ok {
		s = st.String()
	}
	return "processor.htimer {tag:" + strconv.Itoa(int(t.tag)) + " " + s + "}"
}

func (h *half) After(d time.Duration, t sim.Timer) sim.TimerID {
	return h.env.After(d, htimer{tag: h.tag, t: t})
}

// halfEnv is the environment one half sees: the node's, with its timers
// tagged.
type halfEnv struct {
	sim.Env
	h *half
}

func (e halfEnv) After(d time.Duration, t sim.Timer) sim.TimerID { return e.h.After(d, t) }

// Reader is the consumer half (for tests and reports), nil until it
// started (an exactly-once processor's starts once its producer is
// initialized).
func (n *Node) Reader() *reader.Reader {
	if !n.started {
		return nil
	}
	return n.r
}

// Producer is the current producer half.
func (n *Node) Producer() *producer.Client { return n.p }

// Start boots both halves: an exactly-once processor's member joins once
// its producer has initialized its transactions (Streams initializes a
// task's producer before it processes).
func (n *Node) Start(env sim.Env) {
	n.env = env
	if n.cfg.Recorder != nil {
		n.hist = n.cfg.Recorder.Proc(n.cfg.Name)
	}
	n.sources = map[string]history.Source{}
	rc := n.cfg.Reader
	rc.Name = n.cfg.Name
	rc.Recorder = n.cfg.Recorder
	// StreamThread polls with poll.ms (100 ms) while running, so that
	// its loop reaches maybeCommit on the commit interval when no input
	// arrives: a poll that waited for a fetch (3.5 s) held the open
	// transaction, and its outputs, that long.
	rc.PollTimeout = StreamsPollTimeout
	g := *rc.Group
	g.Processor = n
	rc.Group = &g
	n.r = reader.New(rc)().(*reader.Reader)
	n.lastCommit = env.Now()
	n.newProducer()
	if !n.cfg.ExactlyOnce() {
		n.startReader()
	}
}

// StreamsPollTimeout is Streams' poll.ms default (StreamsConfig.POLL_MS_CONFIG).
const StreamsPollTimeout = 100 * time.Millisecond

func (n *Node) startReader() {
	if n.started {
		return
	}
	n.started = true
	n.r.Start(halfEnv{Env: n.env, h: &half{env: n.env, tag: 0, node: n}})
}

// newProducer creates the producer half (again, after a fence).
func (n *Node) newProducer() {
	if n.p != nil {
		// Tags stay below retryInit; the ids of the producers created
		// last stay apart (64 generations).
		n.old, n.oldTag = n.p, 1+n.pgen
		n.pgen = (n.pgen + 1) % 200
	}
	pc := n.cfg.Producer
	pc.Name = n.cfg.Name
	pc.CorrelationOffset = proto.ProducerChannel + uint64(n.pgen%64)*producerGenerationStep
	n.p = producer.NewClient(pc)
	n.ready = false
	n.p.Start(halfEnv{Env: n.env, h: &half{env: n.env, tag: 1 + n.pgen, node: n}})
	if n.cfg.ExactlyOnce() {
		n.p.InitTransactions(n)
	}
}

// Stop closes the member (the process is being shut down).
func (n *Node) Stop() {
	if n.started {
		n.r.Stop()
	} else {
		n.env.Exit()
	}
}

// Deliver routes an answer to its half.
func (n *Node) Deliver(from sim.NodeID, m sim.Message) {
	switch m := m.(type) {
	case *proto.ProduceResponse, *proto.InitProducerIDResponse, *proto.EndTxnResponse, *proto.TxnOffsetCommitResponse:
		n.p.Deliver(from, m)
	case *proto.MetadataResponse:
		n.byChannel(from, m, m.CorrelationID)
	case *proto.FindCoordinatorResponse:
		n.byChannel(from, m, m.CorrelationID)
	case *sim.Disconnected:
		if n.started {
			n.r.Deliver(from, m)
		}
		n.p.Deliver(from, m)
	default:
		if n.started {
			n.r.Deliver(from, m)
		}
	}
}

func (n *Node) byChannel(from sim.NodeID, m sim.Message, corr uint64) {
	if proto.ChannelOf(corr) == 1 {
		n.p.Deliver(from, m)
	} else if n.started {
		n.r.Deliver(from, m)
	}
}

// Fire hands a timer to the half that set it.
func (n *Node) Fire(t sim.Timer) {
	ht, ok := t.(htimer)
	if !ok {
		return
	}
	switch {
	case ht.tag == 0:
		n.r.Fire(ht.t)
	case ht.tag == retryInit:
		n.newProducer()
	case ht.tag == 1+n.pgen:
		n.p.Fire(ht.t)
	case ht.tag == n.oldTag && n.old != nil:
		n.old.Fire(ht.t)
	}
}

// BeforeProcess begins the transaction the record's output goes in
// (reader.Processor).
func (n *Node) BeforeProcess() {
	if !n.cfg.ExactlyOnce() || n.inTxn || !n.ready || !n.p.BeginTransaction() {
		return
	}
	n.inTxn, n.sends = true, n.sends[:0]
	v := n.txnValue()
	n.record(history.Invoke, history.FTxnBegin, &v)
	v = n.txnValue()
	n.record(history.OK, history.FTxnBegin, &v)
}

func (n *Node) txnValue() history.Value {
	v := history.NoValue()
	x := v.X()
	x.TransactionalID = n.cfg.Producer.TransactionalID
	pid, epoch := n.p.ProducerIDAndEpoch()
	if pid >= 0 {
		x.Producer = &history.ProducerEpoch{ID: pid, Epoch: int32(epoch)}
	}
	return v
}

func (n *Node) record(t history.Type, f string, v *history.Value) {
	if n.cfg.Recorder == nil {
		return
	}
	if t == history.Invoke {
		n.hist.Invoke(f, v)
		return
	}
	n.hist.Complete(t, f, v)
}

// Output sends the output record of a processed input (reader.Processor);
// a processor with no output topic sends none.
func (n *Node) Output(in reader.Input) {
	if n.cfg.Producer.Topic == "" {
		return
	}
	n.seq++
	value := n.cfg.Name + ":" + strconv.Itoa(int(n.env.Incarnation())) + "." + strconv.Itoa(n.seq)
	src := history.Source{Topic: in.Topic, Partition: in.Partition, Offset: in.Offset}
	v := history.NoValue()
	v.Topic, v.Value, v.Key, v.HasKey = n.cfg.Producer.Topic, value, in.Key, in.HasKey
	n.sendExt(&v, src)
	if n.inTxn {
		n.sends = append(n.sends, history.Send{Topic: v.Topic, Key: v.Key, HasKey: v.HasKey, Value: value, Partition: -1, Offset: -1})
	}
	n.record(history.Invoke, history.FSend, &v)
	n.sources[value] = src
	n.unanswered++
	n.p.Send(record.Record{Key: in.Key, HasKey: in.HasKey, Value: value, Timestamp: n.env.Now().Milliseconds()}, -1, n)
}

func (n *Node) sendExt(v *history.Value, src history.Source) {
	x := v.X()
	s := src
	x.Source = &s
	if n.cfg.ExactlyOnce() {
		x.TransactionalID = n.cfg.Producer.TransactionalID
		pid, epoch := n.p.ProducerIDAndEpoch()
		x.Producer = &history.ProducerEpoch{ID: pid, Epoch: int32(epoch)}
	}
}

// OnCompletion records how an output's send ended (producer.Callback).
func (n *Node) OnCompletion(r *record.Record, m producer.RecordMetadata, t history.Type, why string) {
	src, ok := n.sources[r.Value]
	if !ok {
		return
	}
	delete(n.sources, r.Value)
	v := history.NoValue()
	v.Topic, v.Key, v.HasKey, v.Value = m.Topic, r.Key, r.HasKey, r.Value
	switch t {
	case history.OK:
		v.Partition, v.Offset = m.Partition, m.Offset
	default:
		v.Partition, v.Error = m.Partition, why
		n.failed = true
	}
	n.sendExt(&v, src)
	n.record(t, history.FSend, &v)
	for i := len(n.sends) - 1; i >= 0; i-- {
		if s := &n.sends[i]; s.Value == r.Value {
			s.Partition, s.Offset = v.Partition, v.Offset
			break
		}
	}
	n.unanswered--
	if n.unanswered == 0 && n.flushed != nil {
		f := n.flushed
		n.flushed = nil
		f()
	}
}

// flush runs then once every output sent has its answer (KafkaProducer.
// flush).
func (n *Node) flush(then func()) {
	if n.unanswered == 0 {
		then()
		return
	}
	n.flushed = then
}

// Commit closes the unit of work (reader.Processor): every
// commit.interval.ms, or at once before a revocation.
func (n *Node) Commit(pos []reader.Position, force bool, done func(reset bool)) {
	if n.busy {
		n.waiting = append(n.waiting, func() { n.Commit(pos, force, done) })
		return
	}
	if !force && n.env.Now() < n.lastCommit+n.cfg.CommitInterval {
		done(false)
		return
	}
	if !n.cfg.ExactlyOnce() {
		n.commitAtLeastOnce(pos, done)
		return
	}
	if !n.inTxn {
		n.lastCommit = n.env.Now()
		done(false)
		return
	}
	group, generation, memberID, instanceID := n.r.GroupMetadata()
	c := &txnCommit{done: done, value: n.txnValue()}
	x := c.value.X()
	x.Group, x.Generation, x.MemberID = group, generation, memberID
	x.Offsets = make(map[string]int64, len(pos))
	for _, p := range pos {
		c.offsets = append(c.offsets, proto.OffsetCommitPartition{TopicPartition: proto.TopicPartition{Topic: p.Topic, Partition: p.Partition}, CommittedOffset: p.Offset, CommittedLeaderEpoch: p.LeaderEpoch})
		x.Offsets[p.Topic+"-"+strconv.Itoa(int(p.Partition))] = p.Offset
	}
	n.commit, n.busy = c, true
	v := c.value
	n.record(history.Invoke, history.FTxnCommit, &v)
	if len(c.offsets) == 0 {
		n.p.CommitTransaction()
		return
	}
	n.p.SendOffsetsToTransaction(c.offsets, producer.GroupMetadata{GroupID: group, GenerationIDOrMemberEpoch: generation,
		MemberID: memberID, GroupInstanceID: instanceID})
}

// Lost is the member's onPartitionsLost (reader.Processor): Streams'
// StreamsRebalanceListener.onPartitionsLost runs TaskManager.handleLostAll,
// which closes the active tasks dirty rather than committing them, and
// under exactly-once RecordCollectorImpl.closeDirty aborts the open
// transaction (StreamsProducer.abortTransaction). What the member
// processed under the generation it lost must not commit: a member fenced
// with a transaction open gets its partitions back under a later member
// epoch, its positions from the committed offsets, and would otherwise
// process those records again into the same transaction and commit both
// outputs (fuzz seed 42333). done runs once the abort ended; a fenced
// producer is created again first (refence), as after a failed commit.
// At-least-once: the dirty close flushes the record collector
// (TaskManager.closeTaskDirty's prepareCommit) and commits nothing; an
// output that failed needs no reset, the partitions coming back at their
// committed offsets.
func (n *Node) Lost(done func()) {
	if n.busy {
		n.waiting = append(n.waiting, func() { n.Lost(done) })
		return
	}
	if !n.cfg.ExactlyOnce() {
		n.busy = true
		n.flush(func() {
			n.failed = false
			n.ended(func(bool) { done() }, false)
		})
		return
	}
	if !n.inTxn {
		done()
		return
	}
	c := &txnCommit{done: func(bool) { done() }, value: n.txnValue(), lost: true}
	n.commit, n.busy = c, true
	v := c.value
	n.record(history.Invoke, history.FTxnAbort, &v)
	n.p.AbortTransaction()
}

// commitAtLeastOnce flushes, then commits the positions (Streams'
// at_least_once commit: TaskManager.commit flushes the producer first).
// An output that failed puts the positions back instead.
func (n *Node) commitAtLeastOnce(pos []reader.Position, done func(reset bool)) {
	n.busy = true
	n.flush(func() {
		n.lastCommit = n.env.Now()
		if n.failed {
			n.failed = false
			n.ended(done, true)
			return
		}
		n.r.CommitSync(pos, func(bool) { n.ended(done, false) })
	})
}

// ended ends the commit under way with done(reset), then runs the next
// commit that waited for it.
func (n *Node) ended(done func(reset bool), reset bool) {
	n.busy = false
	done(reset)
	if !n.busy && len(n.waiting) > 0 {
		next := n.waiting[0]
		n.waiting = n.waiting[1:]
		next()
	}
}

// OnTxnResult goes on with the transaction's closing
// (producer.TxnCallback).
func (n *Node) OnTxnResult(op producer.TxnOp, outcome history.Type, why string) {
	switch op {
	case producer.TxnOpInit:
		if outcome == history.OK {
			n.ready = true
			n.startReader()
			if c := n.commit; c != nil && !c.silent {
				// A fenced producer's closing waited for its successor.
				n.commit = nil
				n.lastCommit = n.env.Now()
				n.ended(c.done, true)
			}
			return
		}
		// The coordinator refused: try again later with a new producer.
		n.env.After(n.cfg.Producer.RetryBackoff, htimer{tag: retryInit})
		return
	case producer.TxnOpSendOffsets:
		c := n.commit
		if c == nil {
			return
		}
		if outcome == history.OK {
			n.p.CommitTransaction()
			return
		}
		n.endFailed(c, history.Fail, why)
	case producer.TxnOpCommit:
		c := n.commit
		if c == nil {
			return
		}
		if outcome == history.OK {
			v := n.endValue(c)
			n.record(history.OK, history.FTxnCommit, &v)
			n.inTxn, n.commit = false, nil
			n.lastCommit = n.env.Now()
			n.ended(c.done, false)
			return
		}
		n.endFailed(c, outcome, why)
	case producer.TxnOpAbort:
		c := n.commit
		if c == nil {
			return
		}
		if c.lost {
			v := n.endValue(c)
			if outcome != history.OK {
				v.Error = why
			}
			n.record(outcome, history.FTxnAbort, &v)
		}
		n.inTxn, n.commit = false, nil
		n.lastCommit = n.env.Now()
		if outcome != history.OK {
			// Fenced, or an abort that failed (Streams' abortTransaction
			// throws: the thread is replaced, with a new producer that
			// initializes its transactions).
			n.refence(c)
			return
		}
		n.ended(c.done, true)
	}
}

// endValue is the transaction's end: its offsets and sends.
func (n *Node) endValue(c *txnCommit) history.Value {
	v := c.value
	x := *v.X()
	x.Sends = append([]history.Send{}, n.sends...)
	if pid, epoch := n.p.ProducerIDAndEpoch(); pid >= 0 {
		x.Producer = &history.ProducerEpoch{ID: pid, Epoch: int32(epoch)}
	}
	v.Ext = &x
	return v
}

// endFailed ends a transaction whose offsets or commit failed: the commit
// is recorded as it ended, then an abortable error aborts (unrecorded) and
// the positions go back; a fenced producer is created again.
func (n *Node) endFailed(c *txnCommit, outcome history.Type, why string) {
	v := n.endValue(c)
	v.Error = why
	n.record(outcome, history.FTxnCommit, &v)
	c.silent = true
	if n.p.TxnState() == producer.TxnAbortableError || n.p.TxnState() == producer.TxnInTransaction {
		n.p.AbortTransaction()
		return
	}
	n.inTxn, n.commit = false, nil
	n.refence(c)
}

// refence creates the producer again after it was fenced (or failed
// fatally); the member's positions go back once it is initialized.
func (n *Node) refence(c *txnCommit) {
	n.inTxn = false
	c.silent = false
	n.commit = c
	n.newProducer()
}
