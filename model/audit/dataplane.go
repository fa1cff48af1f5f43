package audit

import (
	"fmt"
	"kafkasim/internal/chunked"
	"math"
	"slices"
	"strings"

	"kafkasim/model/metadata"
	"kafkasim/model/partlog"
	"kafkasim/model/record"
	"kafkasim/sim"
)

// The data plane's invariants.
//
//   - partition-replicas-agree-below-hw: a batch below any replica's high
//     watermark is the batch committed at that offset;
//   - committed-data-kept: a committed batch is never truncated away or
//     replaced, except where Kafka permits it, which is reported as a loss
//     event instead: after an unclean election (the new leader never had it),
//     or after every copy that could have saved it was lost from page cache
//     in a power loss (the flush policy did not make it durable);
//   - acked-on-every-isr-member: a write acknowledged with acks=all while the
//     ISR was at least min.insync.replicas is on every ISR member when it is
//     acknowledged, and on every replica that joins the ISR later.
const (
	PartitionReplicasAgree = "partition-replicas-agree-below-hw"
	CommittedDataKept      = "committed-data-kept"
	AckedOnEveryISRMember  = "acked-on-every-isr-member"
)

// DataPlaneInvariants lists the data plane's invariants.
var DataPlaneInvariants = []string{PartitionReplicasAgree, CommittedDataKept, AckedOnEveryISRMember}

// Loss is committed data lost in a way Kafka's configuration permits.
type Loss struct {
	At        int64 // virtual nanoseconds
	Partition string
	From, To  int64 // offsets [From, To) lost
	Records   int
	// Cause is the root cause: "unclean-election", "power-loss",
	// "disk-wipe" or "disk-corruption" (causeOf).
	Cause string
	// ExposedBy: "unclean-election" when the cause is a power loss or a disk
	// fault that had already taken every in-sync copy, and an unclean
	// election (or KIP-966's election of the last known leader) then only
	// exposed the loss; "" otherwise.
	ExposedBy string
	// LeaderEnd: a loss at an election, the new leader's log end then.
	// Its records in [From, LeaderEnd) are older epochs' (never committed)
	// that now stand where committed ones stood; a reader's KIP-320
	// validation cannot see that divergence. 0 otherwise.
	LeaderEnd int64
}

type batchKey struct {
	base    int64
	last    int64
	pid     int64
	epoch   int32
	seq     int32
	pepoch  int16 // the producer epoch
	crc     uint32
	thinned bool
}

// batchRetry identifies a batch a producer sent again (one a leader answered
// OUT_OF_ORDER_SEQUENCE_NUMBER, or took from a producer it held no state
// for): its producer id, epoch, first sequence and length, and the broker.
type batchRetry struct {
	pid       int64
	seq       int32
	lastDelta int32
	pepoch    int16
	broker    int32
}

func retryOf(b *record.Batch, broker int32) batchRetry {
	return batchRetry{pid: b.ProducerID, seq: b.BaseSequence, lastDelta: b.LastOffsetDelta, pepoch: b.ProducerEpoch, broker: broker}
}

// waitingMax bounds what an audit partition keeps waiting for a commit.
const waitingMax = 256

// unknownAppend is a batch a leader appended from a producer it held no
// state for: where, and whose.
type unknownAppend struct {
	base, last int64
	pid        int64
	seq        int32
	pepoch     int16
	broker     int32
}

func (u unknownAppend) matches(k batchKey) bool {
	return k.base == u.base && k.last == u.last && k.pid == u.pid && k.pepoch == u.pepoch && k.seq == u.seq
}

func (r batchRetry) matches(k batchKey) bool {
	return k.pid == r.pid && k.pepoch == r.pepoch && k.seq == r.seq && k.last-k.base == int64(r.lastDelta)
}

func keyOf(b *record.Batch) batchKey {
	return batchKey{base: b.BaseOffset, last: b.LastOffset(), epoch: b.PartitionLeaderEpoch, pid: b.ProducerID,
		seq: b.BaseSequence, pepoch: b.ProducerEpoch, crc: b.CRC(), thinned: b.Thinned()}
}

func (k batchKey) same(o batchKey) bool {
	if k.base != o.base || k.last != o.last || k.epoch != o.epoch || k.pid != o.pid || k.seq != o.seq {
		return false
	}
	return k.thinned || o.thinned || k.crc == o.crc // compaction rewrites batches
}

