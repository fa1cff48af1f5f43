package checker

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"strconv"

	"kafkasim/godview"
	"kafkasim/history"
)

// The group members' checks that need the whole history (members.go keeps
// their records). Each sorts its records once: no check compares every pair.
//
//   - double-owner: two members of a group processed one partition in
//     overlapping time (a process operation runs from its invocation to its
//     completion, or to its process's crash or the history's end) at the same
//     generation or member epoch. Per (group, partition, generation) the
//     operations are swept in invocation order, keeping for each member the
//     one that ends last: an operation overlaps another member's if and only
//     if it begins before that member's last end so far. One finding per
//     pair of members that overlapped (the first overlap is the example);
//     the cost is the sort plus, per operation, the members of its
//     generation. (A member processing after it gave the partition up is
//     found as it is ingested.)
//   - reprocessed-record: a record processed (ok) more than once by a group.
//   - duplicate-side-effect: a record's effect acknowledged more than once
//     by a group whose store applies every effect (side-effects: plain).
//   - skipped-record: a record below the group's final committed offset for
//     its partition that no member began processing. Only records that were
//     there to process count: acknowledged and not lost, or read; not
//     taken by a loss the god view saw before the group had gone past its
//     offset (goneBeforeGroupPassed: the group owed what the log held
//     there after the loss); not sent, after such a loss, into an offset
//     the group had committed past, with no commit past it invoked since
//     (sentAfterGroupCommittedPast: no commit claimed it); not deleted by
//     retention (below the log start final reads began from);
//     not one the log cleaner of a compacted topic may have removed (its
//     key has a later record: compaction.go); not of an aborted (or never committed) transaction; not passed over by
//     auto.offset.reset=latest (a member that began above the committed
//     offset when there was none, or when it was out of range: below the log
//     start, or in a partition that lost committed data; or whose processing
//     jumped forward mid-session from a position out of range the same way;
//     a commit above such a position, before any record processed there,
//     is the same jump: Kafka commits a position reset by latest).

func (a *analyzer) checkGroupMembers() {
	m := &a.members
	if len(m.procs) == 0 && len(m.effects) == 0 {
		return
	}
	for i := range m.procs {
		if pr := &m.procs[i]; pr.open {
			pr.end, pr.endT = a.lastIndex+1, m.lastTime
		}
	}
	a.checkOverlaps()
	a.checkUnreleased()
	a.checkReprocessed()
	a.checkSideEffects()
	a.checkSkipped()
}

func (a *analyzer) genWord(group, process string) string {
	if a.cfg.consumerOf(group, process).GroupProtocol == "consumer" {
		return "member epoch"
	}
	return "generation"
}

func seconds(ns int64) string { return strconv.FormatFloat(float64(ns)/1e9, 'f', 3, 64) + " s" }

func (a *analyzer) checkOverlaps() {
	m := &a.members
	idx := make([]int32, 0, len(m.procs))
	for i := range m.procs {
		if m.procs[i].gen >= 0 {
			idx = append(idx, int32(i))
		}
	}
	sort.Slice(idx, func(i, j int) bool {
		x, y := &m.procs[idx[i]], &m.procs[idx[j]]
		if x.group != y.group {
			return x.group < y.group
		}
		if x.part != y.part {
			return x.part < y.part
		}
		if x.gen != y.gen {
			return x.gen < y.gen
		}
		return x.start < y.start
	})
	type pair struct{ group, part, gen, m1, m2 int32 }
	seen := map[pair]bool{}
	// Per member, its operation that ends last so far in this (group,
	// partition, generation): few members, so a short list.
	var last []int32
	for k, i := range idx {
		x := &m.procs[i]
		if k > 0 {
			prev := &m.procs[idx[k-1]]
			if prev.group != x.group || prev.part != x.part || prev.gen != x.gen {
				last = last[:0]
			}
		}
		mine := -1
		for j, o := range last {
			y := &m.procs[o]
			if y.member == x.member {
				mine = j
				continue
			}
			if y.end <= x.start {
				continue
			}
			pk := pair{x.group, x.part, x.gen, min(x.member, y.member), max(x.member, y.member)}
			if !seen[pk] {
				seen[pk] = true
				a.reportOverlap(y, x)
			}
		}
		switch {
		case mine < 0:
			last = append(last, i)
		case x.end > m.procs[last[mine]].end:
			last[mine] = i
		}
	}
}

