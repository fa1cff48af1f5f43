// Package reader is a Kafka consumer in assign mode (no group): it reads
// every partition of its topics from the leaders, up to the high watermark,
// validating its position with the leader epoch after a leader change
// (KIP-320) and resetting it with auto.offset.reset when it falls out of
// range. Every poll is recorded in the history; final polls, made after the
// writers stop, read each partition to its end.
//
// Its parts are Kafka's consumer's: the SubscriptionState (subscription.go:
// the partitions assigned, the position in each), the fetch path (fetch.go,
// after AbstractFetch; collector.go, FetchCollector; poll.go, the poll
// loop), positions reset and validated (positions.go, OffsetFetcher),
// metadata (metadata.go), and final reads (final.go).
package reader

import (
	"slices"
	"strconv"
	"time"

	"kafkasim/history"
	"kafkasim/internal/corrlist"
	"kafkasim/model/extstore"
	"kafkasim/model/proto"
	"kafkasim/sim"
)

// Config is a reader instance's configuration.
type Config struct {
	Name   string
	Topics []string
	// Isolation is isolation.level (read_uncommitted).
	Isolation string
	// AutoOffsetReset is auto.offset.reset: earliest, latest or none.
	AutoOffsetReset string
	// Processing is the time spent between polls.
	Processing sim.Range
	// PollTimeout is the application's poll(timeout): how long a poll
	// with nothing buffered waits for a fetch before it returns empty
	// (zero: fetch.max.wait.ms plus a tenth of request.timeout.ms).
	PollTimeout    time.Duration
	FetchMaxWait   time.Duration
	MaxPollRecords int
	// MaxPartitionFetchBytes is max.partition.fetch.bytes (1 MiB).
	MaxPartitionFetchBytes int
	RequestTimeout         time.Duration
	RetryBackoff           time.Duration
	// RetryBackoffMax is retry.backoff.max.ms (1 s): the longest the
	// reader waits between metadata answers that change nothing while a
	// partition it reads has no leader (KIP-580).
	RetryBackoffMax time.Duration
	// MetadataMaxAge is metadata.max.age.ms (5 minutes): how soon the
	// reader learns of partitions added to its topics.
	MetadataMaxAge time.Duration
	Brokers        []sim.NodeID
	Recorder       *history.Recorder
	Start, Stop    time.Duration
	// LinkBandwidthBytesPerSecond is the network's bandwidth per link
	// direction (sim.NetworkOptions; zero: unlimited), which the reader's
	// fetch timer allows for: see fetchTimeout.
	LinkBandwidthBytesPerSecond int64
	// NoEpochValidation is the bug zoo's no-consumer-epoch-validation.
	NoEpochValidation bool
	// FetchAudit sees the fetches the god view records (nil: none).
	FetchAudit FetchAuditor
	// Group makes the reader a member of a consumer group, classic or
	// KIP-848's (nil: an assign-mode reader of every partition of its
	// topics). A member
	// consumes until the run ends: Stop does not apply to it.
	Group *GroupConfig
}

// FetchAuditor sees the reader take records from a fetch it sent under an
// older leader epoch than the one it knows when the answer comes: a deposed
// leader's answer, which Kafka's consumer takes because it asked from the
// position it still holds (FetchCollector checks the fetch offset only).
// The records [from, to) it took there are the deposed leader's, whatever
// the new leader holds at those offsets.
//
// OutOfRangeReset: the leader answered OFFSET_OUT_OF_RANGE at the reader's
// position from, and auto.offset.reset moved the position on to to, the log
// start ListOffsets gave: the records [from, to) were gone from that
// leader's log (retention), whatever another replica still holds there.
//
// OutOfRangeRewind: the leader answered OFFSET_OUT_OF_RANGE at the reader's
// position to, and auto.offset.reset moved the position back to from, a log
// start below it (a power loss undid the leader's unsynced segment
// deletions, or another replica leads): the reader reads [from, to) again.
type FetchAuditor interface {
	StaleLeaderRead(node sim.NodeID, tp proto.TopicPartition, from, to int64)
	OutOfRangeReset(node sim.NodeID, tp proto.TopicPartition, from, to int64)
	OutOfRangeRewind(node sim.NodeID, tp proto.TopicPartition, from, to int64)
}