type partitionAudit struct {
	committed chunked.List[batchKey] // committed batches, by offset
	// outOfOrder: retries a leader answered OUT_OF_ORDER_SEQUENCE_NUMBER
	// while no committed batch matched them yet (the batch may be in the
	// log, not yet committed); a batch committed later that matches one
	// was forgotten the same way (fuzz seed 2217). Oldest first, bounded.
	outOfOrder []batchRetry
	// unknownAppends: batches a leader appended at a sequence other than
	// 0 from a producer it held no state for, until they commit (then
	// they are recorded) or age out (waitingMax).
	unknownAppends []unknownAppend
	// checks: how far each replica's high watermark has been checked (a
	// replica set is a handful of brokers: a list, not maps).
	checks []replicaCheck
	// permitted says a committed batch may now vanish: an unclean election,
	// or a recovery that lost page cache, happened since.
	// uncleanElections: each unclean election's leader epoch and where its
	// loss began; a leader of an earlier epoch is deposed by it.
	uncleanElections []uncleanElection
	powerLossFrom    int64
	// shortSince: brokers whose log came back from a power loss shorter
	// than what was committed, and that have not joined the ISR since.
	// Only such a broker can lack committed data the way Kafka permits; one
	// that joined the ISR claimed to have caught up.
	shortSince map[int32]shortRange
	// diskCause: brokers of shortSince whose log came back short because
	// of their disk, not only their page cache: "disk-wipe" (replaced) or
	// "disk-corruption" (recovery cut a batch that failed its checks);
	// they lost what they had fsynced too. diskFaults is each broker's
	// disk wipe, corruption and power-loss counts when its replica was last
	// opened.
	diskCause  map[int32]string
	diskFaults map[int32][3]uint64
	ackedUpTo  int64 // last offset acknowledged with acks=all, -1
	// leaderEpoch is the highest leader epoch a broker took up.
	leaderEpoch int32
	// proposedShort: members a leader proposed for the ISR while their log
	// ended before an acknowledged write (the log end they had then).
	proposedShort map[int32]int64
	// epochCheckpointRead: a replica recovered from a leader-epoch
	// checkpoint a bit flip had hit; the file may be rewritten since, its
	// numbers live on in that replica's epoch cache.
	epochCheckpointRead bool
	// expiredBelow: the highest log start any replica reported (ReplicaHW).
	expiredBelow int64
}

// SetReplicas gives the audit its god view of replica logs.
func (a *Audit) SetReplicas(lookup func(broker int32, tp metadata.TopicPartition) *partlog.Log) {
	a.replicas = lookup
}

// Losses are the permitted losses of committed data, in order.
func (a *Audit) Losses() []Loss { return a.losses }

// Forgotten is a committed idempotent batch whose retry a leader answered
// OUT_OF_ORDER_SEQUENCE_NUMBER: its producer state no longer held the batch.
// Kafka's does that after a restart: the producer-state snapshot keeps each
// producer's last batch only, and the log it replays after the snapshot may
// have lost the batch to the cleaner. The producer then bumps its epoch and
// sends the batch again under new sequences (KIP-360): it is written twice.
type Forgotten = OffsetRange

// OffsetRange is a partition's offsets [From, To) the audit records
// something of, and when.
type OffsetRange struct {
	At        int64 // virtual nanoseconds
	Partition string
	From, To  int64
}

// ForgottenBatches are the committed batches leaders forgot, in order.
func (a *Audit) ForgottenBatches() []Forgotten { return a.forgotten }

// ResurrectedRanges are, per unclean election, the offsets [From, To) of
// the new leader's log that were never committed — writes it took in an
// earlier epoch that no producer had acknowledged — which the election made
// the partition's log. A producer that had given such a write up (it
// retried elsewhere, was told OUT_OF_ORDER_SEQUENCE_NUMBER by a leader that
// lacked it, bumped its epoch and sent it again) finds it written twice:
// idempotence cannot match sequences across producer epochs (fuzz seed
// 4008635).
func (a *Audit) ResurrectedRanges() []OffsetRange { return a.resurrected }

// OutOfOrderSequence is told that a leader answered OUT_OF_ORDER_SEQUENCE_NUMBER
// to batch b: if b is a retry of a committed batch (same producer id, epoch
// and sequences), the leader's producer state forgot it, and that is
// recorded.
func (a *Audit) OutOfOrderSequence(broker int32, tp metadata.TopicPartition, b *record.Batch) {
	if b.ProducerID < 0 {
		return
	}
	p := a.part(tp)
	r := retryOf(b, broker)
	for i := p.committed.Len() - 1; i >= 0; i-- {
		if k := *p.committed.At(i); r.matches(k) {
			a.forgetCommitted(tp, r, k)
			return
		}
	}
	// Not committed yet: the leader's log may hold it all the same, and a
	// later high watermark commit it (outOfOrderCommitted).
	if len(p.outOfOrder) == waitingMax {
		p.outOfOrder = p.outOfOrder[1:]
	}
	p.outOfOrder = append(p.outOfOrder, r)
}

// committedNow notes that batch k was just committed, for the records that
// wait on a commit.
func (a *Audit) committedNow(tp metadata.TopicPartition, p *partitionAudit, k batchKey) {
	if len(p.outOfOrder) > 0 {
		a.outOfOrderCommitted(tp, p, k)
	}
	if len(p.unknownAppends) > 0 {
		a.unknownAppendCommitted(tp, p, k)
	}
}

// unknownAppendCommitted records batch k, just committed, if a leader
// appended it from a producer it held no state for (UnknownProducerAppends).
func (a *Audit) unknownAppendCommitted(tp metadata.TopicPartition, p *partitionAudit, k batchKey) {
	for i, u := range p.unknownAppends {
		if !u.matches(k) {
			continue
		}
		p.unknownAppends = slices.Delete(p.unknownAppends, i, i+1)
		r := OffsetRange{At: int64(a.w.Now()), Partition: tp.String(), From: k.base, To: k.last + 1}
		a.unknownProducerAppends = append(a.unknownProducerAppends, r)
		a.w.Note("producer-state", fmt.Sprintf("%s: committed offsets %d..%d (producer %d, epoch %d, sequence %d), which broker %d appended from a producer its producer state held nothing of",
			tp, r.From, r.To-1, k.pid, k.pepoch, k.seq, u.broker))
		return
	}
}

