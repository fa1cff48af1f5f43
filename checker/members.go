package checker

import (
	"cmp"
	"math"
	"slices"

	"kafkasim/history"
)

// Group members in a history: what they processed, the effects they applied,
// what they were assigned and at which generation (classic) or member epoch
// (KIP-848). Ingestion keeps one small record per process and side-effect
// operation and, per group, the highest generation an assign carried; the
// checks that need the whole history (overlaps, skipped and reprocessed
// records, repeated effects) run at the end (groupchecks.go). A history whose
// members record no process operation says nothing about processing, and is
// not judged for it.
//
// Fencing (zombie-commit) is decided when a commit is invoked, against what
// the history had shown by then: Kafka's coordinator accepts an OffsetCommit
// only at the group's current generation (ClassicGroup.validateOffsetCommit:
// ILLEGAL_GENERATION otherwise), or at the member's current epoch
// (ConsumerGroup.validateOffsetCommit, validateMemberEpoch:
// STALE_MEMBER_EPOCH otherwise, Kafka 4.0–4.2). Both only grow, so an assign
// acknowledged before the commit began at a higher generation (any member's,
// in a classic group) or a higher epoch (the same member's) proves the
// commit's was stale when it arrived. A revoke does not fence: KIP-848 keeps
// the member's epoch until it acknowledges the revocation, and neither
// validator looks at which partitions the member owns. Commits without a
// generation (-1: assign mode, or an admin's) are not a member's.

// sessionStarted marks, in memberProc.sess, a partition whose session has
// processed a record.
const sessionStarted = math.MinInt64

type processRec struct {
	start, end   int64 // op indexes; end: the completion, the crash, or past the history's end
	startT, endT int64 // times (ns)
	off          int64
	group, part  int32
	proc, member int32
	gen          int32 // -1: not recorded
	txn          int32 // the transaction open when processing began, -1
	// val is the record the member had polled at off (-1: unknown). After
	// committed data is lost, the new leader reuses the lost offsets for new
	// records: an offset alone no longer names one record.
	val int32
	// poll is the completion of the poll that returned the record (op
	// index; -1: unknown), pollT its time (ns; -1: unknown).
	poll, pollT int64
	// commit is the invocation of the member's first commit of the
	// partition past off in its session, before the processing began (-1:
	// none): an at-most-once member's commit of the record's batch, which
	// a loss in __consumer_offsets must take for the record to be
	// processed again.
	commit   int64
	ok, open bool
}

type effectRec struct {
	op          int64
	off         int64
	group, part int32
	proc        int32
	val         int32 // the record whose processing sent it (-1: unknown)
	commit      int64 // that processing's processRec.commit
	// answered: the history says whether the store applied it (applied on
	// a side-effect's ok); notApplied: the store said it did not (an
	// idempotent store that already held the key).
	answered, notApplied bool
}

type effectPending struct {
	off         int64
	group, part int32
	val         int32
	commit      int64
}

// polledKey is a record a member polled: its partition and offset.
type polledKey struct {
	part int32
	off  int64
}

// polledRec is the record a member polled at a polledKey, the poll
// session (analyzer.sessions) that read it, and the poll operation.
type polledRec struct {
	val, sess   int32
	poll, pollT int64
}

// resetJump is a member's first processed offset in a partition, where it
// began above the offset the group had committed (-1: none): its position
// came from auto.offset.reset, not the committed offset. Or a later one
// above the record after the last it began (a reset mid-session), or an
// offset it committed above either before processing there (commitJumps).
type resetJump struct {
	group, part int32
	proc        int32
	from, to    int64
}

// genSeen is the highest generation (or member epoch) an assign carried, and
// the assign's completion.
type genSeen struct {
	gen  int32
	op   int64
	proc int32
}

type memberKey struct {
	group, member int32
}

