// Package producer is Kafka's producer client as a state machine (Client):
// the default partitioner (murmur2 of the key, sticky for null keys), the
// record accumulator (batches per partition, linger.ms, batch.size, real
// gzip compression), the sender (one produce request per broker,
// max.in.flight.requests.per.connection, retries with exponential backoff,
// request.timeout.ms, delivery.timeout.ms), metadata refresh, and the
// idempotent producer (producer id, epoch, per-partition sequences, local
// epoch bump after an unresolved batch, KIP-360), and the transactional
// producer (txn.go: transaction version 2). A Producer is the node that
// runs a workload on a client: records sent at a rate, or transactions
// (txnworkload.go), and probes.
//
// Every send is recorded in the history: invoked when the application calls
// send, completed ok with its offset, fail when no attempt can have been
// written, info when one might have been.
package producer

import (
	"math"
	"strconv"
	"time"

	"kafkasim/history"
	"kafkasim/internal/corrlist"
	"kafkasim/internal/spare"
	"kafkasim/model/proto"
	"kafkasim/model/record"
	"kafkasim/sim"
)

// ClientConfig is a producer client's Kafka configuration.
type ClientConfig struct {
	// Name is the instance's name ("p-0"): its process in the history.
	Name string
	// Topic is the topic the client writes to.
	Topic string

	Acks              int16 // acks: -1 (all), 1, 0
	EnableIdempotence bool
	LingerMs          time.Duration
	BatchSize         int
	Compression       record.Compression
	Retries           int
	RetryBackoff      time.Duration
	RetryBackoffMax   time.Duration
	DeliveryTimeout   time.Duration
	RequestTimeout    time.Duration
	MaxInFlight       int
	MetadataMaxAge    time.Duration
	Brokers           []sim.NodeID // bootstrap.servers
	// TransactionalID makes the producer transactional (txn.go): it
	// forces enable.idempotence and acks=all (Kafka refuses a
	// transactional producer without them).
	TransactionalID string
	// TransactionTimeout is transaction.timeout.ms: how long the
	// coordinator lets a transaction stay open before it aborts it.
	TransactionTimeout time.Duration
	// CorrelationOffset is added to the incarnation's correlation base: a
	// stream processor's producer half counts its ids apart from its
	// consumer half's (proto.ProducerChannel), and a producer it creates
	// again after being fenced apart from the one before.
	CorrelationOffset uint64
}

// DefaultClientConfig has Kafka 4.x's producer defaults.
func DefaultClientConfig(name, topic string) ClientConfig {
	return ClientConfig{Name: name, Topic: topic, Acks: proto.AcksAll, EnableIdempotence: true, LingerMs: 5 * time.Millisecond,
		BatchSize: 16384, Retries: math.MaxInt32, RetryBackoff: 100 * time.Millisecond, RetryBackoffMax: time.Second,
		DeliveryTimeout: 120 * time.Second, RequestTimeout: 30 * time.Second, MaxInFlight: 5, MetadataMaxAge: 5 * time.Minute,
		TransactionTimeout: 60 * time.Second}
}

// LostRequestWait is the longest the producer waits on a request that gets
// no answer (its broker's machine went down, peers not told) before it
// tries again: request.timeout.ms, then at most retry.backoff.max.ms of
// backoff. A retry that succeeds needs nothing more (delivery.timeout.ms
// only bounds retries that keep failing).
func (c ClientConfig) LostRequestWait() time.Duration {
	return c.RequestTimeout + max(c.RetryBackoff, c.RetryBackoffMax)
}

// Callback is told how a send ended, once per record (Kafka's
// Callback.onCompletion): history.OK, written at m's offset; history.Fail,
// no attempt can have been written; history.Info, one may have been (acks=0:
// every send). why says what went wrong. r is the record as sent, valid
// only during the call (its batch is reused). A Callback's type must be
// comparable (a pointer is): a batch keeps one callback for records that
// share it.
type Callback interface {
	OnCompletion(r *record.Record, m RecordMetadata, outcome history.Type, why string)
}

// RecordMetadata is where a record went (Kafka's RecordMetadata): Partition
// is -1 when the record never got one, Offset -1 unless it was acknowledged.
type RecordMetadata struct {
	Topic     string
	Partition int32
	Offset    int64
}