// outOfOrderCommitted is told that batch k was just committed: if a leader
// had answered OUT_OF_ORDER_SEQUENCE_NUMBER to a retry of it, the leader's
// producer state had forgotten it, and that is recorded.
func (a *Audit) outOfOrderCommitted(tp metadata.TopicPartition, p *partitionAudit, k batchKey) {
	for i, r := range p.outOfOrder {
		if r.matches(k) {
			p.outOfOrder = slices.Delete(p.outOfOrder, i, i+1)
			a.forgetCommitted(tp, r, k)
			return
		}
	}
}

// forgetCommitted records committed batch k as one a leader's producer state
// forgot (it answered OUT_OF_ORDER_SEQUENCE_NUMBER to retry r of it).
func (a *Audit) forgetCommitted(tp metadata.TopicPartition, r batchRetry, k batchKey) {
	f := Forgotten{At: int64(a.w.Now()), Partition: tp.String(), From: k.base, To: k.last + 1}
	if n := len(a.forgotten); n == 0 || a.forgotten[n-1].Partition != f.Partition || a.forgotten[n-1].From != f.From {
		a.forgotten = append(a.forgotten, f)
		a.w.Note("producer-state", fmt.Sprintf("%s: broker %d answered OUT_OF_ORDER_SEQUENCE_NUMBER to a retry of committed offsets %d..%d (producer %d, sequence %d): its producer state no longer held them",
			tp, r.broker, f.From, f.To-1, r.pid, r.seq))
	}
}

// ProducerForgotten is a committed idempotent batch whose retry a leader took
// as new: retention had deleted the batch below the leader's log start, and
// the leader's producer state no longer knew its producer at all. Kafka's
// keeps a producer whose batches retention deleted in memory (KIP-360) and
// in the snapshots it takes, but loses it when it reloads producer state
// from the log without a snapshot that still has it — after an unclean
// shutdown, the snapshots at or below the log start, or past the segment
// being recovered, are deleted first (a clean restart's snapshot is past the
// active segment's base) — or when it copied the log from past the batch (a
// new follower). Then it takes a batch of a producer it does not know at any
// sequence (ProducerAppendInfo.checkSequence), and the retry is written twice.
type ProducerForgotten = OffsetRange

// ForgottenProducers are the committed batches whose retry a leader took as
// new because retention and a reload of producer state forgot the producer,
// in order.
func (a *Audit) ForgottenProducers() []ProducerForgotten { return a.forgottenProducers }

// UnknownProducerAppends are the batches leaders appended, at a sequence
// other than 0, from a producer their producer state held nothing of, in
// order. Kafka 4.2's broker (ProducerAppendInfo.checkSequence) takes
// such a batch at any sequence (KIP-360): when an earlier batch of the same
// producer, in flight beside it, was refused without being appended
// (NOT_ENOUGH_REPLICAS, NOT_LEADER_OR_FOLLOWER), that one can be written only
// after it, under a new producer epoch (KAFKA-15591).
func (a *Audit) UnknownProducerAppends() []OffsetRange { return a.unknownProducerAppends }

// UnknownProducer is told that a leader whose producer state holds nothing of
// batch b's producer is about to append b at offset base; its log starts at
// logStart and its producer state was last rebuilt from rebuiltFrom
// (partlog's ProducersRebuiltFrom). A batch at a sequence other than 0 is
// recorded (UnknownProducerAppends). If b is a retry of a committed batch
// (same producer id, epoch and sequences) that lies below both, retention
// deleted the batch and a reload (or a log copied from past it) forgot the
// producer, as Kafka's can, and that is recorded. Anything else (a batch the
// log still holds, or one the last rebuild replayed) is a producer state lost
// some other way: not excused.
func (a *Audit) UnknownProducer(broker int32, tp metadata.TopicPartition, b *record.Batch, base, logStart, rebuiltFrom int64) {
	if b.ProducerID < 0 {
		return
	}
	p := a.part(tp)
	if b.BaseSequence != 0 {
		// Recorded once this very batch commits (unknownAppendCommitted):
		// an append that fails, or is truncated away, excuses nothing.
		if len(p.unknownAppends) == waitingMax {
			p.unknownAppends = p.unknownAppends[1:]
		}
		p.unknownAppends = append(p.unknownAppends, unknownAppend{base: base, last: base + int64(b.LastOffsetDelta),
			pid: b.ProducerID, seq: b.BaseSequence, pepoch: b.ProducerEpoch, broker: broker})
	}
	r := retryOf(b, broker)
	for i := p.committed.Len() - 1; i >= 0; i-- {
		k := *p.committed.At(i)
		if !r.matches(k) {
			continue
		}
		if k.last >= logStart || k.last >= rebuiltFrom {
			return // the log holds it, or the last rebuild replayed it
		}
		f := ProducerForgotten{At: int64(a.w.Now()), Partition: tp.String(), From: k.base, To: k.last + 1}
		if n := len(a.forgottenProducers); n == 0 || a.forgottenProducers[n-1].Partition != f.Partition || a.forgottenProducers[n-1].From != f.From {
			a.forgottenProducers = append(a.forgottenProducers, f)
			a.w.Note("producer-state", fmt.Sprintf("%s: broker %d took a retry of committed offsets %d..%d (producer %d, sequence %d) as new: retention deleted them below its log start %d, and its producer state, rebuilt from offset %d, no longer knew the producer",
				tp, broker, f.From, f.To-1, b.ProducerID, b.BaseSequence, logStart, rebuiltFrom))
		}
		return
	}
}

