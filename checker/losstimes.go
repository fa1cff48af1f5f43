package checker

import (
	"cmp"
	"math"
	"slices"

	"kafkasim/godview"
	"kafkasim/history"
)

// lossOps places the losses the god view saw among the history's
// operations, which the checks compare by index: for each loss (in the order
// of Happened.Of), the index of the first operation at or after its time. A
// read that completed before that index was served while the log still held
// what the loss took.
type lossOps struct {
	losses []godview.Fact
	at     []int64 // by loss: the first operation's index; MaxInt64 until one comes; -1: time unknown
	order  []int32 // the losses with a known time, by time
	next   int     // the first of order that no operation has reached yet
}

func newLossOps(l godview.List) lossOps {
	losses := l.Of(godview.Loss)
	lo := lossOps{losses: losses, at: make([]int64, len(losses))}
	for i := range losses {
		if losses[i].At <= 0 {
			lo.at[i] = -1
			continue
		}
		lo.at[i] = math.MaxInt64
		lo.order = append(lo.order, int32(i))
	}
	slices.SortStableFunc(lo.order, func(x, y int32) int { return cmp.Compare(losses[x].At, losses[y].At) })
	return lo
}

// see places the losses that happened by the time of operation index.
func (lo *lossOps) see(index, time int64) {
	for lo.next < len(lo.order) && lo.losses[lo.order[lo.next]].At <= time {
		lo.at[lo.order[lo.next]] = index
		lo.next++
	}
}

// lastLossOf is the latest loss (by time) that took offset of partition,
// its LeaderEnd, and the index of the first operation after it; ok false if
// the god view saw none there with a known time.
func (a *analyzer) lastLossOf(partition string, offset int64) (leaderEnd, op int64, ok bool) {
	losses := a.lossOps.losses
	var last *DataLoss
	for i := range losses {
		if l := &losses[i]; l.Covers(partition, offset) && a.lossOps.at[i] >= 0 && (last == nil || l.At >= last.At) {
			last, op = l, a.lossOps.at[i]
		}
	}
	if last == nil {
		return 0, 0, false
	}
	return last.LeaderEnd, op, true
}

// offsetsLossBetween finds a loss in group's partition of __consumer_offsets
// that the god view saw after operation from began and no later than
// operation to: the first operation at or after the loss's time lies in
// (from, to].
func (a *analyzer) offsetsLossBetween(c *Config, group string, from, to int64) (DataLoss, bool) {
	return a.offsetsLossWhere(c, group, from, to, func(int64) bool { return true })
}

// offsetsLossTakingCommitPast is offsetsLossBetween for a loss that can
// have taken a commit of group past offset of partition: one such commit,
// not refused, was invoked before the loss. Without one, the coordinator
// never held an offset past the record for a loss to take.
func (a *analyzer) offsetsLossTakingCommitPast(c *Config, group, partition string, offset, from, to int64) (DataLoss, bool) {
	id, ok := a.groups.regIDs[regKey{group, partition}]
	if !ok {
		return DataLoss{}, false
	}
	commits := a.groups.regs[id].commits // in invocation order
	return a.offsetsLossWhere(c, group, from, to, func(at int64) bool {
		for i := range commits {
			if commits[i].invoke >= at {
				break
			}
			if commits[i].value > offset && commits[i].typ != history.Fail {
				return true
			}
		}
		return false
	})
}

// offsetsLossWhere is the first loss in group's partition of
// __consumer_offsets whose first operation lies in (from, to] and for
// which ok holds of that operation.
func (a *analyzer) offsetsLossWhere(c *Config, group string, from, to int64, ok func(at int64) bool) (DataLoss, bool) {
	for i := range a.lossOps.losses {
		l := &a.lossOps.losses[i]
		if at := a.lossOps.at[i]; c.holdsGroup(l.Partition, group) && at > from && at <= to && ok(at) {
			return *l, true
		}
	}
	return DataLoss{}, false
}