// groupMembers is the members' part of the history's records.
type groupMembers struct {
	groupIDs   map[string]int32
	groupNames []string
	groupFirst []string // the first process that acted for each group
	processes  []bool   // the group's members recorded process operations
	memberIDs  map[string]int32
	members    []string
	procs      []processRec
	effects    []effectRec
	// maybeEffects are side effects of unknown outcome (info): the store
	// may hold them.
	maybeEffects []effectRec
	jumps        []resetJump
	maxGen       []genSeen // per group
	memberGen    map[memberKey]genSeen
	lastTime     int64
}

// memberProc is a process's state as a group member.
type memberProc struct {
	open    []int32 // process operations in flight
	effects []effectPending
	owned   map[int32]bool  // partitions owned (as of acknowledged assigns and revokes)
	revoked map[int32]int64 // partition -> the revoke (or assign) that took it away
	// sess: partition -> the offset the group had committed when the
	// member was assigned it (awaiting the first record processed), or
	// sessionStarted.
	sess map[int32]int64
	// next: partition -> the offset after the highest the member began
	// processing in its session; a record begun above it passed over the
	// ones between (a position reset mid-session).
	next map[int32]int64
	// polled: the record the member last polled at each offset, until it
	// begins processing it.
	polled map[polledKey]polledRec
	// earlier: the records the member polled at an offset before the one
	// in polled, oldest first, until it begins processing them. After
	// committed data is lost, KIP-320's truncation detection moves the
	// position back to the divergence while the records polled above it
	// still wait for a worker: the member polls a new record at an offset
	// whose old record it has yet to process.
	earlier map[polledKey][]polledRec
	// begun: partition -> the poll of the record the member last began
	// processing there. The poll loop and the pool's queue begin a
	// partition's records in the order polled, so a record of an earlier
	// poll not begun by then was dropped unprocessed (a commit refused,
	// a revocation).
	begun map[int32]int64
	// committed: partition -> the member's commits of it in its session
	// that went past every earlier one (the offset and the invocation), in
	// order; a commit below the last (a position moved back after a loss)
	// starts the list again.
	committed map[int32][]commitMark
	// failed: the record whose processing at an offset ended without
	// success (a side effect the store never acknowledged): the member
	// starts that same record over without polling it again (the reader's
	// processAgain), as long as it holds the partition, so its next
	// processing there is of that record.
	failed map[polledKey]int32
}

func (a *analyzer) memberOf(p *procState) *memberProc {
	if p.gm == nil {
		p.gm = &memberProc{owned: map[int32]bool{}, revoked: map[int32]int64{}, sess: map[int32]int64{}, next: map[int32]int64{}, polled: map[polledKey]polledRec{},
			earlier: map[polledKey][]polledRec{}, begun: map[int32]int64{}, failed: map[polledKey]int32{},
			committed: map[int32][]commitMark{}}
	}
	return p.gm
}

func (m *groupMembers) groupID(name, process string) int32 {
	if m.groupIDs == nil {
		m.groupIDs, m.memberIDs, m.memberGen = map[string]int32{}, map[string]int32{}, map[memberKey]genSeen{}
	}
	if id, ok := m.groupIDs[name]; ok {
		return id
	}
	id := int32(len(m.groupNames))
	m.groupIDs[name] = id
	m.groupNames = append(m.groupNames, name)
	m.groupFirst = append(m.groupFirst, process)
	m.processes = append(m.processes, false)
	m.maxGen = append(m.maxGen, genSeen{gen: -1})
	return id
}

// memberID numbers a member: its member id, or its process's name when the
// history records none.
func (m *groupMembers) memberID(p *procState, o *history.Op) int32 {
	name := p.name
	if x := o.Value.Ext; x != nil && x.MemberID != "" {
		name = x.MemberID
	}
	if id, ok := m.memberIDs[name]; ok {
		return id
	}
	id := int32(len(m.members))
	m.memberIDs[name] = id
	m.members = append(m.members, name)
	return id
}

func generationOf(o *history.Op) int32 {
	if x := o.Value.Ext; x != nil {
		return x.Generation
	}
	return -1
}

