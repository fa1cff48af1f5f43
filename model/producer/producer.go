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
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
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

type pendingRecord struct {
	record record.Record // its Value is the history's value
	// partition is an explicit partition (a probe's), or -1.
	partition int32
}

// outcome of one attempt of a batch.
type attempt uint8

const (
	notWritten attempt = iota // definitely not appended
	maybeWritten
)

type pbatch struct {
	partition int32
	// records are the batch's records, handed to record.New as they are
	// (it numbers them); explicit holds, in a batch still waiting for a
	// partition (partition -1), each record's explicit partition or -1.
	records    []record.Record
	explicit   []int32
	bytes      int
	created    time.Duration
	attempts   int
	baseSeq    int32
	epoch      int16
	built      *record.Batch
	inflight   bool
	retryAt    time.Duration // not before
	maybe      bool          // some attempt may have been appended
	rewrite    bool          // resent under the next epoch even if maybe (sender.go: retryOrFail)
	closed     bool          // full: no more records
	leaderSeen int32         // the leader epoch of the last attempt's target
	// request is the correlation id of the request it is in flight in.
	request uint64
}

// spareBatchesMax bounds the settled batches a producer keeps for reuse.
const spareBatchesMax = 64

type partitionState struct {
	queue     []*pbatch // oldest first
	nextSeq   int32
	lastAcked int32 // last sequence acknowledged in the current epoch, -1
	inflight  int
	// wakes are the times the sender must look at this partition again
	// (scheduleNext; none: 0), recomputed when stale (sendLooks.firstWake):
	// whenever a batch joins or leaves the queue, is sent, comes back or
	// gets a retry time; kept in ascending order.
	wakes [3]time.Duration
	// looks holds what the sender reads of it on every pass, as partition
	// index (nil for the records waiting for metadata, which the sender
	// does not look at).
	looks *sendLooks
	index int
}

// changed notes that the partition's queue or a batch in it changed: its
// wake-up times are stale, and the sender must look at it again.
func (st *partitionState) changed() {
	if st.looks != nil {
		st.looks.changed(st.index)
	}
}

// maySendSooner notes that a batch may go before the sender's last look
// at the partition said (a batch filled up): the sender must look again.
func (st *partitionState) maySendSooner() {
	if st.looks != nil {
		st.looks.maySendSooner(st.index)
	}
}

type inflightReq struct {
	broker  int32
	node    sim.NodeID
	batches []*pbatch
	timer   sim.TimerID
	sent    *sentRequest // what holds it
}