// Client is one producer client (Kafka's KafkaProducer). Its owner, a node,
// starts it and hands it the node's messages and timers (Start, Deliver,
// Fire); the application sends with Send.
type Client struct {
	cfg ClientConfig
	env sim.Env

	// expireFloor: no queued batch was created before it, so none can
	// expire before expireFloor + delivery.timeout.ms (valid while
	// haveFloor; a batch created since lowers it).
	expireFloor time.Duration
	haveFloor   bool

	brokers map[int32]sim.NodeID
	parts   []partitionInfo
	// spareParts is the array parts had before the last metadata
	// answer, which the next fills: producers ask again and again while
	// leaders move, 3,000 partitions each on a big cluster.
	spareParts []partitionInfo
	metaCorr   uint64
	// metaTo: where the metadata request metaCorr went (if metaSent; a
	// retry waiting out its backoff has not gone anywhere yet).
	metaTo    sim.NodeID
	metaSent  bool
	metaValid bool
	bootstrap int

	pid     int64
	epoch   int16
	pidCorr uint64
	// pidTo: where the InitProducerId request pidCorr went (if pidSent;
	// a retry waiting out its backoff has not gone anywhere yet).
	pidTo   sim.NodeID
	pidSent bool
	// needBump: a partition asked for an epoch bump (Kafka's
	// TransactionManager.clientSideEpochBumpRequired); rewrites counts the
	// partitions whose sequences are to start again, unresolved those with
	// unresolved sequences.
	needBump   bool
	rewrites   int
	unresolved int
	// parts' accumulator state by partition, and looks, what the sender
	// reads of each on every pass; pending holds records sent before any
	// metadata (partition -1).
	state    []*partitionState
	looks    sendLooks
	pending  *partitionState
	inflight corrlist.List[*inflightReq]
	perNode  nodeCounts
	// spareBatches are settled batches, for new ones to reuse: nothing
	// refers to a batch or its records once complete has settled it (its
	// request left the in-flight table first, the logs keep the built
	// batch, which holds its records' bytes, not them, and the history
	// copies keys and values), and a producer settles hundreds of
	// thousands.
	spareBatches spare.List[pbatch]
	// arena carves the record batches the producer builds.
	arena record.Arena
	// spareRequests are produce requests answered after the world
	// delivered them once, for new ones to reuse (see sentRequest).
	spareRequests spare.List[sentRequest]
	// sendBatches and sendBrokers are runSender's scratch space.
	sendBatches [][]*pbatch
	sendBrokers []int32
	corr        uint64
	// corrBase is where this incarnation's correlation ids start
	// (proto.CorrelationBase): an answer to what a previous process asked
	// matches none of this one's requests.
	corrBase uint64
	sticky   int32
	stickyN  int
	senderAt time.Duration // a sender wake-up is scheduled for this time (0: none)
	sender   sim.TimerID   // that wake-up

	// txn is the transactional producer's state (txn.go).
	txn txnManager

	// Stats for reports and tests.
	Stats Stats
}

// Stats counts what the producer did.
type Stats struct {
	Sent, Acked, Failed, Indeterminate, Requests, Retries, Batches int
	BytesSent                                                      int64
	RecordsBytes                                                   int64
	// RequestsReused counts requests answered after the world delivered
	// them once, whose memory the producer reused.
	RequestsReused int
}

// NewClient returns a client, to be started by its node.
func NewClient(cfg ClientConfig) *Client { return &Client{cfg: cfg.normalized()} }

// normalized is the configuration a transactional producer runs with:
// KafkaProducer refuses a transactional.id without enable.idempotence,
// acks=all and max.in.flight.requests.per.connection at most 5
// (ProducerConfig.postProcessAndValidateIdempotenceConfigs).
func (c ClientConfig) normalized() ClientConfig {
	if c.TransactionalID != "" {
		c.EnableIdempotence, c.Acks = true, proto.AcksAll
		c.MaxInFlight = min(max(c.MaxInFlight, 1), 5)
		if c.TransactionTimeout <= 0 {
			c.TransactionTimeout = 60 * time.Second
		}
	}
	return c
}

// Start fetches metadata (and, once it has it, a producer id).
func (p *Client) Start(env sim.Env) {
	p.env = env
	p.corr = proto.CorrelationBase(env.Incarnation()) + p.cfg.CorrelationOffset
	p.corrBase = p.corr
	p.pid, p.epoch = record.NoProducer, -1
	p.state, p.looks = nil, sendLooks{}
	p.needBump, p.rewrites, p.unresolved = false, 0, 0
	p.pending = nil
	p.inflight = corrlist.List[*inflightReq]{}
	p.perNode = nodeCounts{}
	p.brokers = map[int32]sim.NodeID{}
	p.sticky = -1
	p.txnStart()
	p.refreshMetadata()
	env.After(p.cfg.MetadataMaxAge, newTimer(timerMetadataAge, 0))
}