// reportOverlap: y began before x and was still processing when x began.
func (a *analyzer) reportOverlap(y, x *processRec) {
	group := a.members.groupNames[x.group]
	py, px := a.procs[y.proc].name, a.procs[x.proc].name
	word := a.genWord(group, px)
	part := a.parts[x.part].name
	ops := []int64{y.start}
	if y.end <= a.lastIndex {
		ops = append(ops, y.end)
	}
	ops = append(ops, x.start)
	if x.end <= a.lastIndex {
		ops = append(ops, x.end)
	}
	who := func(pr *processRec, name string) string {
		if mid := a.members.members[pr.member]; mid != name {
			return name + " (member " + mid + ", " + word + " " + itoa(int64(pr.gen)) + ")"
		}
		return name + " (" + word + " " + itoa(int64(pr.gen)) + ")"
	}
	when := "from #" + itoa(x.start) + " to #" + itoa(min(x.end, y.end))
	if x.startT > 0 {
		when = "from " + seconds(x.startT) + " to " + seconds(min(x.endT, y.endT)) + " (#" + itoa(x.start) + "–#" + itoa(min(x.end, y.end)) + ")"
	}
	a.findings = append(a.findings, Finding{Type: DoubleOwner, group: group, Example: Example{Partition: part, Offset: x.off, Process: px, Ops: ops,
		Detail: "group " + group + ": " + who(y, py) + " and " + who(x, px) + " both processed " + part + " " + when +
			": " + py + " " + part + "@" + itoa(y.off) + ", " + px + " " + part + "@" + itoa(x.off)}})
}

// byRecord sorts record indexes by (group, partition, offset, then order).
func byRecord(idx []int32, key func(int32) (int32, int32, int64, int64)) {
	sort.Slice(idx, func(i, j int) bool {
		g1, p1, o1, s1 := key(idx[i])
		g2, p2, o2, s2 := key(idx[j])
		if g1 != g2 {
			return g1 < g2
		}
		if p1 != p2 {
			return p1 < p2
		}
		if o1 != o2 {
			return o1 < o2
		}
		return s1 < s2
	})
}

func (a *analyzer) checkReprocessed() {
	m := &a.members
	var idx []int32
	for i := range m.procs {
		if m.procs[i].ok {
			idx = append(idx, int32(i))
		}
	}
	byRecord(idx, func(i int32) (int32, int32, int64, int64) {
		pr := &m.procs[i]
		return pr.group, pr.part, pr.off, pr.start
	})
	for lo := 0; lo < len(idx); {
		hi := lo + 1
		first := &m.procs[idx[lo]]
		for hi < len(idx) && m.procs[idx[hi]].group == first.group && m.procs[idx[hi]].part == first.part && m.procs[idx[hi]].off == first.off {
			hi++
		}
		for _, run := range byValue(idx[lo:hi], func(i int32) int32 { return m.procs[i].val }) {
			a.reportReprocessed(run)
		}
		lo = hi
	}
}

// byValue splits the operations on one offset (in order) into those on one
// record, keeping the runs of more than one. Committed data that is lost
// leaves its offsets to new records (the new leader appends from where its
// log ends, LeaderEpochFileCache truncation on the followers): a member
// that reads the offset again then reads another record — after KIP-320's
// truncation detection moved its position back to the divergence, or after
// auto.offset.reset — and processing it is no reprocessing. When any
// operation's record is unknown, the offset stands for the record.
func byValue(run []int32, val func(int32) int32) [][]int32 {
	if len(run) < 2 {
		return nil
	}
	if slices.ContainsFunc(run, func(i int32) bool { return val(i) < 0 }) {
		return [][]int32{run}
	}
	run = slices.Clone(run)
	slices.SortStableFunc(run, func(x, y int32) int { return int(val(x)) - int(val(y)) })
	var out [][]int32
	for lo := 0; lo < len(run); {
		hi := lo + 1
		for hi < len(run) && val(run[hi]) == val(run[lo]) {
			hi++
		}
		if hi-lo > 1 {
			out = append(out, run[lo:hi])
		}
		lo = hi
	}
	return out
}