type partitionInfo struct {
	leader      int32
	leaderEpoch int32
	// known: the leader is a broker the metadata listed (the sender's
	// check, made once per metadata rather than per look).
	known bool
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

// interval draws the time to the next send: exponential, mean 1/rate.
func (p *Producer) interval() time.Duration {
	mean := float64(time.Second) / p.cfg.Rate
	return time.Duration(max(p.env.Rand().ExpFloat64()*mean, 1))
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

// --- metadata and producer id -------------------------------------------

func (p *Producer) refreshMetadata() {
	if p.metaCorr != 0 || len(p.cfg.Brokers) == 0 {
		return
	}
	target := p.cfg.Brokers[p.bootstrap%len(p.cfg.Brokers)]
	ids := p.brokerIDs()
	if len(ids) > 0 {
		target = p.brokers[ids[p.bootstrap%len(ids)]]
	}
	p.bootstrap++
	p.corr++
	p.metaCorr = p.corr
	p.env.Send(target, &proto.MetadataRequest{CorrelationID: p.corr, Topics: []string{p.cfg.Topic}})
	p.env.After(p.cfg.RequestTimeout/10, newTimer(timerMetadata, p.corr))
}

func (p *Producer) handleMetadata(m *proto.MetadataResponse) {
	if m.CorrelationID != p.metaCorr {
		return
	}
	p.metaCorr = 0
	if len(m.Topics) != 1 || m.Topics[0].Error != proto.None || len(m.Brokers) == 0 {
		p.metaValid = false
		p.corr++
		p.metaCorr = p.corr
		p.env.After(p.cfg.RetryBackoff, newTimer(timerMetadata, p.corr))
		return
	}
	p.brokers = map[int32]sim.NodeID{}
	for _, b := range m.Brokers {
		p.brokers[b.ID] = b.Node
	}
	parts := make([]partitionInfo, len(m.Topics[0].Partitions))
	for _, mp := range m.Topics[0].Partitions {
		if int(mp.Partition) < len(parts) {
			parts[mp.Partition] = partitionInfo{leader: mp.Leader, leaderEpoch: mp.LeaderEpoch}
		}
	}
	// Metadata can be stale: never go back to an older leader epoch.
	for i := range parts {
		if i < len(p.parts) && parts[i].leaderEpoch < p.parts[i].leaderEpoch {
			parts[i] = p.parts[i]
		}
	}
	for i := range parts {
		_, listed := p.brokers[parts[i].leader]
		parts[i].known = parts[i].leader >= 0 && listed
	}
	p.parts = parts
	p.looks.lookAtAll()
	p.metaValid = true
	p.partitionPending()
	if p.cfg.EnableIdempotence && p.pid == record.NoProducer && p.pidCorr == 0 {
		p.initProducerID()
	}
	p.wakeSender(0)
}

func (p *Producer) initProducerID() {
	ids := p.brokerIDs()
	if len(ids) == 0 {
		p.refreshMetadata()
		return
	}
	p.corr++
	p.pidCorr = p.corr
	p.env.Send(p.brokers[ids[int(p.corr)%len(ids)]], &proto.InitProducerIDRequest{CorrelationID: p.corr})
	p.env.After(p.cfg.RequestTimeout/10, newTimer(timerInitPID, p.corr))
}

func (p *Producer) handleInitPID(m *proto.InitProducerIDResponse) {
	if m.CorrelationID != p.pidCorr {
		return
	}
	if m.Error != proto.None {
		return // the timer retries
	}
	p.pidCorr = 0
	p.pid, p.epoch = m.ProducerID, m.ProducerEpoch
	p.wakeSender(0)
}

func (p *Producer) brokerIDs() []int32 { return slices.Sorted(maps.Keys(p.brokers)) }

// --- the application's send and the accumulator --------------------------

func (p *Producer) send() {
	p.seq++
	value := p.nextValue(p.cfg.Payload)
	v := history.NoValue()
	v.Topic, v.Value = p.cfg.Topic, value
	rec := record.Record{Value: value, Timestamp: p.env.Now().Milliseconds()}
	if p.cfg.Keys > 0 {
		k := p.keyName(p.env.Rand().IntN(p.cfg.Keys))
		rec.Key, rec.HasKey = k, true
		v.Key, v.HasKey = k, true
	}
	p.record(history.Invoke, history.FSend, &v)
	p.Stats.Sent++
	// Before any metadata arrives the record waits unpartitioned (Kafka
	// blocks send() for up to max.block.ms), its delivery timeout running.
	pr := pendingRecord{record: rec, partition: -1}
	p.append(pr)
}

// countUp returns the decimal digits of one more than digits, a
// non-negative number's held in buf: in place, or, when every digit was a
// 9, rewritten from buf's start one digit longer.
func countUp(digits, buf []byte) []byte {
	for i := len(digits) - 1; i >= 0; i-- {
		if digits[i] != '9' {
			digits[i]++
			return digits
		}
		digits[i] = '0'
	}
	n := len(digits) + 1
	buf[0] = '1'
	for i := 1; i < n; i++ {
		buf[i] = '0'
	}
	return buf[:n]
}

// keyNamesMax bounds the key-name cache (a workload may draw from millions
// of keys; names above the bound are built each time).
const keyNamesMax = 1 << 12

func (p *Producer) keyName(n int) string {
	if n >= keyNamesMax {
		return "k" + strconv.Itoa(n)
	}
	if p.keyNameEnds == nil {
		count := min(p.cfg.Keys, keyNamesMax)
		p.keyNameEnds = make([]int32, count)
		var block []byte
		for k := range count {
			block = strconv.AppendInt(append(block, 'k'), int64(k), 10)
			p.keyNameEnds[k] = int32(len(block))
		}
		p.keyNames = string(block)
	}
	start := int32(0)
	if n > 0 {
		start = p.keyNameEnds[n-1]
	}
	return p.keyNames[start:p.keyNameEnds[n]]
}

// valuesPerBlock is how many consecutive values nextValue builds at once.
const valuesPerBlock = 256

// valueBlock holds the values of sends base .. base+valuesPerBlock-1, end
// to end in one string: ends[i] is where value base+i ends.
type valueBlock struct {
	base int
	s    string
	ends [valuesPerBlock]int32
}

// nextValue is the value of send number p.seq, "<prefix>:<seq>", followed by
// " <payload>" when there is one. The workload's values are cut from a
// string of the next valuesPerBlock values, built at once: one allocation
// per block, not per send (a value lives as long as the history that
// records it, and so does its block).
func (p *Producer) nextValue(payload string) string {
	if payload != p.cfg.Payload {
		v := p.valuePrefix + ":" + strconv.Itoa(p.seq)
		if payload != "" {
			v += " " + payload
		}
		return v
	}
	vb := &p.values
	i := p.seq - vb.base
	if vb.s == "" || i < 0 || i >= valuesPerBlock {
		var sb strings.Builder // its String does not copy
		sb.Grow(valuesPerBlock * (len(p.valuePrefix) + 9 + len(payload)))
		// The block's numbers are consecutive: the decimal digits of the
		// first are counted up in place, not formatted 256 times.
		var num [24]byte
		digits := strconv.AppendInt(num[1:1], int64(p.seq), 10)
		for k := range valuesPerBlock {
			sb.WriteString(p.valuePrefix)
			sb.WriteByte(':')
			sb.Write(digits)
			if payload != "" {
				sb.WriteByte(' ')
				sb.WriteString(payload)
			}
			vb.ends[k] = int32(sb.Len())
			digits = countUp(digits, num[:])
		}
		vb.base, vb.s, i = p.seq, sb.String(), 0
	}
	start := int32(0)
	if i > 0 {
		start = vb.ends[i-1]
	}
	return vb.s[start:vb.ends[i]]
}

// Probe sends one record without a key (with one, to a compacted topic) to
// every partition, now, whether or
// not the workload has stopped: after the heal, the proof that the producer
// can write again. ProbeOutcome tells how the probes ended.
func (p *Producer) Probe() {
	n := max(len(p.parts), 1)
	if p.probes == nil {
		p.probes = map[string]history.Type{}
	}
	for i := range n {
		p.seq++
		value := p.nextValue("")
		v := history.NoValue()
		v.Topic, v.Value = p.cfg.Topic, value
		r := record.Record{Value: value, Timestamp: p.env.Now().Milliseconds()}
		if p.cfg.ProbeKeys {
			r.Key, r.HasKey = "kafkasim-probe-"+strconv.Itoa(i), true
			v.Key, v.HasKey = r.Key, true
		}
		p.record(history.Invoke, history.FSend, &v)
		p.Stats.Sent++
		p.probes[value] = history.Invoke
		part := int32(i)
		if !p.metaValid {
			part = -1
		}
		p.append(pendingRecord{record: r, partition: part})
	}
}

// ProbeOutcome counts the probes acknowledged, failed, unknown (info:
// with acks=0 every send is), and still pending.
func (p *Producer) ProbeOutcome() (acked, failed, unknown, pending int) {
	for _, t := range p.probes { // kafkasim:orderless: counts
		switch t {
		case history.OK:
			acked++
		case history.Invoke:
			pending++
		case history.Info:
			unknown++
		default:
			failed++
		}
	}
	return acked, failed, unknown, pending
}

// ProbesUnknown lists the values of probes whose outcome is unknown, sorted.
func (p *Producer) ProbesUnknown() []string {
	var out []string
	for v, t := range p.probes { // kafkasim:orderless: sorted below
		if t == history.Info {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

func (p *Producer) partitionFor(pr pendingRecord) int32 {
	n := max(len(p.parts), 1)
	if pr.partition >= 0 && int(pr.partition) < n {
		return pr.partition
	}
	if pr.record.HasKey {
		return PartitionForKey([]byte(pr.record.Key), n)
	}
	// Sticky partitioning (KIP-794): stay on one partition until a batch's
	// worth of bytes went to it.
	if p.sticky < 0 || int(p.sticky) >= n || p.stickyN >= p.cfg.BatchSize {
		var avail []int32
		for i, pi := range p.parts {
			if pi.leader >= 0 {
				avail = append(avail, int32(i))
			}
		}
		if len(avail) == 0 {
			p.sticky = int32(p.env.Rand().IntN(n))
		} else {
			p.sticky = avail[p.env.Rand().IntN(len(avail))]
		}
		p.stickyN = 0
	}
	return p.sticky
}

// pendingUnpartitioned holds records sent before any metadata arrived.
func (p *Producer) append(pr pendingRecord) {
	part := p.partitionFor(pr)
	if !p.metaValid {
		part = -1
	}
	size := 21 + len(pr.record.Key) + len(pr.record.Value)
	if part >= 0 && !pr.record.HasKey {
		p.stickyN += size
	}
	st := p.partState(part)
	var b *pbatch
	if n := len(st.queue); n > 0 {
		last := st.queue[n-1]
		if !last.closed && last.attempts == 0 && !last.inflight && last.bytes+size <= p.cfg.BatchSize {
			b = last
		}
	}
	if b == nil {
		b = p.newBatch(part)
		st.queue = append(st.queue, b)
		st.changed()
		if p.haveFloor && b.created < p.expireFloor {
			p.expireFloor = b.created
		}
	}
	b.records = append(b.records, pr.record)
	if part < 0 {
		b.explicit = append(b.explicit, pr.partition)
	}
	b.bytes += size
	if b.bytes+size > p.cfg.BatchSize {
		b.closed = true
		st.maySendSooner() // before its linger is up
	}
	if b.closed {
		p.wakeSender(0)
	} else {
		p.wakeSender(p.cfg.LingerMs)
	}
}

// newBatch is an empty batch of partition part, created now.
func (p *Producer) newBatch(part int32) *pbatch {
	b := p.spareBatches.Get()
	if b == nil {
		b = new(pbatch)
	}
	// A reused batch keeps its record and partition arrays (emptied when
	// it was settled): a producer's batches stop allocating once it has
	// settled a few dozen.
	*b = pbatch{partition: part, created: p.env.Now(), baseSeq: -1, records: b.records[:0], explicit: b.explicit[:0]}
	return b
}

func (p *Producer) partState(part int32) *partitionState {
	if part < 0 {
		if p.pending == nil {
			p.pending = &partitionState{lastAcked: -1}
		}
		return p.pending
	}
	if int(part) >= len(p.state) {
		p.growState(int(part) + 1)
	}
	return p.state[part]
}

// growState makes room for n partitions.
func (p *Producer) growState(n int) {
	for len(p.state) < n {
		p.state = append(p.state, &partitionState{lastAcked: -1, looks: &p.looks, index: len(p.state)})
	}
	p.looks.grow(n)
}

func (p *Producer) wakeSender(after time.Duration) {
	now := p.env.Now()
	at := now + after
	// One wake-up at a time, the earliest asked for (Kafka's sender polls
	// with the nearest deadline): the one it replaces would only find the
	// work done, as every wake-up ends by asking for the next (scheduleNext).
	// But not a wake-up the clock has passed while its timer waits: set
	// forward or sped up, the local clock reached it before the world's
	// time did, and its timer, armed by the world's time, fires later than
	// anything asked for now (a nanosecond or so of rounding between a
	// drifting clock's conversions aside).
	if p.senderAt != 0 && p.senderAt <= at && now-p.senderAt <= senderLateMax {
		return
	}
	if p.senderAt != 0 {
		p.env.Cancel(p.sender)
	}
	p.senderAt = at
	p.sender = p.env.After(after, newTimer(timerSender, 0))
}

// senderLateMax is how far the local clock may be past a pending sender
// wake-up before it is taken for a clock set forward (see wakeSender).
const senderLateMax = time.Microsecond

// Unresolved is the number of records sent whose outcome the producer does
// not know yet (queued, in flight or waiting to retry): after a heal it must
// fall to zero, or the producer cannot write.
func (p *Producer) Unresolved() int {
	n := 0
	for _, st := range append([]*partitionState{p.pending}, p.state...) {
		if st == nil {
			continue
		}
		for _, b := range st.queue {
			n += len(b.records)
		}
	}
	return n
}