// topicAudit holds a topic's partitions by number.
type topicAudit struct {
	name  string
	parts []*partitionAudit
}

// part is a partition's audit state. It is asked for after every
// acknowledgement and high-watermark move: partitions are found by topic
// (the last one at hand) and number, with no hashing of the pair.
// replicaCheck is how far the audit has checked one replica of a
// partition.
type replicaCheck struct {
	broker int32
	// hw is the high watermark checked up to.
	hw int64
	// hint is where in committed the last check ended, the next one
	// starts there (-1: none yet).
	hint int
}

// findCheck returns broker's entry, or nil.
func (p *partitionAudit) findCheck(broker int32) *replicaCheck {
	for i := range p.checks {
		if p.checks[i].broker == broker {
			return &p.checks[i]
		}
	}
	return nil
}

// check returns broker's entry, added (nothing checked yet) if missing.
func (p *partitionAudit) check(broker int32) *replicaCheck {
	if c := p.findCheck(broker); c != nil {
		return c
	}
	p.checks = append(p.checks, replicaCheck{broker: broker, hint: -1})
	return &p.checks[len(p.checks)-1]
}

func (a *Audit) part(tp metadata.TopicPartition) *partitionAudit {
	t := a.lastTopic
	if t == nil || t.name != tp.Topic {
		if a.parts == nil {
			a.parts = map[string]*topicAudit{}
		}
		t = a.parts[tp.Topic]
		if t == nil {
			t = &topicAudit{name: tp.Topic}
			a.parts[tp.Topic] = t
		}
		a.lastTopic = t
	}
	for int(tp.Partition) >= len(t.parts) {
		t.parts = append(t.parts, nil)
	}
	p := t.parts[tp.Partition]
	if p == nil {
		p = &partitionAudit{powerLossFrom: -1, ackedUpTo: -1}
		t.parts[tp.Partition] = p
	}
	return p
}

func (a *Audit) brokerNode(b int32) sim.NodeID {
	id, _ := a.w.Lookup(fmt.Sprintf("broker-%d", b))
	return id
}

// flipped reports whether broker's replica of tp holds a batch whose header
// a bit flip changed where the CRC does not look (a base offset, a leader
// epoch): corruption nothing in Kafka detects. What such a replica breaks is
// a cost of that corruption, not a broken guarantee.
func (a *Audit) flipped(broker int32, tp metadata.TopicPartition) bool {
	if a.replicas == nil {
		return false
	}
	if a.part(tp).epochCheckpointRead || a.epochCheckpointFlipped(tp) {
		return true
	}
	flips := a.w.Disk(a.brokerNode(broker)).Flips()
	if len(flips) == 0 {
		return false
	}
	l := a.replicas(broker, tp)
	return l != nil && l.HeaderFlipped(flips)
}

// epochCheckpointFlipped reports whether a bit flip hit tp's
// leader-epoch-checkpoint on any broker: a number changed there (the file has
// no checksum, in Kafka either) can make that replica, as leader, tell its
// followers a wrong end for an epoch, and what they then keep or drop is a
// cost of the corruption.
func (a *Audit) epochCheckpointFlipped(tp metadata.TopicPartition) bool {
	for b := int32(1); ; b++ {
		id, ok := a.w.Lookup(fmt.Sprintf("broker-%d", b))
		if !ok {
			return false
		}
		if epochCheckpointFlippedOn(a.w.Disk(id), tp) {
			return true
		}
	}
}

func epochCheckpointFlippedOn(d *sim.Disk, tp metadata.TopicPartition) bool {
	suffix := "/" + tp.String() + "/leader-epoch-checkpoint"
	for _, f := range d.Flips() {
		if strings.HasSuffix(f.File, suffix) {
			return true
		}
	}
	return false
}

// committedAt finds the committed batch holding offset.
func (p *partitionAudit) committedAt(offset int64) (int, bool) {
	i := p.committed.Search(func(k *batchKey) bool { return k.last >= offset })
	return i, i < p.committed.Len() && p.committed.At(i).base <= offset
}

// committedNear is committedAt for a scan in offset order: hint is where the
// previous offset was found, and the answer is almost always at or just
// after it.
func (p *partitionAudit) committedNear(offset int64, hint int) (int, bool) {
	for i := max(hint, 0); i < p.committed.Len() && i < hint+4; i++ {
		if p.committed.At(i).last >= offset {
			if i == 0 || p.committed.At(i-1).last < offset {
				return i, p.committed.At(i).base <= offset
			}
			break
		}
	}
	return p.committedAt(offset)
}

func (p *partitionAudit) committedEnd() int64 {
	if p.committed.Len() == 0 {
		return 0
	}
	return p.committed.Last().last + 1
}