// lossBetween is the first loss the god view saw of offset of partition
// whose first operation lies in (from, to].
func (a *analyzer) lossBetween(partition string, offset, from, to int64) (DataLoss, bool) {
	for i := range a.lossOps.losses {
		l := &a.lossOps.losses[i]
		if at := a.lossOps.at[i]; l.Covers(partition, offset) && at > from && at <= to {
			return *l, true
		}
	}
	return DataLoss{}, false
}

// lossTakingRead is the first loss the god view saw of offset of partition
// whose first operation comes no later than operation to, and that took
// record val a processor read there: an operation had seen val at the
// offset (acknowledged or read) before the loss, and final reads do not
// hold it there. The reader fetched it before the loss, though its poll
// may have returned it after: a consumer's poll hands out what earlier
// fetches left in its fetch buffer (Kafka's FetchBuffer, CompletedFetch)
// without asking the leader again, and no leader's log held val at the
// offset after the loss. So the loss truncated the log under a position
// already past the offset.
func (a *analyzer) lossTakingRead(partition string, offset int64, val int32, to int64) (DataLoss, bool) {
	pi := a.partByName(partition)
	if val < 0 || pi < 0 {
		return DataLoss{}, false
	}
	obs := a.parts[pi].obsAt(offset)
	first := int64(math.MaxInt64)
	for _, o := range obs {
		if o.val != val {
			continue
		}
		if a.obsFlags(&o)&obsFinal != 0 {
			return DataLoss{}, false // the log still holds it
		}
		first = min(first, o.op)
	}
	for i := range a.lossOps.losses {
		l := &a.lossOps.losses[i]
		if at := a.lossOps.at[i]; l.Covers(partition, offset) && at > first && at <= to {
			return *l, true
		}
	}
	return DataLoss{}, false
}

// lossUnderSkip is the first loss the god view saw of offset of partition
// after operation op (a reader's jump over the offset), at an election whose
// new leader's log did not reach the offset (LeaderEnd), such that no record
// final reads hold there (those a read_committed reader must see, when rc)
// was seen there, acknowledged or read, before the loss: the committed
// entry the reader passed over (a record, or a control record or an aborted
// transaction's record to a read_committed reader) went with the loss, and
// what stands there now was appended after it. A new leader that held an
// older epoch's entry at the offset is left to the other rules (that entry
// was in a log before the jump), unless the god view saw that very
// election make the entry the log although it was never committed
// (Resurrected at the loss's time): no reader can have read it before, so
// what the reader passed over was the lost log's entry there (fuzz seed
// 102592: a read_committed reader passed over two offsets of control or
// aborted records; the unclean election put an older epoch's uncommitted
// records there).
func (a *analyzer) lossUnderSkip(partition string, offset, op int64, rc bool) (DataLoss, bool) {
	pi := a.partByName(partition)
	if pi < 0 {
		return DataLoss{}, false
	}
	obs := a.parts[pi].obsAt(offset)
	for i := range a.lossOps.losses {
		l := &a.lossOps.losses[i]
		at := a.lossOps.at[i]
		if !l.Covers(partition, offset) || at <= op {
			continue
		}
		if offset < l.LeaderEnd && !a.resurrectedBy(l, offset) {
			continue
		}
		seenBefore := false
		for _, o := range obs {
			if a.obsFlags(&o)&obsFinal == 0 || (rc && !a.visibleToRC(o.val)) {
				continue
			}
			for _, e := range obs {
				seenBefore = seenBefore || e.val == o.val && e.op < at
			}
		}
		if !seenBefore {
			return *l, true
		}
	}
	return DataLoss{}, false
}

// resurrectedBy reports whether the election of loss l made the entry at
// offset of l's partition the log although it was never committed (god
// view Resurrected, recorded at the election's time).
func (a *analyzer) resurrectedBy(l *DataLoss, offset int64) bool {
	_, ok := a.cfg.Happened.First(godview.Resurrected, func(r *godview.Fact) bool {
		return r.At == l.At && r.Covers(l.Partition, offset)
	})
	return ok
}