func (a *analyzer) reportReprocessed(run []int32) {
	m := &a.members
	first := &m.procs[run[0]]
	group := m.groupNames[first.group]
	committed := 0
	var counted []int32 // the attempts not in an aborted transaction
	var ops []int64
	who := ""
	for k, i := range run {
		pr := &m.procs[i]
		if pr.txn < 0 || (a.txns[pr.txn].outcome != txnAborted && a.txns[pr.txn].outcome != txnNeverCommitted) {
			committed++
			counted = append(counted, i)
		}
		if k < 4 {
			ops = append(ops, pr.start)
			if who != "" {
				who += ", "
			}
			who += a.procs[pr.proc].name + " (#" + itoa(pr.start) + ")"
		}
	}
	if len(run) > 4 {
		who += ", …"
	}
	second := &m.procs[run[1]]
	// The repeat to explain is of the attempts whose output and offsets
	// may have committed: an attempt in an aborted transaction repeats
	// nothing (Kafka discarded its output and offsets), so a loss of
	// __consumer_offsets is looked for between the first two of the others.
	judged := [2]int32{run[0], run[1]}
	if len(counted) >= 2 {
		judged = [2]int32{counted[0], counted[1]}
	}
	j0, j1 := &m.procs[judged[0]], &m.procs[judged[1]]
	read := func(pr *processRec) int64 {
		if pr.pollT > 0 {
			return pr.pollT
		}
		return pr.startT
	}
	a.findings = append(a.findings, Finding{Type: ReprocessedRecord, group: group, committedAttempts: committed,
		attempts: [2]int64{j0.start, j1.start}, hasAttempts: true, reads: [2]int64{read(j0), read(j1)},
		commitFirst: j0.commit, hasCommitFirst: j0.commit >= 0, commitSecond: j1.commit, hasCommitSecond: j1.commit >= 0,
		Example: Example{Partition: a.parts[first.part].name, Offset: first.off, Process: a.procs[second.proc].name, Ops: ops,
			Detail: "group " + group + " processed it " + strconv.Itoa(len(run)) + " times: " + who}})
}

func (a *analyzer) checkSideEffects() {
	m := &a.members
	idx := make([]int32, len(m.effects))
	for i := range idx {
		idx[i] = int32(i)
	}
	byRecord(idx, func(i int32) (int32, int32, int64, int64) {
		e := &m.effects[i]
		return e.group, e.part, e.off, e.op
	})
	for lo := 0; lo < len(idx); {
		hi := lo + 1
		first := &m.effects[idx[lo]]
		for hi < len(idx) && m.effects[idx[hi]].group == first.group && m.effects[idx[hi]].part == first.part && m.effects[idx[hi]].off == first.off {
			hi++
		}
		group := m.groupNames[first.group]
		for _, run := range byValue(idx[lo:hi], func(i int32) int32 { return m.effects[i].val }) {
			// Effects the store said it did not apply do not count; when
			// the store never said (a recorder that does not know), an
			// idempotent store is taken at its configuration's word.
			applied, answered := run[:0:0], false
			for _, i := range run {
				e := &m.effects[i]
				answered = answered || e.answered
				if !e.notApplied {
					applied = append(applied, i)
				}
			}
			if len(applied) < 2 {
				continue
			}
			run = applied
			second := &m.effects[run[1]]
			if !answered && a.cfg.consumerOf(group, a.procs[second.proc].name).SideEffects == "idempotent" {
				continue
			}
			var ops []int64
			who := ""
			for k := 0; k < len(run) && k < 4; k++ {
				e := &m.effects[run[k]]
				ops = append(ops, e.op)
				if who != "" {
					who += ", "
				}
				who += a.procs[e.proc].name + " (#" + itoa(e.op) + ")"
			}
			e0 := &m.effects[run[0]]
			a.findings = append(a.findings, Finding{Type: DuplicateSideEffect, group: group, commitFirst: e0.commit, hasCommitFirst: e0.commit >= 0,
				commitSecond: second.commit, hasCommitSecond: second.commit >= 0,
				Example: Example{Partition: a.parts[first.part].name, Offset: first.off,
					Process: a.procs[second.proc].name, Ops: ops,
					Detail: "group " + group + ": the store " + map[bool]string{true: "applied", false: "acknowledged"}[answered] + " this record's effect " + strconv.Itoa(len(run)) + " times: " + who}})
		}
		lo = hi
	}
}