// lose drops committed batches from index i on; if Kafka permits the loss it
// is recorded as one, otherwise as a violation of invariant.
func (a *Audit) lose(tp metadata.TopicPartition, p *partitionAudit, i int, broker int32, leaderEnd int64, invariant, how string) {
	from, to := p.committed.At(i).base, p.committed.Last().last+1
	records := 0
	for j := i; j < p.committed.Len(); j++ {
		k := p.committed.At(j)
		records += int(k.last - k.base + 1)
	}
	cause, exposedBy := a.causeOf(tp, p, from, broker)
	if cause == "" {
		a.report(invariant, a.brokerNode(broker), "%s: committed offsets %d..%d %s", tp, from, to-1, how)
	} else {
		a.losses = append(a.losses, Loss{At: int64(a.w.Now()), Partition: tp.String(), From: from, To: to, Records: records,
			Cause: cause, ExposedBy: exposedBy, LeaderEnd: leaderEnd})
		why := cause
		if exposedBy != "" {
			why += ", exposed by " + exposedBy
		}
		a.w.Note("data-loss", fmt.Sprintf("%s: committed offsets %d..%d lost (%s): %s", tp, from, to-1, why, how))
	}
	p.committed.Truncate(i)
	if p.ackedUpTo >= from {
		p.ackedUpTo = from - 1
	}
}

// deposedExposed records, as lost with the unclean election that deposed
// it, what a leader of leaderEpoch exposed below its high watermark (moving
// from from to hw) past where the unclean leader's log stops: readers saw
// those records and producers had them acknowledged, and they go when the
// deposed leader learns the new epoch. Adjacent ranges join one loss.
func (a *Audit) deposedExposed(tp metadata.TopicPartition, p *partitionAudit, leaderEpoch int32, from, hw int64, log *partlog.Log) {
	for _, e := range p.uncleanElections {
		if e.epoch > leaderEpoch {
			from = max(from, e.from)
		}
	}
	if from >= hw {
		return
	}
	records := 0
	log.Scan(from, hw, func(b *record.Batch) bool {
		if !b.Thinned() {
			records += int(min(hw, b.NextOffset()) - max(from, b.BaseOffset))
			return true
		}
		for _, r := range b.Records() {
			if off := b.BaseOffset + int64(r.OffsetDelta); off >= from && off < hw {
				records++
			}
		}
		return true
	})
	if records == 0 {
		return
	}
	if n := len(a.losses); n > 0 {
		if l := &a.losses[n-1]; l.Partition == tp.String() && l.Cause == CauseUncleanElection && l.To == from {
			l.To, l.Records = hw, l.Records+records
			return
		}
	}
	a.losses = append(a.losses, Loss{At: int64(a.w.Now()), Partition: tp.String(), From: from, To: hw, Records: records, Cause: CauseUncleanElection})
	a.w.Note("data-loss", fmt.Sprintf("%s: offsets %d..%d exposed by the deposed leader of epoch %d lost (unclean-election)", tp, from, hw-1, leaderEpoch))
}

// cleaned reports whether a batch at offset that log lacks is a gap its
// cleaner left: the log compacts and offset lies inside it (every record of
// the batch had a later one with its key). What compaction must keep, each
// key's latest record, the checker judges from the history.
func cleaned(log *partlog.Log, offset int64) bool {
	return log.Compacted() && offset < log.LEO()
}

// ReplicaHW checks the batches a replica's high watermark passed.
func (a *Audit) ReplicaHW(broker int32, tp metadata.TopicPartition, leaderEpoch int32, leader bool, hw int64, log *partlog.Log) {
	p := a.part(tp)
	check := p.check(broker)
	from := check.hw
	check.hw = hw
	if hw <= from {
		return
	}
	// The furthest any replica's retention has gone: committed batches
	// below it have expired, and a stale copy below it elsewhere (kept by
	// a follower that a leader whose cache starts past its epoch told to
	// truncate there, as Kafka's does) is unreadable and will expire too.
	p.expiredBelow = max(p.expiredBelow, log.LogStartOffset())
	if p.deposedBy(leaderEpoch) {
		// A replica still in an epoch an unclean election of a later one
		// deposed (a leader that was paused, or a follower of it): its high
		// watermark moves by the stale ISR it knows, over batches the
		// unclean leader's log — now the partition's — never had. They go
		// when it learns the new epoch and truncates (fuzz seed 2002125).
		// A deposed leader exposes them to readers and acknowledges them
		// meanwhile (its metadata, caught up late, may even shrink its ISR
		// to the members it still has: fuzz seed 4000806), so they are
		// recorded as lost with the election that deposed it.
		if leader {
			a.deposedExposed(tp, p, leaderEpoch, from, hw, log)
		}
		return
	}
	hint := check.hint
	log.Scan(from, hw, func(b *record.Batch) bool {
		k := keyOf(b)
		i, found := p.committedNear(b.BaseOffset, hint)
		hint = i
		switch {
		case found && p.committed.At(i).same(k):
		case k.last < p.expiredBelow:
		case found && a.hiddenInCleanedEpochStart(tp, leaderEpoch, *p.committed.At(i), k):
		case found || (i < p.committed.Len() && p.committed.At(i).base <= k.last):
			a.lose(tp, p, i, broker, 0, PartitionReplicasAgree,
				fmt.Sprintf("differ on broker %d below its high watermark %d (leader epoch %d here)", broker, hw, k.epoch))
			p.committed.Append(k)
			a.committedNow(tp, p, k)
		case b.BaseOffset >= p.committedEnd():
			p.committed.Append(k)
			a.committedNow(tp, p, k)
		}
		return true
	})
	p.check(broker).hint = hint // found again: the scan may have added brokers
}