// committedNow is the offset the group's last acknowledged commit of a
// partition holds (-1: none).
func (a *analyzer) committedNow(group, part string) int64 {
	r, ok := a.groups.regIDs[regKey{group, part}]
	if !ok {
		return -1
	}
	reg := a.groups.regs[r]
	if reg.lastOK < 0 {
		return -1
	}
	return reg.commits[reg.lastOK].value
}

// trackRebalance records an acknowledged assign or revoke: the generation
// it carried, and the partitions it took away or granted. listed are the
// operation's partitions.
func (a *analyzer) trackRebalance(pid int32, p *procState, o *history.Op, listed []int32) {
	if o.Type != history.OK {
		return
	}
	group := groupOf(p, o)
	if group == "" {
		return
	}
	m := &a.members
	g := m.groupID(group, p.name)
	gm := a.memberOf(p)
	if o.F == history.FRevoke {
		for _, part := range listed {
			gm.revoked[part] = o.Index
			delete(gm.owned, part)
			delete(gm.sess, part)
			delete(gm.next, part)
			gm.gaveUp(part)
		}
		return
	}
	if gen := generationOf(o); gen >= 0 {
		if gen > m.maxGen[g].gen {
			m.maxGen[g] = genSeen{gen: gen, op: o.Index, proc: pid}
		}
		k := memberKey{g, m.memberID(p, o)}
		if s, ok := m.memberGen[k]; !ok || gen > s.gen {
			m.memberGen[k] = genSeen{gen: gen, op: o.Index, proc: pid}
		}
	}
	keep := make(map[int32]bool, len(listed))
	for _, part := range listed {
		keep[part] = true
	}
	for part := range gm.owned { // kafkasim:orderless: deletes and sets per partition
		if !keep[part] {
			gm.revoked[part] = o.Index
			delete(gm.owned, part)
			delete(gm.sess, part)
			delete(gm.next, part)
			gm.gaveUp(part)
		}
	}
	for _, part := range listed {
		delete(gm.revoked, part)
		gm.owned[part] = true
		gm.sess[part] = a.committedNow(group, a.parts[part].name)
		delete(gm.next, part)
	}
}

// addProcess takes a process operation: a member processed a record.
func (a *analyzer) addProcess(pid int32, p *procState, o *history.Op) {
	m := &a.members
	gm := a.memberOf(p)
	if o.Type != history.Invoke {
		a.completeProcess(gm, o)
		return
	}
	group := groupOf(p, o)
	if group == "" || o.Value.Partition < 0 || o.Value.Offset < 0 {
		return
	}
	g := m.groupID(group, p.name)
	m.processes[g] = true
	part := a.partID(o.Value.Topic, o.Value.Partition)
	off := o.Value.Offset
	if at, ok := gm.revoked[part]; ok {
		delete(gm.revoked, part) // one finding per revocation
		a.findings = append(a.findings, Finding{Type: DoubleOwner, group: group, Example: Example{Partition: a.parts[part].name, Offset: off,
			Process: p.name, Ops: []int64{at, o.Index},
			Detail: "group " + group + ": " + p.name + " began processing " + a.parts[part].name + "@" + itoa(off) + " (#" + itoa(o.Index) +
				") after it gave the partition up (#" + itoa(at) + ") and before it was assigned it again"}})
	}
	if c, ok := gm.sess[part]; !ok || c != sessionStarted {
		if !ok {
			c = a.committedNow(group, a.parts[part].name) // no assign recorded: the session starts here
		}
		if off > c && off > 0 {
			m.jumps = append(m.jumps, resetJump{group: g, part: part, proc: pid, from: c, to: off})
		}
		gm.sess[part] = sessionStarted
	} else if next, ok := gm.next[part]; ok && off > next && a.cfg.consumerOf(group, p.name).AutoOffsetReset == "latest" {
		// Its position jumped: offsets between may hold no record (control
		// batches, compaction), or the position fell out of range and
		// auto.offset.reset=latest moved it to the end (checkSkipped
		// decides which it may be; only latest moves a position forward).
		m.jumps = append(m.jumps, resetJump{group: g, part: part, proc: pid, from: next, to: off})
	}
	if next, ok := gm.next[part]; !ok || off >= next {
		gm.next[part] = off + 1
	}
	val, poll, pollT := int32(-1), int64(-1), int64(-1)
	if v, ok := gm.failed[polledKey{part, off}]; ok {
		val = v
		delete(gm.failed, polledKey{part, off})
	} else if v, ok := gm.takePolled(polledKey{part, off}); ok {
		val, poll, pollT = v.val, v.poll, v.pollT
	}
	commit := gm.firstCommitPast(part, off)
	gm.open = append(gm.open, int32(len(m.procs)))
	m.procs = append(m.procs, processRec{start: o.Index, startT: o.Time, end: -1, off: off, group: g, part: part, proc: pid,
		member: m.memberID(p, o), gen: generationOf(o), txn: p.txn, val: val, poll: poll, pollT: pollT, commit: commit, open: true})
}