// finalCommitted is a group's final committed offset for a partition: the
// last acknowledged commit's, or a fetch-committed that completed after it;
// lowered by any commit of unknown outcome invoked after that, which may
// have taken effect. ok is false when nothing is known committed.
func (reg *register) finalCommitted() (value, invoke, complete int64, proc int32, ok bool) {
	complete = -1
	if reg.lastOK >= 0 {
		c := &reg.commits[reg.lastOK]
		value, invoke, complete, proc, ok = c.value, c.invoke, c.complete, c.proc, true
	}
	for i := range reg.fetches {
		if f := &reg.fetches[i]; f.complete > complete {
			value, invoke, complete, proc, ok = f.value, f.invoke, f.complete, f.proc, true
		}
	}
	if !ok || value < 0 {
		return 0, 0, 0, 0, false
	}
	for i := range reg.commits {
		if c := &reg.commits[i]; c.typ != history.OK && c.typ != history.Fail && c.invoke > invoke && c.value < value {
			value = c.value
		}
	}
	return value, invoke, complete, proc, true
}

func (a *analyzer) checkSkipped() {
	m := &a.members
	// What each group processed, per partition, sorted: a process that
	// completed, or whose effect reached (or may have reached) the
	// external store. A processing a crash cut short, or one still open
	// when the history ends, did not complete: the application's work
	// died with it; only an effect it sent on may have escaped.
	type gp struct{ group, part int32 }
	started := map[gp][]int64{}
	for i := range m.procs {
		if pr := &m.procs[i]; pr.ok {
			k := gp{pr.group, pr.part}
			started[k] = append(started[k], pr.off)
		}
	}
	for _, effs := range [][]effectRec{m.effects, m.maybeEffects} {
		for _, e := range effs {
			k := gp{e.group, e.part}
			started[k] = append(started[k], e.off)
		}
	}
	for k, offs := range started { // kafkasim:orderless: sorts each slice in place
		slices.Sort(offs)
		started[k] = offs
	}
	// How far each group's members had gone in each partition by each
	// operation: every processing begun and every commit invoked.
	reach := map[gp]*progress{}
	if len(a.lossOps.losses) > 0 {
		for i := range m.procs {
			pr := &m.procs[i]
			k := gp{pr.group, pr.part}
			if reach[k] == nil {
				reach[k] = &progress{}
			}
			reach[k].add(pr.start, pr.off)
		}
		for _, reg := range a.groups.regs {
			g, ok := m.groupIDs[reg.group]
			pi := a.partByName(reg.part)
			if !ok || pi < 0 {
				continue
			}
			k := gp{g, pi}
			if reach[k] == nil {
				reach[k] = &progress{}
			}
			for _, c := range reg.commits {
				reach[k].add(c.invoke, c.value)
			}
		}
		for _, pg := range reach { // kafkasim:orderless: sorts each in place
			pg.finish()
		}
	}
	lost := a.lostAckedValues()
	passed := a.resetPassed()
	for _, reg := range a.groups.regs {
		g, ok := m.groupIDs[reg.group]
		pi := a.partByName(reg.part)
		if !ok || !m.processes[g] || pi < 0 {
			continue
		}
		final, at, done, proc, ok := reg.finalCommitted()
		if !ok {
			continue
		}
		po := a.parts[pi]
		offs := started[gp{g, pi}]
		spans := passed[groupPart{g, pi}]
		j := 0
		for i := 0; i < len(po.offsets) && po.offsets[i] < final; i++ {
			off := po.offsets[i]
			for j < len(offs) && offs[j] < off {
				j++
			}
			if (j < len(offs) && offs[j] == off) || off < po.logStart {
				continue
			}
			if slices.ContainsFunc(spans, func(s offsetSpan) bool { return s.lo <= off && off < s.hi }) {
				continue
			}
			// The records the group was owed at off: the first is the
			// example. Each must be one the cleaner could not have removed
			// for the group to have skipped something.
			val, owed := int32(-1), false
			atOff := po.obsAt(off)
			for _, ob := range atOff {
				if (a.obsFlags(&ob)&obsRead == 0 && lost[ob.val]) || !a.visibleToRC(ob.val) {
					continue
				}
				if a.goneBeforeGroupPassed(po.name, off, ob, atOff, reach[gp{g, pi}]) {
					continue
				}
				if a.sentAfterGroupCommittedPast(po.name, off, ob.val, atOff, reg, final) {
					continue
				}
				if val < 0 {
					val = ob.val
				}
				if !a.compactableRecord(pi, off, ob.val) {
					owed = true
				}
			}
			if val < 0 || !owed {
				// Nothing was there for the group, or the log cleaner may
				// have removed whatever was before the group reached it:
				// Kafka promises every record only to a consumer caught
				// up within the head of a compacted log.
				continue
			}
			if a.skipped == nil {
				a.skipped = map[skipAt]bool{}
			}
			a.skipped[skipAt{reg.group, pi, off}] = true
			a.findings = append(a.findings, Finding{Type: SkippedRecord, group: reg.group, Example: Example{Partition: reg.part, Offset: off,
				Value: a.valName(val), Process: a.procs[proc].name, Ops: []int64{at, done},
				Detail: "group " + reg.group + "'s final committed offset is " + itoa(final) + " (#" + itoa(done) + "), but no member processed the record at " + itoa(off)}})
		}
	}
}