// Deliver handles broker answers.
func (p *Client) Deliver(from sim.NodeID, m sim.Message) {
	switch m := m.(type) {
	case *proto.MetadataResponse:
		p.handleMetadata(m)
	case *proto.InitProducerIDResponse:
		if p.Transactional() {
			p.handleTxnInitPID(m)
		} else {
			p.handleInitPID(m)
		}
	case *proto.FindCoordinatorResponse:
		p.handleFindCoordinator(m)
	case *proto.EndTxnResponse:
		p.handleEndTxn(m)
	case *proto.TxnOffsetCommitResponse:
		p.handleTxnOffsetCommit(m)
	case *proto.ProduceResponse:
		p.handleProduceResponse(m)
	case *sim.Disconnected:
		// Kafka's NetworkClient asks for fresh metadata after a
		// disconnection too: the broker may be gone, or closed on us
		// because it no longer leads (acks=0).
		p.connectionLost(m.Peer, proto.NetworkException)
	}
}

// Fire handles the client's timers (and ignores others).
func (p *Client) Fire(t sim.Timer) {
	if pt, ok := asTimer(t); ok {
		p.fire(pt)
	}
}

func (p *Client) fire(pt ptimer) {
	switch pt.kind() {
	case timerSender:
		p.senderAt = 0
		p.runSender()
	case timerRequest:
		if ir, ok := p.inflight.Get(pt.corr()); ok {
			// A request that timed out closes its connection, and every
			// other request on it fails too (NetworkClient.
			// handleTimedOutRequests): their answers, which may still
			// come, would arrive on a connection that is gone.
			p.env.CloseConnection(ir.node)
			p.connectionLost(ir.node, proto.RequestTimedOut)
		}
	case timerMetadata:
		if pt.corr() == p.metaCorr {
			p.metaCorr = 0
			p.refreshMetadata()
		}
	case timerMetadataAge:
		p.refreshMetadata()
		p.env.After(p.cfg.MetadataMaxAge, newTimer(timerMetadataAge, 0))
	case timerInitPID:
		if pt.corr() == p.pidCorr {
			p.pidCorr = 0
			p.initProducerID()
		}
	case timerTxnRequest, timerTxnRetry:
		p.txnTimer(pt)
	}
}

type inflightReq struct {
	broker  int32
	node    sim.NodeID
	batches []*pbatch
	timer   sim.TimerID
	sent    *sentRequest // what holds it
}

type timerKind uint8

const (
	// timerSend is the workload's: its kind is the client's, as the trace
	// shows every timer's kind.
	timerSend timerKind = iota
	timerSender
	timerRequest
	timerMetadata
	timerMetadataAge
	timerInitPID
	timerTxnRequest
	timerTxnRetry
	// timerTxnWorkload is the transactional workload's (txnworkload.go).
	timerTxnWorkload
)

// ptimer is a producer's timer: its kind, and the correlation id it is
// for, packed in one word, so that the sender's wake-ups and the workload's
// sends (which carry none) are boxed without an allocation.
type ptimer uint64

func newTimer(kind timerKind, corr uint64) ptimer { return ptimer(uint64(kind) | corr<<8) }

func (t ptimer) kind() timerKind { return timerKind(t & 0xff) }
func (t ptimer) corr() uint64    { return uint64(t) >> 8 }

// String is how the trace shows the timer.
// (A request's timeout comes as a pointer into the request's own
// allocation, sentRequest: *ptimer shows the same.)
func (t ptimer) String() string { return string(t.AppendDetail(nil)) }

// AppendDetail appends String's words (sim.DetailAppender: a trace records
// millions of these).
func (t ptimer) AppendDetail(b []byte) []byte {
	b = append(b, "producer.ptimer {kind:"...)
	b = strconv.AppendInt(b, int64(t.kind()), 10)
	b = append(b, " corr:"...)
	b = strconv.AppendUint(b, t.corr(), 10)
	return append(b, '}')
}

// asTimer is t as a producer's timer, if it is one (a request's timeout
// comes boxed: see sentRequest).
func asTimer(t sim.Timer) (ptimer, bool) {
	if p, boxed := t.(*ptimer); boxed {
		return *p, true
	}
	pt, ok := t.(ptimer)
	return pt, ok
}

func (p *Client) inflightFor(node sim.NodeID) []uint64 {
	var out []uint64 // in correlation order, as the list holds them
	for corr, r := range p.inflight.All() {
		if r.node == node {
			out = append(out, corr)
		}
	}
	return out
}