// commitJumps takes a member's commit as evidence of its positions: Kafka
// commits positions (SubscriptionState.allConsumed, the auto-commit's and a
// commitSync()'s), and a position auto.offset.reset moved is committed
// before any record is consumed from it — latest after the producers
// stopped, or while the member lagged, is never followed by a record at
// the new position. A commit above where the member's session started
// (the offset the group had committed when it was assigned the
// partition), before it processed any of it, or above the record after
// the last it began, moved its position forward without processing: a
// jump like one to the first record processed there (checkSkipped decides
// whether a reset may have made it). The jump ends at the lowest record
// the member polled there in its session and has not begun processing:
// its position was no further than that record when it polled it, so a
// commit past it passed over a record it held, which no reset explains.
// Only partitions the member owns: a session runs from an assign to a
// revoke.
func (a *analyzer) commitJumps(pid int32, p *procState, o *history.Op, group string) {
	gm, x := p.gm, o.Value.Ext
	if gm == nil || x == nil || group == "" {
		return
	}
	m := &a.members
	for _, name := range sortedKeys(x.Offsets) {
		part := a.partByName(name)
		if part < 0 || !gm.owned[part] {
			continue
		}
		from, ok := gm.sess[part]
		if ok && from == sessionStarted {
			from, ok = gm.next[part]
		}
		to := x.Offsets[name]
		if !ok || to <= from || to <= 0 {
			continue
		}
		if sid, polling := p.sess[part]; polling {
			for k, r := range gm.polled { // kafkasim:orderless: a minimum
				if k.part == part && r.sess == sid && k.off >= from && k.off < to {
					to = k.off
				}
			}
		}
		if to > from && to > 0 {
			m.jumps = append(m.jumps, resetJump{group: m.groupID(group, p.name), part: part, proc: pid, from: from, to: to})
		}
	}
}

// memberPolled notes the records a group member's poll returned: which
// record each offset held when the member read it, and in which poll
// session (commitJumps ends a jump at a record the member held).
func (a *analyzer) memberPolled(p *procState, part int32, off int64, val, sess int32, poll, pollT int64) {
	gm := a.memberOf(p)
	k := polledKey{part, off}
	if prev, ok := gm.polled[k]; ok {
		gm.earlier[k] = append(gm.earlier[k], prev)
	}
	gm.polled[k] = polledRec{val, sess, poll, pollT}
}

// takePolled is the record a member begins processing at k, which it polled
// and had not begun: the oldest it polled there since the last record it
// began in the partition.
func (gm *memberProc) takePolled(k polledKey) (polledRec, bool) {
	r, ok := gm.polled[k]
	if recs, more := gm.earlier[k]; more {
		for len(recs) > 0 && recs[0].poll < gm.begun[k.part] {
			recs = recs[1:]
		}
		if len(recs) > 0 {
			r, ok = recs[0], true
			recs = recs[1:]
		} else {
			delete(gm.polled, k)
		}
		if len(recs) > 0 {
			gm.earlier[k] = recs
		} else {
			delete(gm.earlier, k)
		}
	} else {
		delete(gm.polled, k)
	}
	if ok {
		gm.begun[k.part] = max(gm.begun[k.part], r.poll)
	}
	return r, ok
}

