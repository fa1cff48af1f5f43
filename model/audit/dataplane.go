package audit

import (
	"fmt"

	"kafkasim/model/metadata"
	"kafkasim/model/partlog"
	"kafkasim/model/record"
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

// cleaned reports whether a batch at offset that log lacks is a gap its
// cleaner left: the log compacts and offset lies inside it (every record of
// the batch had a later one with its key). What compaction must keep, each
// key's latest record, the checker judges from the history.
func cleaned(log *partlog.Log, offset int64) bool {
	return log.Compacted() && offset < log.LEO()
}

// headerFlipped reports whether log, broker's replica, holds a batch whose
// header a bit flip changed outside the CRC (Log.HeaderFlipped). A flipped
// base offset is taken as it reads, by recovery as by Kafka's
// LogSegment.recover (only the CRC, from the attributes on, is checked): the
// log may then end far past what was written (2^54 past it for bit 54), and
// a committed batch it lacks below that end is not a gap its cleaner left
// but data the corruption cost (fuzz seed 246045).
func (a *Audit) headerFlipped(broker int32, log *partlog.Log) bool {
	flips := a.w.Disk(a.brokerNode(broker)).Flips()
	return len(flips) > 0 && log.HeaderFlipped(flips)
}

// ReplicaHW checks the batches a replica's high watermark passed.
func (a *Audit) ReplicaHW(broker int32, tp metadata.TopicPartition, leaderEpoch int32, leader bool, hw int64, log *partlog.Log) {
	p := a.part(tp)
	if leader {
		a.leaderHW(broker, tp, leaderEpoch, hw, log)
	}
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
		case k.last() < p.expiredBelow:
		case found && a.hiddenInCleanedEpochStart(tp, leaderEpoch, *p.committed.At(i), k):
		case found || (i < p.committed.Len() && p.committed.At(i).base <= k.last()):
			a.lose(tp, p, i, broker, 0, PartitionReplicasAgree,
				fmt.Sprintf("differ on broker %d below its high watermark %d (leader epoch %d here)", broker, hw, k.epoch))
			p.committed.Append(k)
			a.committedNow(tp, p, k)
			a.txnCommitted(tp, p, b)
		case b.BaseOffset >= p.committedEnd():
			p.committed.Append(k)
			a.committedNow(tp, p, k)
			a.txnCommitted(tp, p, b)
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
	if l == nil || !l.Compacted() || k.last() >= l.LEO() {
		return false
	}
	held := false
	l.Scan(k.base, k.last()+1, func(b *record.Batch) bool {
		held = b.LastOffset() >= k.base
		return !held
	})
	if held {
		return false
	}
	e, end := l.Epochs().EndOffsetFor(k.epoch, l.LEO())
	return e == k.epoch && end > k.last()
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
	if p.deposedLoses(leaderEpoch, lastOffset, a.replicas(broker, tp)) {
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

// ISRJoined checks that a replica joining the ISR of a leader of leaderEpoch
// holds every acknowledged write the leader holds.
func (a *Audit) ISRJoined(leader int32, tp metadata.TopicPartition, leaderEpoch int32, member int32) {
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
	if leaderEpoch < p.leaderEpoch {
		// A deposed leader catching up on metadata (it was paused, say)
		// learns an ISR the controller committed epochs ago, before the
		// election that deposed it. Its log past the new epoch's start is
		// its own, soon truncated; the member's is the new leader's, and
		// what was acknowledged since is in that one: comparing the two now
		// says nothing about the join (fuzz seed 275581). The proposal was
		// judged when the leader made it (ISRProposed).
		return
	}
	ll, ml := a.replicas(leader, tp), a.replicas(member, tp)
	if ll == nil || ml == nil || a.flipped(member, tp) || a.flipped(leader, tp) {
		return
	}
	if off := p.joinMissing(leader, member, ll, ml); off >= 0 {
		a.report(AckedOnEveryISRMember, a.brokerNode(leader), "%s: broker %d joined the ISR without acknowledged offset %d",
			tp, member, off)
	}
}

// joinMissing is the first acknowledged offset (a batch's base) of its
// leader's log ll that member's log ml lacks, -1 if none. Below either
// log's start, retention deleted what was there (each broker deletes on
// its own schedule): nothing to compare. What the last join found still
// holds where neither log changed since: the comparison starts past it.
func (p *partitionAudit) joinMissing(leader, member int32, ll, ml *partlog.Log) int64 {
	from := max(ml.LogStartOffset(), ll.LogStartOffset())
	j := p.joinAgreementOf(leader, member)
	resume, gapFrom := j.resume(ll, ml, from, !ml.Compacted())
	upTo, missing := p.ackedUpTo+1, int64(-1)
	cursor := ml.Cursor(resume)
	ll.Scan(resume, upTo, func(b *record.Batch) bool {
		got := cursor.At(b.BaseOffset)
		if got == nil && cleaned(ml, b.BaseOffset) {
			gapFrom = min(gapFrom, b.BaseOffset)
			return true // the member's cleaner removed it
		}
		if got != b && (got == nil || !keyOf(got).same(keyOf(b))) {
			upTo, missing = b.BaseOffset, b.BaseOffset
			return false
		}
		return true
	})
	j.remember(ll, ml, from, upTo, gapFrom)
	return missing
}