// DefaultConfig has Kafka's consumer defaults, except that a reader starts
// from the earliest offset (so that it can see everything written).
func DefaultConfig(name string, topics []string) Config {
	return Config{Name: name, Topics: topics, Isolation: "read_uncommitted", AutoOffsetReset: "earliest",
		Processing: sim.Range{Min: time.Millisecond, Max: 5 * time.Millisecond}, FetchMaxWait: 500 * time.Millisecond,
		MaxPollRecords: 500, MaxPartitionFetchBytes: 1 << 20, RequestTimeout: 30 * time.Second, RetryBackoff: 100 * time.Millisecond,
		RetryBackoffMax: time.Second, MetadataMaxAge: 5 * time.Minute}
}

// LostRequestWait is the longest the reader waits on a request that gets no
// answer before it asks again: a fetch's fetch.max.wait.ms plus a tenth of
// request.timeout.ms (the timers below), then retry.backoff.ms.
func (c Config) LostRequestWait() time.Duration {
	return c.FetchMaxWait + c.RequestTimeout/10 + c.RetryBackoff
}

type timerKind uint8

const (
	timerPoll timerKind = iota
	timerPollTimeout
	timerMetadata
	timerRequest
	timerMetadataAge
)

type rtimer struct {
	kind timerKind
	corr uint64
}

// String is how the trace shows the timer, which may come as a pointer into
// the fetch's own allocation (fetchBox). A trace records hundreds of
// thousands of these: no fmt.
func (t rtimer) String() string { return string(t.AppendDetail(nil)) }

// AppendDetail appends String's words (sim.DetailAppender).
func (t rtimer) AppendDetail(b []byte) []byte {
	b = append(b, "reader.rtimer {kind:"...)
	b = strconv.AppendInt(b, int64(t.kind), 10)
	b = append(b, " corr:"...)
	b = strconv.AppendUint(b, t.corr, 10)
	return append(b, '}')
}

// Reader is one reader instance.
type Reader struct {
	cfg Config
	env sim.Env
	rec *history.Recorder
	// hist is the reader's handle on rec (when rec is set).
	hist history.Proc

	brokers  map[int32]sim.NodeID
	subs     subscriptionState
	metaCorr uint64
	// metaTo is the broker the metadata request in flight went to.
	metaTo sim.NodeID
	corr   uint64
	// corrBase is where this incarnation's correlation ids start
	// (proto.CorrelationBase).
	corrBase uint64

	polling  bool
	pollWait uint64 // the timer of a poll waiting for fetches, 0 if none
	// collector gathers the records of the poll under way.
	collector fetchCollector
	fetching  inFlight // leader -> fetch in flight
	final     bool
	finalDone bool
	// finalStarts are log start offsets final reads began from, not yet
	// recorded in the history.
	finalStarts map[string]int64
	// finalSaid is, per partition, the position and end offset final reads
	// last recorded in the history (final.go's finalReport).
	finalSaid map[partKey]finalSaid
	// finalAnnounced: a final poll has said that this reader records how
	// far its final reads got (finalReport).
	finalAnnounced bool
	// leaderlessAt is when the reader last asked for metadata because a
	// partition had no leader, and leaderlessWait how long it waits from
	// there before it asks again (metadataBackoff).
	leaderlessAt, leaderlessWait time.Duration
	// equivalentMetadata is Kafka's Metadata.equivalentResponseCount: the
	// metadata answers in a row that raised no partition's leader epoch.
	equivalentMetadata int
	// seenEpochs is Metadata.lastSeenLeaderEpochs: the highest leader
	// epoch an answer gave for each partition of the reader's topics.
	seenEpochs map[partKey]int32
	stopped    bool
	// requests in flight: their kind and, for a fetch, what it asked for.
	requests corrlist.List[request]
	// wantScratch is fetchMissing's list of partitions to fetch.
	wantScratch []*partitionState
	// group is a group member's state (nil in assign mode).
	group *groupState

	// Stats for reports and tests.
	Stats Stats
}