// gaveUp forgets what the member did in a partition it gave up: the reader
// drops the records it polled there and had not begun (the pool's queue,
// the rest of a batch) and its failed processings (processAgain) rather
// than start them over, and its commits there covered the records of that
// session.
func (gm *memberProc) gaveUp(part int32) {
	for k := range gm.polled { // kafkasim:orderless: deletes per key
		if k.part == part {
			delete(gm.polled, k)
		}
	}
	for k := range gm.earlier { // kafkasim:orderless: deletes per key
		if k.part == part {
			delete(gm.earlier, k)
		}
	}
	for k := range gm.failed { // kafkasim:orderless: deletes per key
		if k.part == part {
			delete(gm.failed, k)
		}
	}
	delete(gm.committed, part)
}

// commitMark is a commit a member invoked of one partition.
type commitMark struct{ off, op int64 }

// memberCommitted notes a commit a group member invoked.
func (a *analyzer) memberCommitted(p *procState, o *history.Op) {
	x := o.Value.Ext
	if x == nil {
		return
	}
	gm := a.memberOf(p)
	for name, off := range x.Offsets { // kafkasim:orderless: sets per partition
		part := a.partByName(name)
		if part < 0 {
			continue
		}
		marks := gm.committed[part]
		if n := len(marks); n > 0 && off <= marks[n-1].off {
			if off == marks[n-1].off {
				continue
			}
			marks = marks[:0]
		}
		gm.committed[part] = append(marks, commitMark{off, o.Index})
	}
}

// firstCommitPast is the invocation of the member's first commit past off of
// the partition in its session (-1: none).
func (gm *memberProc) firstCommitPast(part int32, off int64) int64 {
	marks := gm.committed[part]
	if i, _ := slices.BinarySearchFunc(marks, off+1, func(m commitMark, t int64) int { return cmp.Compare(m.off, t) }); i < len(marks) {
		return marks[i].op
	}
	return -1
}

// completeProcess pairs a completion with the open process operation of the
// same record, else the oldest.
func (a *analyzer) completeProcess(gm *memberProc, o *history.Op) {
	if len(gm.open) == 0 {
		return
	}
	j := 0
	if o.Value.Partition >= 0 && o.Value.Offset >= 0 {
		part := a.partID(o.Value.Topic, o.Value.Partition)
		for i, r := range gm.open {
			if pr := &a.members.procs[r]; pr.part == part && pr.off == o.Value.Offset {
				j = i
				break
			}
		}
	}
	pr := &a.members.procs[gm.open[j]]
	gm.open = append(gm.open[:j], gm.open[j+1:]...)
	pr.end, pr.endT, pr.open, pr.ok = o.Index, o.Time, false, o.Type == history.OK
	if !pr.ok && pr.val >= 0 {
		gm.failed[polledKey{pr.part, pr.off}] = pr.val
	}
}