// hiddenInCleanedEpochStart reports whether a follower's batch k, in place of
// the committed batch c, sits where its leader (of leaderEpoch) cannot see
// the divergence: the leader's log compacts, holds nothing there (its cleaner
// removed c, or the cleaner of the replica it copied from did), and its epoch
// cache says k's older epoch runs on past k. That is how Kafka's follower
// builds its cache, from the first batch of each epoch it copies: a follower
// that copied c's epoch only after the cleaner had removed its first batches
// starts that epoch late, and as leader tells a replica still holding an
// older epoch's batch there that its epoch ends later; KIP-101's check
// cannot find it (fuzz seed 3009859). The stale batch is left for the history
// checker to judge if a reader ever meets it.
func (a *Audit) hiddenInCleanedEpochStart(tp metadata.TopicPartition, leaderEpoch int32, c, k batchKey) bool {
	if a.replicas == nil || k.epoch >= c.epoch {
		return false
	}
	leader, ok := a.partLeaders[epochLeader{epoch: leaderEpoch, tp: tp}]
	if !ok {
		return false
	}
	l := a.replicas(leader, tp)
	if l == nil || !l.Compacted() || k.last >= l.LEO() {
		return false
	}
	held := false
	l.Scan(k.base, k.last+1, func(b *record.Batch) bool {
		held = b.LastOffset() >= k.base
		return !held
	})
	if held {
		return false
	}
	e, end := l.Epochs().EndOffsetFor(k.epoch, l.LEO())
	return e == k.epoch && end > k.last
}

// ReplicaTruncated checks that no committed batch is thrown away.
func (a *Audit) ReplicaTruncated(broker int32, tp metadata.TopicPartition, to int64, removed []*record.Batch, why string) {
	p := a.part(tp)
	if c := p.findCheck(broker); c != nil && c.hw > to {
		c.hw = to
	}
	if a.replicas != nil {
		if l := a.replicas(broker, tp); l != nil && l.Compacted() {
			// A leader whose cleaner removed every batch of an epoch has
			// no entry for it: a follower that still holds that epoch is
			// told to truncate below it, committed batches included, and
			// copies back what the leader kept (fuzz seed 1000446). What
			// compaction must keep, each key's latest record, the checker
			// judges from the history.
			return
		}
	}
	for _, b := range removed {
		if b.LastOffset() < to {
			continue
		}
		if i, found := p.committedAt(b.BaseOffset); found && p.committed.At(i).same(keyOf(b)) {
			a.lose(tp, p, i, broker, 0, CommittedDataKept, fmt.Sprintf("truncated on broker %d (%s)", broker, why))
			return
		}
	}
}

// ReplicaRecovered notes a replica whose log came back shorter than what was
// committed (or disagreeing with it) because recovery lost data: a power loss
// took its page cache, its disk was replaced or corrupt. Committed data from
// there on may now be lost, if no other copy survives.
func (a *Audit) ReplicaRecovered(broker int32, tp metadata.TopicPartition, log *partlog.Log, rec partlog.Recovery) {
	p := a.part(tp)
	check := p.check(broker)
	check.hw = min(check.hw, log.LEO())
	if epochCheckpointFlippedOn(a.w.Disk(a.brokerNode(broker)), tp) {
		p.epochCheckpointRead = true
	}
	stats := a.w.Disk(a.brokerNode(broker)).Stats()
	now := [3]uint64{stats.Wipes, stats.Corruptions, a.w.ProcessStats(a.brokerNode(broker)).PowerLosses}
	before, opened := p.diskFaults[broker]
	if p.diskFaults == nil {
		p.diskFaults = map[int32][3]uint64{}
	}
	p.diskFaults[broker] = now
	// Only a recovery that lost something makes a replica short: a power
	// loss (page cache gone), a wipe, corruption, or a cut at recovery. A
	// process killed or shut down comes back with the log it left, which
	// was already as long as it was; calling it short would excuse, as a
	// power loss, committed data some other broker loses later.
	lostData := now != before || rec.CorruptionReason != "" || rec.TruncatedAt >= 0
	diskCause := diskCauseOf(opened, before, now, rec)
	if end := p.agreesUpTo(log); lostData && end < p.committedEnd() {
		if p.powerLossFrom < 0 || end < p.powerLossFrom {
			p.powerLossFrom = end
		}
		if p.shortSince == nil {
			p.shortSince = map[int32]shortRange{}
		}
		p.shortSince[broker] = shortRange{end: end, committedEnd: p.committedEnd()}
		if p.diskCause == nil {
			p.diskCause = map[int32]string{}
		}
		if diskCause != "" {
			p.diskCause[broker] = diskCause
		} else {
			delete(p.diskCause, broker)
		}
	}
	a.openedAfterElection(tp, p, broker, log, lostData, diskCause)
}

// diskCauseOf is why a replica's recovery lost data from its disk, not only
// from its page cache: "disk-wipe" (the disk was replaced) or
// "disk-corruption" (recovery cut the log at a batch that failed its
// checks); "" otherwise. before and now are the broker's disk wipe,
// corruption and power-loss counts when its replica was opened before
// (opened: it was) and now.
func diskCauseOf(opened bool, before, now [3]uint64, rec partlog.Recovery) string {
	switch {
	case opened && now[0] > before[0]:
		return CauseDiskWipe
	case rec.CorruptionReason != "" && (rec.CorruptionReason != record.ErrTruncated.Error() || (opened && now[1] > before[1])):
		// Recovery cut the log at a batch that failed its checks (not a
		// torn tail a power loss left): a bit flip or an unreadable range
		// took the batches from there on.
		return CauseDiskCorruption
	}
	return ""
}