// request is a request in flight: its kind and, for a fetch, the
// partitions it asked for.
type request struct {
	kind  requestKind
	parts []proto.FetchPartition
	call  *groupCall // a group request's (coordinator.go)
}

// requestKind is what a request in flight asks for.
type requestKind uint8

const (
	requestFetch    requestKind = iota // records (Fetch)
	requestReset                       // a position to reset to (ListOffsets, auto.offset.reset)
	requestEnd                         // the end final reads read to (ListOffsets, latest)
	requestValidate                    // where a position's epoch ends (OffsetsForLeaderEpoch, KIP-320)
	requestGroup                       // a group member's request (coordinator.go)
)

// Stats counts what the reader did.
type Stats struct {
	Polls, Records, Resets, Truncations, Validations int
}

// New returns a constructor for a reader.
func New(cfg Config) func() sim.Node { return func() sim.Node { return &Reader{cfg: cfg} } }

// Start begins polling.
func (r *Reader) Start(env sim.Env) {
	r.env = env
	r.rec = r.cfg.Recorder
	r.collector.maxPollRecords = r.cfg.MaxPollRecords
	r.collector.readCommitted = r.cfg.Isolation == "read_committed"
	if r.rec != nil {
		r.hist = r.rec.Proc(r.cfg.Name)
	}
	r.corrBase = proto.CorrelationBase(env.Incarnation())
	r.corr = r.corrBase
	r.brokers = map[int32]sim.NodeID{}
	r.subs.byKey = map[partKey]*partitionState{}
	r.requests = corrlist.List[request]{}
	if r.cfg.Group != nil {
		r.group = newGroupState(r.cfg.Group)
		if r.cfg.Group.consumerProtocol() {
			r.group.consumer = newConsumerMember(r.cfg.Group, r.cfg.Topics, env)
		}
	}
	if env.Incarnation() > 1 && r.rec != nil {
		r.rec.Restarted(r.cfg.Name) // the world recorded the death (Recorder.Died)
	}
	r.refreshMetadata()
	if r.cfg.MetadataMaxAge > 0 {
		env.After(r.cfg.MetadataMaxAge, rtimer{kind: timerMetadataAge})
	}
	env.After(max(r.cfg.Start-env.WorldTime(), 0)+r.cfg.Processing.Draw(env.Rand()), rtimer{kind: timerPoll})
}

// sent is how many requests this process has sent: what the reader goes
// round the brokers by.
func (r *Reader) sent() int { return int(r.corr - r.corrBase) }

// Stop ends polling; a group member closes (ConsumerCoordinator.close).
func (r *Reader) Stop() {
	r.stopped = true
	if r.group != nil {
		r.closeGroup()
	}
}

// Deliver handles broker answers.
func (r *Reader) Deliver(from sim.NodeID, m sim.Message) {
	switch m := m.(type) {
	case *proto.MetadataResponse:
		r.handleMetadata(m)
	case *proto.FetchResponse:
		r.handleFetch(m)
	case *proto.ListOffsetsResponse:
		r.handleListOffsets(m)
	case *proto.OffsetsForLeaderEpochResponse:
		r.handleValidation(m)
	case *sim.Disconnected:
		if r.metaCorr != 0 && r.metaTo == m.Peer {
			// NetworkClient.handleDisconnections fails the metadata
			// request in flight on the connection, and the update is
			// asked again after retry.backoff.ms
			// (DefaultMetadataUpdater.handleServerDisconnect), not once
			// the request times out.
			r.metaCorr = 0
			r.refreshMetadataSoon()
		}
		r.refreshMetadata()
		if r.group != nil {
			r.groupDisconnected(m.Peer)
			r.storeDisconnected(m.Peer)
		}
	case *extstore.ApplyResponse:
		if r.group != nil {
			r.handleApplied(m)
		}
	default:
		if r.group != nil {
			r.deliverGroup(m)
		}
	}
}