// progress is how far a group's members had gone in one partition: its
// events (a processing begun at an offset, a commit invoked of an offset) in
// operation order, each with the highest offset reached by then.
type progress struct {
	ev []progressEv
}

type progressEv struct{ op, off int64 }

func (p *progress) add(op, off int64) { p.ev = append(p.ev, progressEv{op, off}) }

func (p *progress) finish() {
	slices.SortFunc(p.ev, func(x, y progressEv) int { return cmp.Compare(x.op, y.op) })
	for i := 1; i < len(p.ev); i++ {
		p.ev[i].off = max(p.ev[i].off, p.ev[i-1].off)
	}
}

// passedBefore reports whether, before operation op, a member had begun
// processing a record above off or invoked a commit above it: the group had
// gone past off.
func (p *progress) passedBefore(op, off int64) bool {
	if p == nil {
		return false
	}
	n, _ := slices.BinarySearchFunc(p.ev, op, func(e progressEv, op int64) int { return cmp.Compare(e.op, op) })
	return n > 0 && p.ev[n-1].off > off
}

// goneBeforeGroupPassed reports whether the record ob saw at off of
// partition part (read there, or acknowledged there) was taken by a loss
// the god view saw (committed data lost: a wiped disk, a power loss, an
// unclean election) before the group had gone past off: seen before the
// loss, not seen there after it, and no member had begun processing above
// off or invoked a commit above it by then. The
// group never had it to process: when it came to off, the log held another
// record there, or none (fuzz --groups seed 221530: a group formed after a
// disk wipe took orders-0's offsets 0..718 began at the new log's start).
// atOff is every observation at off; p is the group's progress in the
// partition.
func (a *analyzer) goneBeforeGroupPassed(part string, off int64, ob observation, atOff []observation, p *progress) bool {
	for i := range a.lossOps.losses {
		l, at := &a.lossOps.losses[i], a.lossOps.at[i]
		if !l.Covers(part, off) || at < 0 || at == math.MaxInt64 || ob.op >= at || p.passedBefore(at, off) {
			continue
		}
		if !slices.ContainsFunc(atOff, func(o observation) bool { return o.val == ob.val && o.op >= at }) {
			return true
		}
	}
	return false
}