// agreesUpTo is where a recovered log stops agreeing with what was
// committed: its end, or below it where it holds an older epoch's batch in
// place of a committed one. A power loss brings such a tail back when it
// undoes a truncation that never reached disk (Kafka does not fsync a
// truncation either): the writes a deposed leader took, never committed,
// stand again where the epochs after it committed theirs. A batch the log
// lacks below its end (below its start, or removed by compaction) is no
// disagreement.
func (p *partitionAudit) agreesUpTo(log *partlog.Log) int64 {
	end := log.LEO()
	i, _ := p.committedAt(log.LogStartOffset())
	cursor := log.Cursor(log.LogStartOffset())
	for ; i < p.committed.Len() && p.committed.At(i).base < end; i++ {
		k := *p.committed.At(i)
		if b := cursor.At(k.base); b != nil && !keyOf(b).same(k) {
			return k.base
		}
	}
	return end
}

// shortBelow reports whether a broker that lost page cache, and has not
// rejoined the ISR since, ends at or below offset.
func (p *partitionAudit) shortBelow(offset int64) bool {
	for _, r := range p.shortSince { // kafkasim:orderless: an existence test
		if r.end <= offset {
			return true
		}
	}
	return false
}

// shortRange is where a replica's log came back from a recovery that lost
// data: it ended at end (or stopped agreeing with what was committed
// there), when what was committed ended at committedEnd. The recovery can
// have taken only committed batches in [end, committedEnd): a batch
// committed later was never on that disk to lose.
type shortRange struct {
	end, committedEnd int64
}

// tookFromSomeone reports whether a recovery that lost data (see
// shortRange) took the committed batch at offset from a replica that has
// not rejoined the ISR since.
func (p *partitionAudit) tookFromSomeone(offset int64) bool {
	for _, r := range p.shortSince { // kafkasim:orderless: an existence test
		if r.end <= offset && offset < r.committedEnd {
			return true
		}
	}
	return false
}

// PartitionLeader checks a new leader's log against what was committed. A
// clean leader (from the ISR or the ELR) holds every committed batch, unless
// a power loss took them from page cache; an unclean one may not, which Kafka
// permits. What the new leader lacks is lost the moment it leads: every
// replica will truncate to its log.
func (a *Audit) PartitionLeader(broker int32, tp metadata.TopicPartition, leaderEpoch int32, log *partlog.Log, unclean bool) {
	p := a.part(tp)
	if leaderEpoch < p.leaderEpoch {
		// A broker catching up on metadata replays an election that a
		// later one replaced: it leads a stale epoch for a moment, and no
		// replica of the current epoch truncates to its log.
		return
	}
	p.leaderEpoch = leaderEpoch
	lost := -1 // the first committed batch the new leader lacks
	start := log.LogStartOffset()
	cursor := log.Cursor(start) // committed batches are in offset order
	for i := range p.committed.Len() {
		k := *p.committed.At(i)
		if k.last < start {
			continue // deleted by retention, as Kafka permits: not lost
		}
		b := cursor.At(k.base)
		if b == nil && cleaned(log, k.base) {
			continue // a different batch here is still a loss
		}
		if b == nil || !keyOf(b).same(k) {
			lost = i
			break
		}
	}
	if unclean {
		// An unclean leader's log is authoritative from where it stops
		// agreeing with what was committed: its end, or below it where it
		// holds a divergent tail of an older epoch (writes it took as a
		// deposed leader, never committed) in place of committed batches.
		from := log.LEO()
		if lost >= 0 {
			from = min(from, p.committed.At(lost).base)
		}
		p.uncleanElections = append(p.uncleanElections, a.uncleanElected(tp, p, broker, leaderEpoch, from, lost))
		// Its entries past what was committed (from the first committed
		// batch it lacks, if any) were never committed: they become the log.
		start := p.committedEnd()
		if lost >= 0 {
			start = p.committed.At(lost).base
		}
		if start < log.LEO() {
			a.resurrected = append(a.resurrected, OffsetRange{At: int64(a.w.Now()), Partition: tp.String(), From: start, To: log.LEO()})
		}
		// What was acknowledged past where its log stops agreeing is
		// gone: followers that truncate to it owe those writes nothing.
		p.ackedUpTo = min(p.ackedUpTo, from-1)
	}
	if lost >= 0 {
		n := len(a.losses)
		a.lose(tp, p, lost, broker, log.LEO(), CommittedDataKept,
			fmt.Sprintf("missing from the log of broker %d, elected leader in epoch %d", broker, leaderEpoch))
		if unclean && len(a.losses) > n {
			p.uncleanElections[len(p.uncleanElections)-1].loss = n
		}
	}
}

// deposedBy reports whether an unclean election of a later epoch than
// leaderEpoch happened.
func (p *partitionAudit) deposedBy(leaderEpoch int32) bool {
	return p.deposedLoses(leaderEpoch, math.MaxInt64)
}