// Fire handles timers.
func (r *Reader) Fire(t sim.Timer) {
	if gt, isGroup := t.(gtimer); isGroup {
		r.fireGroup(gt)
		return
	}
	if at, isApp := t.(atimer); isApp {
		r.fireApp(at)
		return
	}
	rt, ok := t.(rtimer)
	if p, boxed := t.(*rtimer); boxed {
		rt, ok = *p, true
	}
	if !ok {
		return
	}
	switch rt.kind {
	case timerPoll:
		r.poll()
	case timerPollTimeout:
		if r.polling && r.pollWait == rt.corr {
			r.collector.collectFetch(r.subs.parts)
			r.finishPoll()
		}
	case timerMetadata:
		if rt.corr == r.metaCorr {
			r.metaCorr = 0
			r.refreshMetadata()
		}
	case timerMetadataAge:
		r.refreshMetadata()
		r.env.After(r.cfg.MetadataMaxAge, rtimer{kind: timerMetadataAge})
	case timerRequest:
		if req, ok := r.requests.Remove(rt.corr); ok {
			if req.kind == requestFetch {
				r.fetchDone(rt.corr)
				r.refreshMetadata()
				return
			}
			if req.kind == requestGroup {
				r.groupRequestTimedOut(rt.corr, req.call)
				return
			}
			r.requestFailed(req.kind)
		}
	}
}

// Position returns the next offset the reader will read in a partition, or
// -1 when it does not know (not assigned yet, or resetting).
func (r *Reader) Position(topic string, partition int32) int64 {
	p := r.subs.assignedState(partKey{topic: topic, partition: partition})
	if p == nil || p.resetting {
		return -1
	}
	return p.offset
}

// Processed is the offset after the last record of a partition the
// application finished, what its next commit of the partition would say
// (KafkaConsumer.commitSync(Map) of the records it polled), or -1 when it
// finished none in this membership.
func (r *Reader) Processed(topic string, partition int32) int64 {
	if r.group == nil {
		return -1
	}
	if p, ok := r.group.processed[partKey{topic, partition}]; ok {
		return p.offset
	}
	return -1
}

// ResetUnconsumed reports whether the reader's position in a partition
// came from auto.offset.reset and no record was returned to the
// application since. Batches it never sees (transaction markers; aborted
// transactions at read_committed) may have moved the position on since, as
// Kafka's CompletedFetch.nextFetchedRecord moves it past them (with their
// leader epoch), and the position must be valid (not awaiting KIP-320's
// validation), as SubscriptionState.allConsumed takes only those.
func (r *Reader) ResetUnconsumed(topic string, partition int32) bool {
	p := r.subs.assignedState(partKey{topic: topic, partition: partition})
	return p != nil && !p.resetting && !p.validating && p.offset >= 0 && p.handedBy == sourceReset
}

// TruncatedUnconsumed reports whether the reader's position in a partition
// is where KIP-320's validation sought it back to, the log truncated under
// it (Kafka's SubscriptionState.maybeCompleteValidation), with no record
// returned to the application since (batches it never sees may have moved
// the position on, as ResetUnconsumed says).
func (r *Reader) TruncatedUnconsumed(topic string, partition int32) bool {
	p := r.subs.assignedState(partKey{topic: topic, partition: partition})
	return p != nil && p.handedBy == sourceTruncation && !p.resetting && !p.validating
}

// RefreshMetadata asks for metadata now (unless a request is on its way).
func (r *Reader) RefreshMetadata() { r.refreshMetadata() }

// Knows reports whether the reader's metadata has the partition.
func (r *Reader) Knows(topic string, partition int32) bool {
	return r.subs.assignedState(partKey{topic: topic, partition: partition}) != nil
}

// Reads reports whether the reader reads a topic.
func (r *Reader) Reads(topic string) bool { return slices.Contains(r.cfg.Topics, topic) }

// ReadCommitted reports isolation.level=read_committed.
func (r *Reader) ReadCommitted() bool { return r.cfg.Isolation == "read_committed" }