// addSideEffect takes a side-effect operation: a member applied a record's
// effect to an external store.
func (a *analyzer) addSideEffect(pid int32, p *procState, o *history.Op) {
	m := &a.members
	gm := a.memberOf(p)
	e := effectPending{val: -1, commit: -1}
	known := o.Value.Partition >= 0 && o.Value.Offset >= 0
	if group := groupOf(p, o); group != "" && known {
		e = effectPending{off: o.Value.Offset, group: m.groupID(group, p.name), part: a.partID(o.Value.Topic, o.Value.Partition), val: -1, commit: -1}
	}
	if o.Type == history.Invoke {
		if known {
			// The processing of the record under way sends its effect.
			for _, r := range gm.open {
				if pr := &m.procs[r]; pr.part == e.part && pr.off == e.off {
					e.val, e.commit = pr.val, pr.commit
				}
			}
			gm.effects = append(gm.effects, e)
		}
		return
	}
	j := -1
	for i := range gm.effects {
		if !known || (gm.effects[i].part == e.part && gm.effects[i].off == e.off) {
			j = i
			break
		}
	}
	if j >= 0 {
		if !known {
			e = gm.effects[j]
			known = true
		} else {
			e.val, e.commit = gm.effects[j].val, gm.effects[j].commit
		}
		gm.effects = append(gm.effects[:j], gm.effects[j+1:]...)
	}
	if o.Type == history.OK && known {
		r := effectRec{op: o.Index, off: e.off, group: e.group, part: e.part, proc: pid, val: e.val, commit: e.commit}
		if x := o.Value.Ext; x != nil && x.HasApplied {
			r.answered, r.notApplied = true, !x.Applied
		}
		m.effects = append(m.effects, r)
	}
	if o.Type == history.Info && known {
		m.maybeEffects = append(m.maybeEffects, effectRec{op: o.Index, off: e.off, group: e.group, part: e.part, proc: pid, val: e.val, commit: e.commit})
	}
}

// memberEnded: the process died or came back. What it was processing ran
// until then; a new process is a new member, which owns nothing.
func (a *analyzer) memberEnded(p *procState, o *history.Op) {
	gm := p.gm
	if gm == nil {
		return
	}
	for _, r := range gm.open {
		pr := &a.members.procs[r]
		pr.end, pr.endT, pr.open = o.Index, o.Time, false
	}
	p.gm = nil
}

// zombieEv is why a commit, when it was invoked, came from a fenced member.
type zombieEv struct {
	gen     int32 // the commit's
	invoke  int64 // the commit's invocation
	seen    genSeen
	own     bool // seen is the member's own assign (else another member's, classic)
	group   string
	process string
	part    string // the first partition it commits, and its offset
	off     int64
}

// fencedAt says whether a commit being invoked comes from a member the group
// had fenced by then.
func (a *analyzer) fencedAt(p *procState, o *history.Op, group string) *zombieEv {
	x := o.Value.Ext
	if x == nil || group == "" || x.Generation < 0 {
		return nil
	}
	m := &a.members
	g := m.groupID(group, p.name)
	z := &zombieEv{gen: x.Generation, group: group, process: p.name}
	if len(x.Offsets) > 0 {
		z.part = sortedKeys(x.Offsets)[0]
		z.off = x.Offsets[z.part]
	}
	if s, ok := m.memberGen[memberKey{g, m.memberID(p, o)}]; ok && s.gen > x.Generation {
		z.seen, z.own = s, true
		return z
	}
	if s := m.maxGen[g]; s.gen > x.Generation && a.cfg.consumerOf(group, p.name).GroupProtocol != "consumer" {
		z.seen = s
		return z
	}
	return nil
}

// zombieCommitted reports a fenced member's commit acknowledged.
func (a *analyzer) zombieCommitted(z *zombieEv, o *history.Op) {
	invoke, part, off := z.invoke, z.part, z.off
	word := "generation"
	if a.cfg.consumerOf(z.group, z.process).GroupProtocol == "consumer" {
		word = "member epoch"
	}
	why := "the group had moved to " + word + " " + itoa(int64(z.seen.gen)) + " when " + a.procs[z.seen.proc].name + " was assigned in it (#" + itoa(z.seen.op) + ")"
	if z.own {
		why = "it had itself been assigned at " + word + " " + itoa(int64(z.seen.gen)) + " (#" + itoa(z.seen.op) + ")"
	}
	a.findings = append(a.findings, Finding{Type: ZombieCommit, group: z.group, Example: Example{Partition: part, Offset: off, Process: z.process,
		Ops:    []int64{z.seen.op, invoke, o.Index},
		Detail: "group " + z.group + ": " + z.process + "'s commit at " + word + " " + itoa(int64(z.gen)) + " (#" + itoa(invoke) + ") was acknowledged, though " + why + " before the commit began"}})
}