// deposedLoses reports whether an unclean election of a later epoch than
// leaderEpoch lost offset: a write a leader of leaderEpoch acknowledged there
// went with that election.
func (p *partitionAudit) deposedLoses(leaderEpoch int32, offset int64) bool {
	for _, e := range p.uncleanElections {
		if e.epoch > leaderEpoch && e.from <= offset {
			return true
		}
	}
	return false
}

// AckedAll checks that an acks=all write is on every ISR member.
func (a *Audit) AckedAll(broker int32, tp metadata.TopicPartition, leaderEpoch int32, lastOffset int64, isr []int32, minISR int) {
	p := a.part(tp)
	if len(isr) < minISR || a.replicas == nil {
		return
	}
	// A leader deposed by an unclean election that has not learned it yet
	// still acknowledges with the ISR it knows (Kafka's Partition checks its
	// cached ISR; with min.insync.replicas=1 and itself alone in it, nothing
	// stops it). The new epoch's log never had those writes: they are lost
	// when the deposed leader truncates (committed-data-kept records the
	// loss, permitted by the unclean election), and the new epoch's ISR
	// owes them nothing. Nor does its own ISR: it counts each member by
	// the position that member last fetched from, and a member may have
	// truncated to the unclean leader's log since (a fetch that waited at
	// a paused leader moves its high watermark after the member followed
	// the new epoch; Kafka's Partition takes it as long as its metadata
	// knows no newer broker epoch).
	if p.deposedLoses(leaderEpoch, lastOffset) {
		return
	}
	p.ackedUpTo = max(p.ackedUpTo, lastOffset)
	leaderLog := a.replicas(broker, tp)
	if leaderLog == nil {
		return
	}
	want := leaderLog.BatchAt(lastOffset)
	for _, r := range isr {
		l := a.replicas(r, tp)
		if l == nil {
			continue // the replica is down; a restart recovers from its disk
		}
		if short, ok := p.shortSince[r]; ok && short.end <= lastOffset {
			// It came back from a power loss without the page cache that
			// held the write, and has not fetched it again: the leader
			// counts it by the position it reported before (Kafka does the
			// same until the follower fetches again). The default flush
			// policy permits this weakening; a loss it causes is reported
			// as a power loss.
			continue
		}
		got := l.BatchAt(lastOffset)
		if lastOffset < l.LogStartOffset() || lastOffset < leaderLog.LogStartOffset() {
			// Retention deleted it before the acknowledgement went out
			// (a retried write found in the producer state, answered with
			// its old offset): deleted, not missing.
			continue
		}
		if (got == nil && cleaned(l, lastOffset)) || (want == nil && cleaned(leaderLog, lastOffset)) {
			continue // the cleaner removed it before the acknowledgement went out
		}
		if (got == nil || want == nil || !keyOf(got).same(keyOf(want))) && !a.flipped(r, tp) && !a.flipped(broker, tp) {
			a.report(AckedOnEveryISRMember, a.brokerNode(broker), "%s offset %d acknowledged with acks=all, but broker %d of ISR %v does not hold it",
				tp, lastOffset, r, isr)
			return
		}
	}
}

// ISRProposed notes a member proposed for the ISR with a log that ends before
// an acknowledged write: if the proposal commits, the ISR holds a replica
// without that write (it may fetch it a moment later, but until then it can
// be elected without it).
func (a *Audit) ISRProposed(leader int32, tp metadata.TopicPartition, member int32, memberLEO int64) {
	p := a.part(tp)
	if p.proposedShort == nil {
		p.proposedShort = map[int32]int64{}
	}
	if memberLEO <= p.ackedUpTo {
		p.proposedShort[member] = memberLEO
	} else {
		delete(p.proposedShort, member)
	}
}

// ISRJoined checks that a replica joining the ISR holds every acknowledged
// write the leader holds.
func (a *Audit) ISRJoined(leader int32, tp metadata.TopicPartition, member int32) {
	p := a.part(tp)
	delete(p.shortSince, member)
	delete(p.diskCause, member)
	if leo, short := p.proposedShort[member]; short && !a.flipped(member, tp) && !a.flipped(leader, tp) {
		delete(p.proposedShort, member)
		a.report(AckedOnEveryISRMember, a.brokerNode(leader), "%s: broker %d joined the ISR with its log ending at %d, before acknowledged offset %d",
			tp, member, leo, p.ackedUpTo)
		return
	}
	if p.ackedUpTo < 0 || a.replicas == nil {
		return
	}
	ll, ml := a.replicas(leader, tp), a.replicas(member, tp)
	if ll == nil || ml == nil || a.flipped(member, tp) || a.flipped(leader, tp) {
		return
	}
	// Below either log's start, retention deleted what was there (each
	// broker deletes on its own schedule): nothing to compare.
	from := max(ml.LogStartOffset(), ll.LogStartOffset())
	cursor := ml.Cursor(from)
	ll.Scan(from, p.ackedUpTo+1, func(b *record.Batch) bool {
		got := cursor.At(b.BaseOffset)
		if got == nil && cleaned(ml, b.BaseOffset) {
			return true // the member's cleaner removed it
		}
		if got != b && (got == nil || !keyOf(got).same(keyOf(b))) {
			a.report(AckedOnEveryISRMember, a.brokerNode(leader), "%s: broker %d joined the ISR without acknowledged offset %d",
				tp, member, b.BaseOffset)
			return false
		}
		return true
	})
}