// sentAfterGroupCommittedPast reports whether the record val at partition
// part's offset off came into an offset the log reused after a loss the god
// view saw there, when the group had no more commits past off to make: its
// send was invoked, or acknowledged, at or after the loss (a send invoked
// while the partition had no leader, before the election that exposed the
// loss, is appended after it: fuzz seed 213 with transactions, a power
// loss of every replica), and no commit of the group's final committed
// offset (not refused) was invoked after that send. Such a
// record was not below any offset the group committed when it committed it:
// a commit claims what its member had processed of the log as it was, and
// the coordinator keeps a committed offset whatever later happens to the
// partition's log (Kafka's OffsetMetadataManager.commitOffset checks the
// member, never the log; only a fetch from the offset, answered
// OFFSET_OUT_OF_RANGE, makes a consumer reset its position). A
// record sent after a commit lands at or above the log end of that time,
// which is at or above the offset committed: only a truncation, the loss,
// puts it below (fuzz --groups seed 286975: after a disk wipe and an
// unclean election, the settle's probes took offsets the group had
// committed past before, while the group itself was gone with its
// __consumer_offsets partition). A commit of the final offset invoked
// after the send still owes the record; one past off that did not end as
// the group's offset (refused, or taken by a loss of __consumer_offsets)
// skipped nothing. A commit invoked after the send but before the loss owes
// it nothing either, unless the record was seen at off before the loss
// (atOff: every observation at off): until the loss the log held the lost
// record there, which is what the commit claimed, and a send invoked before
// the loss that is acknowledged after it was appended to the new leader's
// log (fuzz seed 37714 with processors and groups: sends invoked while
// orders-0 was leaderless for twenty seconds landed, after KIP-966's
// election of the last known leader lost offsets 0..3623, below the offset
// 3624 the group had committed before the loss).
func (a *analyzer) sentAfterGroupCommittedPast(part string, off int64, val int32, atOff []observation, reg *register, final int64) bool {
	si := a.valSend[val]
	if si < 0 {
		return false
	}
	sent := a.invoke(&a.sends[si])
	landed := sent
	if c := a.complete(&a.sends[si]); c >= 0 && a.sends[si].typ == history.OK {
		landed = c
	}
	// The loss whose log the record landed in: the latest before it.
	lossAt := int64(-1)
	for i := range a.lossOps.losses {
		l, at := &a.lossOps.losses[i], a.lossOps.at[i]
		if l.Covers(part, off) && at >= 0 && at != math.MaxInt64 && at <= landed {
			lossAt = max(lossAt, at)
		}
	}
	if lossAt < 0 {
		return false
	}
	// The record was in the log from its send on, for all the history
	// shows, unless nothing saw it at off before the loss: then it came
	// to off with the new leader's log, after every commit invoked before
	// the loss.
	since := sent
	if !slices.ContainsFunc(atOff, func(o observation) bool { return o.val == val && o.op < lossAt }) {
		since = max(sent, lossAt-1)
	}
	// Only a commit of the final committed offset invoked after that
	// owes the record: a later commit that did not end as the group's
	// offset (refused, or lost) skipped nothing.
	for i := range reg.commits {
		if c := &reg.commits[i]; c.invoke > since && c.value == final && c.typ != history.Fail {
			return false
		}
	}
	return true
}

