// Package producer is Kafka's producer client as a state machine: a workload
// that sends records at a rate, the default partitioner (murmur2 of the key,
// sticky for null keys), the record accumulator (batches per partition,
// linger.ms, batch.size, real gzip compression), the sender (one produce
// request per broker, max.in.flight.requests.per.connection, retries with
// exponential backoff, request.timeout.ms, delivery.timeout.ms), metadata
// refresh, and the idempotent producer (producer id, epoch, per-partition
// sequences, local epoch bump after an unresolved batch, KIP-360).
//
// Every send is recorded in the history: invoked when the application calls
// send, completed ok with its offset, fail when no attempt can have been
// written, info when one might have been.
package producer

import (
	"fmt"
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

// Config is a producer instance's Kafka configuration and workload.
type Config struct {
	// Name is the process name in the history ("p-0").
	Name  string
	Topic string
	// Rate is records per second; zero sends nothing.
	Rate float64
	// Keys is the key space ("k0".."k{Keys-1}"); zero sends null keys.
	Keys int
	// ProbeKeys gives the probes keys ("kafkasim-probe-<partition>"): a
	// compacted topic refuses records without one.
	ProbeKeys bool
	// Payload follows the unique "<name>:<seq>" in every record's value,
	// so that record sizes (and what compression makes of them) are real.
	Payload string
	// Start and Stop bound when the workload sends (virtual time).
	Start, Stop time.Duration

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
	Recorder          *history.Recorder
}

// DefaultConfig has Kafka 4.x's producer defaults.
func DefaultConfig(name, topic string) Config {
	return Config{Name: name, Topic: topic, Acks: proto.AcksAll, EnableIdempotence: true, LingerMs: 5 * time.Millisecond,
		BatchSize: 16384, Retries: math.MaxInt32, RetryBackoff: 100 * time.Millisecond, RetryBackoffMax: time.Second,
		DeliveryTimeout: 120 * time.Second, RequestTimeout: 30 * time.Second, MaxInFlight: 5, MetadataMaxAge: 5 * time.Minute}
}

// LostRequestWait is the longest the producer waits on a request that gets
// no answer (its broker's machine went down, peers not told) before it
// tries again: request.timeout.ms, then at most retry.backoff.max.ms of
// backoff. A retry that succeeds needs nothing more (delivery.timeout.ms
// only bounds retries that keep failing).
func (c Config) LostRequestWait() time.Duration {
	return c.RequestTimeout + max(c.RetryBackoff, c.RetryBackoffMax)
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
	timerSend timerKind = iota
	timerSender
	timerRequest
	timerMetadata
	timerMetadataAge
	timerInitPID
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

// Producer is one producer instance.
type Producer struct {
	cfg Config
	env sim.Env
	rec *history.Recorder
	// hist is the producer's handle on rec (when rec is set).
	hist history.Proc

	valuePrefix string
	values      valueBlock // the block values are cut from (nextValue)
	seq         int
	// keyNames holds "k<n>" of the first keyNamesMax keys back to back,
	// keyNameEnds where each ends: a key is drawn per record, and its name
	// is cut from one block of a few kilobytes, so that keys drawn at
	// random touch few cache lines.
	keyNames    string
	keyNameEnds []int32
	// expireFloor: no queued batch was created before it, so none can
	// expire before expireFloor + delivery.timeout.ms (valid while
	// haveFloor; a batch created since lowers it).
	expireFloor time.Duration
	haveFloor   bool

	brokers   map[int32]sim.NodeID
	parts     []partitionInfo
	metaCorr  uint64
	metaValid bool
	bootstrap int

	pid      int64
	epoch    int16
	pidCorr  uint64
	needBump bool
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
	sticky      int32
	stickyN     int
	probes      map[string]history.Type // probe value -> outcome (Invoke: pending)
	senderAt    time.Duration           // a sender wake-up is scheduled for this time (0: none)
	sender      sim.TimerID             // that wake-up

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

// New returns a constructor for a producer.
func New(cfg Config) func() sim.Node {
	return func() sim.Node { return &Producer{cfg: cfg} }
}

// Start begins the workload, after fetching metadata (and a producer id).
func (p *Producer) Start(env sim.Env) {
	p.env = env
	p.rec = p.cfg.Recorder
	if p.rec != nil {
		p.hist = p.rec.Proc(p.cfg.Name)
	}
	p.valuePrefix = p.cfg.Name
	if inc := env.Incarnation(); inc > 1 {
		// Values stay unique across restarts: the counter starts again.
		p.valuePrefix = fmt.Sprintf("%s/%d", p.cfg.Name, inc)
		if p.rec != nil {
			p.rec.Restarted(p.cfg.Name) // the world recorded the death (Recorder.Died)
		}
	}
	p.pid, p.epoch = record.NoProducer, -1
	p.state, p.looks = nil, sendLooks{}
	p.pending = nil
	p.inflight = corrlist.List[*inflightReq]{}
	p.perNode = nodeCounts{}
	p.brokers = map[int32]sim.NodeID{}
	p.sticky = -1
	p.refreshMetadata()
	env.After(p.cfg.MetadataMaxAge, newTimer(timerMetadataAge, 0))
	if p.cfg.Rate > 0 {
		start := max(p.cfg.Start-env.WorldTime(), 0)
		env.After(start+p.interval(), newTimer(timerSend, 0))
	}
}

func (p *Producer) record(t history.Type, f string, v *history.Value) {
	if p.rec != nil {
		if t == history.Invoke {
			p.hist.Invoke(f, v)
		} else {
			p.hist.Complete(t, f, v)
		}
	}
}

// Deliver handles broker answers.
func (p *Producer) Deliver(from sim.NodeID, m sim.Message) {
	switch m := m.(type) {
	case *proto.MetadataResponse:
		p.handleMetadata(m)
	case *proto.InitProducerIDResponse:
		p.handleInitPID(m)
	case *proto.ProduceResponse:
		p.handleProduceResponse(m)
	case *sim.Disconnected:
		for _, c := range p.inflightFor(m.Peer) {
			p.failRequest(c, proto.NetworkException)
		}
		// Kafka's NetworkClient asks for fresh metadata after a
		// disconnection: the broker may be gone, or closed on us because
		// it no longer leads (acks=0).
		p.refreshMetadata()
	}
}

// Fire handles timers.
func (p *Producer) Fire(t sim.Timer) {
	pt, ok := t.(ptimer)
	if p, boxed := t.(*ptimer); boxed {
		pt, ok = *p, true
	}
	if !ok {
		return
	}
	switch pt.kind() {
	case timerSend:
		now := p.env.WorldTime()
		if p.cfg.Stop > 0 && now >= p.cfg.Stop {
			return
		}
		p.send()
		p.env.After(p.interval(), newTimer(timerSend, 0))
	case timerSender:
		p.senderAt = 0
		p.runSender()
	case timerRequest:
		if _, ok := p.inflight.Get(pt.corr()); ok {
			p.failRequest(pt.corr(), proto.RequestTimedOut)
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
	}
}

func (p *Producer) inflightFor(node sim.NodeID) []uint64 {
	var out []uint64 // in correlation order, as the list holds them
	for corr, r := range p.inflight.All() {
		if r.node == node {
			out = append(out, corr)
		}
	}
	return out
}
