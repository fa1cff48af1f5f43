package checker

import (
	"slices"
	"sort"

	"kafkasim/history"
)

// Consumer groups in a history.
//
// Sessions. A group member's position in a partition may legitimately jump
// when the partition is assigned to it: it starts from the group's committed
// offset (or auto.offset.reset), not where it last read. So an assign or a
// revoke resets the member's session only for the partitions involved:
//   - revoke: the listed partitions are forgotten;
//   - assign: "partitions" is what the member owns after it (docs/history.md).
//     Every listed partition starts a new session, as the history format lets the
//     position jump at an assign: under the eager protocol the member starts
//     again from the committed offset even where it keeps a partition, and a
//     recorder need not record the revoke that came first; a partition it
//     owned that is not listed was taken away (as by a revoke).
// A member's session for a partition runs from the assign to the revoke, and
// within it the member reads the partition in order without gaps
// (nonmonotonic-poll, poll-skip).
//
// Committed offsets. Each (group, partition) committed offset is a register:
// commit writes it (from the commit's invocation to its completion), a
// transaction's offsets (sendOffsetsToTransaction) are written by its
// txn-commit, and fetch-committed reads it. Two checks here, besides the
// register's linearizability (linear.go):
//   - nonmonotonic-commit: a successful commit of an offset lower than the
//     last successful commit of that (group, partition) acknowledged before
//     it was invoked. Kafka's coordinator stores whatever a member commits,
//     so whether this breaks a guarantee depends on the delivery semantics
//     the consumer promises (verdicts.go): going back re-delivers records
//     already processed — a cost at-least-once accepts, a violation of
//     at-most-once and of exactly-once.
//   - stale-offset-fetch: a fetch-committed that returned an offset older
//     than the latest commit acknowledged before the fetch began (or -1,
//     nothing committed, after a commit was acknowledged): an acknowledged
//     commit is not visible, so the committed offset is not linearizable.
//     Precisely: let C* be the commit that, of those acknowledged before
//     the fetch began, began last; a commit that completed before C* began
//     was overwritten before the fetch began. The fetch may return the value
//     of any commit not overwritten that way and invoked before the fetch
//     completed (ok, info or still pending).

type regKey struct {
	group string
	part  string
}

type commitRec struct {
	invoke   int64
	complete int64 // -1: pending or indeterminate
	value    int64
	typ      history.Type // Invoke while pending
	proc     int32
	prevOK   int32 // the last commit acknowledged when this one was invoked, -1
	gen      int32 // the commit's generation or member epoch, -1
	inTxn    bool
}

type fetchRec struct {
	invoke, complete int64
	value            int64
	proc             int32
	// gen: the generation (member epoch) of the fetching member's
	// assignment, when it owned the partition under it from the fetch's
	// invocation to its completion; -1 otherwise.
	gen int32
}

// register is one (group, partition) committed offset.
type register struct {
	group, part string
	commits     []commitRec // in invocation order
	fetches     []fetchRec
	lastOK      int32 // the last commit acknowledged so far, -1
	byValue     map[int64][]int32
}

type pendingCommit struct {
	regs    []int32
	commits []int32
	txn     int32     // -1: a commit operation
	zombie  *zombieEv // the committing member was fenced when the commit began (members.go)
}

type pendingFetch struct {
	invoke int64
	group  string
	gen    int32   // the member's ownedGen at the invocation
	owned  []int32 // the partitions it owned then
}

type groupState struct {
	regIDs  map[regKey]int32
	regs    []*register
	txnOffs map[int32]pendingCommit // transaction -> its offsets
	txnDone map[int32]pendingCommit // transaction -> its offsets, once it committed or failed to
}

func newGroupState() groupState {
	return groupState{regIDs: map[regKey]int32{}, txnOffs: map[int32]pendingCommit{}, txnDone: map[int32]pendingCommit{}}
}

func (g *groupState) reg(group, part string) int32 {
	k := regKey{group, part}
	if id, ok := g.regIDs[k]; ok {
		return id
	}
	id := int32(len(g.regs))
	g.regIDs[k] = id
	g.regs = append(g.regs, &register{group: group, part: part, lastOK: -1, byValue: map[int64][]int32{}})
	return id
}

func groupOf(p *procState, o *history.Op) string {
	if x := o.Value.Ext; x != nil && x.Group != "" {
		return x.Group
	}
	return p.group
}

func sortedKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m { // kafkasim:orderless: sorted below
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// addRebalance applies an assign or a revoke to the member's sessions.
func (a *analyzer) addRebalance(pid int32, p *procState, o *history.Op) {
	if o.Type == history.Fail {
		return // it did not happen
	}
	x := o.Value.Ext
	if x != nil && x.Group != "" {
		p.group = x.Group
	}
	if p.owned == nil {
		p.owned = map[int32]bool{}
	}
	var listed []int32
	if x != nil {
		for _, name := range x.Partitions {
			if t, n, ok := splitPartition(name); ok {
				listed = append(listed, a.partID(t, n))
			}
		}
	}
	a.trackRebalance(pid, p, o, listed)
	if o.F == history.FRevoke {
		for _, part := range listed {
			delete(p.sess, part)
			delete(p.owned, part)
		}
		return
	}
	p.ownedGen = generationOf(o)
	keep := map[int32]bool{}
	for _, part := range listed {
		keep[part] = true
	}
	for part := range p.owned { // kafkasim:orderless: deletes from maps
		if !keep[part] {
			delete(p.sess, part)
			delete(p.owned, part)
		}
	}
	for _, part := range listed {
		delete(p.sess, part)
		p.owned[part] = true
	}
}

func (a *analyzer) addCommit(pid int32, p *procState, o *history.Op) {
	g := &a.groups
	if o.Type == history.Invoke {
		group := groupOf(p, o)
		if p.group == "" {
			p.group = group
		}
		pc := pendingCommit{txn: -1}
		if x := o.Value.Ext; x != nil {
			for _, part := range sortedKeys(x.Offsets) {
				pc.regs = append(pc.regs, g.reg(group, part))
				pc.commits = append(pc.commits, g.invokeCommit(pc.regs[len(pc.regs)-1], o.Index, x.Offsets[part], pid, false))
				reg := g.regs[pc.regs[len(pc.regs)-1]]
				reg.commits[len(reg.commits)-1].gen = x.Generation
			}
		}
		a.commitJumps(pid, p, o, group)
		if group != "" {
			a.memberCommitted(p, o)
		}
		if pc.zombie = a.fencedAt(p, o, group); pc.zombie != nil {
			pc.zombie.invoke = o.Index
		}
		p.commits = append(p.commits, pc)
		a.stats.Commits++
		return
	}
	if len(p.commits) == 0 {
		return
	}
	pc := p.commits[0]
	p.commits = p.commits[1:]
	if pc.zombie != nil && o.Type == history.OK {
		a.zombieCommitted(pc.zombie, o)
	}
	for i, r := range pc.regs {
		a.completeCommit(r, pc.commits[i], o.Type, o.Index)
	}
}

func (g *groupState) invokeCommit(r int32, at, value int64, pid int32, inTxn bool) int32 {
	reg := g.regs[r]
	c := int32(len(reg.commits))
	reg.commits = append(reg.commits, commitRec{invoke: at, complete: -1, value: value, typ: history.Invoke, proc: pid, prevOK: reg.lastOK, gen: -1, inTxn: inTxn})
	reg.byValue[value] = append(reg.byValue[value], c)
	return c
}

func (a *analyzer) completeCommit(r, c int32, typ history.Type, at int64) {
	g := &a.groups
	reg := g.regs[r]
	cr := &reg.commits[c]
	cr.typ = typ
	if typ != history.OK {
		return // failed: never happened; info: may or may not have
	}
	cr.complete = at
	if cr.prevOK >= 0 {
		prev := &reg.commits[cr.prevOK]
		if cr.value < prev.value {
			what := "commit"
			if cr.inTxn {
				what = "transaction's offset commit"
			}
			a.findings = append(a.findings, Finding{Type: NonmonotonicCommit, group: reg.group, inTxn: cr.inTxn, Example: Example{Partition: reg.part, Offset: cr.value,
				Process: a.procs[cr.proc].name, Ops: []int64{prev.invoke, prev.complete, cr.invoke, cr.complete},
				Detail: "group " + reg.group + ": a " + what + " of offset " + itoa(cr.value) + " was acknowledged after the commit of " + itoa(prev.value) + " (#" + itoa(prev.complete) + ")"}})
		}
	}
	reg.lastOK = c
}

// txnOffsets takes the offsets a transaction commits (its commit's
// invocation).
func (g *groupState) txnOffsets(a *analyzer, pid int32, p *procState, t int32, o *history.Op) {
	x := o.Value.Ext
	if x == nil || len(x.Offsets) == 0 {
		return
	}
	group := groupOf(p, o)
	if p.group == "" {
		p.group = group
	}
	pc := pendingCommit{txn: t}
	for _, part := range sortedKeys(x.Offsets) {
		pc.regs = append(pc.regs, g.reg(group, part))
		pc.commits = append(pc.commits, g.invokeCommit(pc.regs[len(pc.regs)-1], o.Index, x.Offsets[part], pid, true))
		reg := g.regs[pc.regs[len(pc.regs)-1]]
		reg.commits[len(reg.commits)-1].gen = x.Generation
	}
	// TxnOffsetCommit carries the member's generation (or member epoch)
	// since KIP-447, and the coordinator fences it as it fences an
	// OffsetCommit (GroupCoordinatorService.commitTransactionalOffsets).
	if pc.zombie = a.fencedAt(p, o, group); pc.zombie != nil {
		pc.zombie.invoke = o.Index
	}
	g.txnOffs[t] = pc
}

// txnCommitted completes the offsets of a transaction with its commit's
// outcome; a commit completion that lists offsets its invocation did not
// carries them too.
func (g *groupState) txnCommitted(a *analyzer, t int32, o *history.Op) {
	pc, ok := g.txnOffs[t]
	if !ok {
		if x := o.Value.Ext; x != nil && len(x.Offsets) > 0 {
			tr := &a.txns[t]
			p := a.procs[tr.proc]
			group := groupOf(p, o)
			pc = pendingCommit{txn: t}
			at := tr.commitInvoke
			if at < 0 {
				at = o.Index
			}
			for _, part := range sortedKeys(x.Offsets) {
				pc.regs = append(pc.regs, g.reg(group, part))
				pc.commits = append(pc.commits, g.invokeCommit(pc.regs[len(pc.regs)-1], at, x.Offsets[part], tr.proc, true))
			}
		}
	}
	delete(g.txnOffs, t)
	g.txnDone[t] = pc
	if pc.zombie != nil && o.Type == history.OK {
		a.zombieCommitted(pc.zombie, o)
	}
	for i, r := range pc.regs {
		a.completeCommit(r, pc.commits[i], o.Type, o.Index)
	}
}

// procEnded: a process that crashed leaves its commits indeterminate.
func (g *groupState) procEnded(p *procState) {
	for _, pc := range p.commits {
		for i, r := range pc.regs {
			g.regs[r].commits[pc.commits[i]].typ = history.Info
		}
	}
	p.commits, p.fetches = p.commits[:0], p.fetches[:0]
}

func (a *analyzer) addFetch(pid int32, p *procState, o *history.Op) {
	if o.Type == history.Invoke {
		pf := pendingFetch{invoke: o.Index, group: groupOf(p, o), gen: p.ownedGen}
		for part := range p.owned { // kafkasim:orderless: a set, looked up
			pf.owned = append(pf.owned, part)
		}
		p.fetches = append(p.fetches, pf)
		return
	}
	if len(p.fetches) == 0 {
		return
	}
	pf := p.fetches[0]
	p.fetches = p.fetches[1:]
	if o.Type != history.OK || o.Value.Ext == nil {
		return
	}
	group := pf.group
	if x := o.Value.Ext; x.Group != "" {
		group = x.Group
	}
	g := &a.groups
	x := o.Value.Ext
	for _, part := range sortedKeys(x.Offsets) {
		r := g.reg(group, part)
		reg := g.regs[r]
		f := fetchRec{invoke: pf.invoke, complete: o.Index, value: x.Offsets[part], proc: pid, gen: -1}
		if t, n, ok := splitPartition(part); ok && pf.gen >= 0 && p.ownedGen == pf.gen {
			if id := a.partID(t, n); slices.Contains(pf.owned, id) && p.owned[id] {
				f.gen = pf.gen
			}
		}
		reg.fetches = append(reg.fetches, f)
		a.checkFetch(reg, f)
	}
}

// checkFetch reports a fetch-committed that returned an offset older than an
// acknowledged commit's.
func (a *analyzer) checkFetch(reg *register, f fetchRec) {
	// C*: of the commits acknowledged before the fetch began, the one that
	// began last.
	star := int32(-1)
	for i := len(reg.commits) - 1; i >= 0; i-- {
		c := &reg.commits[i]
		if c.invoke >= f.invoke {
			continue
		}
		if c.typ == history.OK && c.complete >= 0 && c.complete < f.invoke {
			star = int32(i)
			break
		}
	}
	if star < 0 {
		return
	}
	cs := &reg.commits[star]
	for _, ci := range reg.byValue[f.value] {
		c := &reg.commits[ci]
		if c.typ == history.Fail || c.invoke > f.complete {
			continue
		}
		if c.complete < 0 || c.complete >= cs.invoke {
			return
		}
	}
	got := "offset " + itoa(f.value)
	if f.value < 0 {
		got = "no committed offset"
	}
	a.findings = append(a.findings, Finding{Type: StaleOffsetFetch, group: reg.group, Example: Example{Partition: reg.part, Offset: f.value,
		Process: a.procs[f.proc].name, Ops: []int64{cs.invoke, cs.complete, f.invoke, f.complete},
		Detail: "group " + reg.group + ": fetch-committed returned " + got + " after the commit of " + itoa(cs.value) + " was acknowledged (#" + itoa(cs.complete) + ")"}})
}