// checkUnreleased finds the consumer protocol's double owners (KIP-848):
// members' epochs are their own, so two owners of a partition are never
// at one epoch — the old owner keeps its epoch until it acknowledges the
// revocation, while the new one is granted the partition at the target
// epoch. What shows it is a commit: the coordinator accepts a member's
// commit only at its current epoch (ConsumerGroup.validateOffsetCommit), so
// an acknowledged commit of partition p at epoch e1 means the member still
// held p at e1 when it committed. If the member invoked that commit after
// another member had begun processing p at a later epoch, p had two owners:
// the member commits what it processed of p before it acknowledges the
// revocation, and the coordinator grants p to the next member only after
// that acknowledgement (reconciliation revokes before it grants).
func (a *analyzer) checkUnreleased() {
	m := &a.members
	type gp struct{ group, part int32 }
	// Each member's earliest processing of a partition at each epoch.
	type firstAt struct {
		member, gen, proc int32
		start, startT     int64
		off               int64
	}
	first := map[gp][]firstAt{}
	for i := range m.procs {
		pr := &m.procs[i]
		if pr.gen < 0 {
			continue
		}
		k := gp{pr.group, pr.part}
		found := false
		for j := range first[k] {
			if f := &first[k][j]; f.member == pr.member && f.gen == pr.gen {
				if pr.start < f.start {
					*f = firstAt{member: pr.member, gen: pr.gen, proc: pr.proc, start: pr.start, startT: pr.startT, off: pr.off}
				}
				found = true
				break
			}
		}
		if !found {
			first[k] = append(first[k], firstAt{member: pr.member, gen: pr.gen, proc: pr.proc, start: pr.start, startT: pr.startT, off: pr.off})
		}
	}
	type pair struct{ group, part, m1, m2 int32 }
	seen := map[pair]bool{}
	for _, reg := range a.groups.regs {
		g, ok := m.groupIDs[reg.group]
		pi := a.partByName(reg.part)
		if !ok || pi < 0 {
			continue
		}
		firsts := first[gp{g, pi}]
		if len(firsts) < 2 {
			continue
		}
		for ci := range reg.commits {
			c := &reg.commits[ci]
			if c.typ != history.OK || c.gen < 0 || c.inTxn || a.cfg.consumerOf(reg.group, a.procs[c.proc].name).GroupProtocol != "consumer" {
				continue
			}
			// The committing member: the one whose processing at the
			// commit's epoch came from the committing process.
			committer := int32(-1)
			for _, f := range firsts {
				if f.proc == c.proc && f.gen == c.gen {
					committer = f.member
				}
			}
			if committer < 0 {
				continue
			}
			for _, f := range firsts {
				if f.member == committer || f.gen <= c.gen || f.start >= c.invoke {
					continue
				}
				pk := pair{g, pi, min(f.member, committer), max(f.member, committer)}
				if seen[pk] {
					continue
				}
				seen[pk] = true
				px, py := a.procs[f.proc].name, a.procs[c.proc].name
				when := "#" + itoa(f.start)
				if f.startT > 0 {
					when = seconds(f.startT) + " (#" + itoa(f.start) + ")"
				}
				a.findings = append(a.findings, Finding{Type: DoubleOwner, group: reg.group, Example: Example{Partition: reg.part, Offset: f.off,
					Process: px, Ops: []int64{f.start, c.invoke, c.complete},
					Detail: "group " + reg.group + ": " + px + " (member " + m.members[f.member] + ", member epoch " + itoa(int64(f.gen)) +
						") began processing " + reg.part + " at " + when + ", and after that " + py + " (member epoch " + itoa(int64(c.gen)) +
						") committed " + reg.part + " and the coordinator accepted it (#" + itoa(c.invoke) + "): " + py +
						" still held the partition, not yet released, while " + px + " had it"}})
			}
		}
	}
}

// offsetSpan is the offsets [lo, hi).
type offsetSpan struct{ lo, hi int64 }

// groupPart is a group's partition, by index.
type groupPart struct{ group, part int32 }

// resetPassed are the records, per group and partition, that a member's
// position passed over without the group owing them: where
// auto.offset.reset=latest moved a member that began with no committed
// offset (or one out of range) to the end of the partition, and where a
// leader answered OFFSET_OUT_OF_RANGE below its log start. Kafka's consumer
// never fetches what lies before such a position; neither skipped-record
// nor lost-output may count it.
func (a *analyzer) resetPassed() map[groupPart][]offsetSpan {
	m := &a.members
	passed := map[groupPart][]offsetSpan{}
	for _, j := range m.jumps {
		group, part := m.groupNames[j.group], a.parts[j.part]
		if a.cfg.consumerOf(group, a.procs[j.proc].name).AutoOffsetReset != "latest" {
			continue
		}
		_, lossHere := a.cfg.loss(part.name, -1)
		if j.from < 0 || j.from < part.logStart || lossHere {
			passed[groupPart{j.group, j.part}] = append(passed[groupPart{j.group, j.part}], offsetSpan{max(j.from, 0), j.to})
		}
	}
	// Where the leader a member fetched from had deleted the records
	// (retention) and said so: OFFSET_OUT_OF_RANGE at the member's position,
	// then auto.offset.reset to its log start (god view: out-of-range-reset),
	// whatever another replica still held and later led with.
	if resets := a.cfg.Happened.Of(godview.OutOfRangeReset); len(resets) > 0 {
		for i := range m.procs {
			pr := &m.procs[i]
			for _, r := range resets {
				if r.Process == a.procs[pr.proc].name && r.Partition == a.parts[pr.part].name && pr.off >= r.To {
					k := groupPart{pr.group, pr.part}
					if s := (offsetSpan{r.From, r.To}); !slices.Contains(passed[k], s) {
						passed[k] = append(passed[k], s)
					}
				}
			}
		}
	}
	return passed
}
