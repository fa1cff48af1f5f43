package checker

import (
	"cmp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"kafkasim/godview"
	"kafkasim/history"
)

// Exactly-once (KIP-98, KIP-447) in a history: read-process-write
// processors, whose sends carry `source` (the input record each output
// record was made from), and transactional producers, whose operations carry
// `producer_id` and `producer_epoch` (docs/history.md).
//
// A processor's group is the `group` of its send, else its process's group
// (from its assign, poll, commit or txn-commit operations). Its committed
// output is what final reads hold of its output records: one a
// read_committed final poll returned, or one a read_uncommitted final poll
// returned whose transaction committed (or that was sent outside a
// transaction). Its input records are, per partition whose offsets the group
// committed, the records below the group's final committed offset that a
// read_committed reader must see (not of a transaction that aborted or never
// committed), from where the group began (the log start; with
// auto.offset.reset=latest, its lowest source offset) and not below the log
// start final reads began from.
//
//   - duplicate-output: an input record with more than one output record in
//     the committed output.
//   - lost-output: an input record below the group's final committed offset
//     none of whose output records may be in the committed output: none was
//     sent, or each failed, belongs to a transaction that aborted or never
//     committed, or lies where final reads covered and did not hold it. An
//     output record whose position final reads do not cover (or a
//     transaction of unknown outcome's, in read_uncommitted final reads)
//     may be there: not judged.
//   - nonatomic-output: a committed output record of an exactly-once group
//     whose transaction did not also commit its input's offset: it was sent
//     outside a transaction, or its transaction's offsets (sendOffsetsToTransaction)
//     for the input partition do not pass the input, or the group's offset
//     had already passed it (the last offset commit acknowledged before the
//     transaction's commit was invoked). Exactly-once means the two commit
//     together; this is the check that they did, whatever the failures.
//
// A group is judged exactly-once when its configuration says commit:
// transactional, or, when its configuration says nothing (or the group is
// not configured), when the history shows its offsets committed inside a
// transaction (a txn-commit with `offsets`): only a processor using
// sendOffsetsToTransaction does that, and the claim is the stricter one, so
// the history cannot talk the checker into a weaker verdict. The report's
// notes say when a group's mode was learned this way.
//
// Transactional producers:
//
//   - zombie-write: a record of a transaction of producer epoch e became
//     visible to read_committed readers (a read_committed poll returned it)
//     although the transaction's commit was invoked (or never invoked, nor
//     an abort: an aborted transaction's records read are aborted-reads) after
//     an operation of the same transactional.id and producer id at an epoch
//     above e had completed: by then InitProducerId had bumped the epoch,
//     the coordinator had aborted whatever the older epoch had open, and it
//     answers PRODUCER_FENCED (INVALID_PRODUCER_EPOCH) to the older epoch's
//     EndTxn and produce requests. Under transaction version 2 (KIP-890) the
//     epoch is also bumped at every transaction's end; an instance's next
//     transaction begins only after its previous one's commit, so that bump
//     never makes a transaction look fenced.
//   - hanging-transaction: a read_committed final read whose end offset
//     (the last stable offset) stopped at the first record of a transaction
//     in a partition where records lie past it: the transaction held the
//     last stable offset when the final reads began. Its verdict depends on
//     whether its outcome appeared, how long it had been open, and what the
//     god view saw (godview.HangingTransaction: the last stable offset held
//     by a transaction its coordinator no longer holds open, KIP-664).

// outputRec is one output record of a processor.
type outputRec struct {
	send  int32
	part  int32 // the input record's partition
	off   int64 // and offset
	group string
}

// epochSeen is the first completion of an operation carrying a producer
// epoch of a transactional id.
type epochSeen struct {
	epoch int32
	at    int64
}

type tidProducer struct {
	tid string
	id  int64
}

type eosState struct {
	outputs  []outputRec
	outputOf []bool // by send: already taken as an output
	epochs   map[tidProducer][]epochSeen
	// rcEnd: per partition, the end offset (the last stable offset) a
	// read_committed final read read it to; finalT the time the final reads
	// began (0: unknown).
	rcEnd  map[int32]int64
	finalT int64
}

// addEOS takes what an operation says about exactly-once: a processor's
// output, a transactional producer's epoch.
func (a *analyzer) addEOS(pid int32, p *procState, o *history.Op, si int32) {
	x := o.Value.Ext
	if x == nil {
		return
	}
	e := &a.eos
	if x.Source != nil && si >= 0 && (int(si) >= len(e.outputOf) || !e.outputOf[si]) {
		for int(si) >= len(e.outputOf) {
			e.outputOf = append(e.outputOf, false)
		}
		e.outputOf[si] = true
		group := x.Group
		if group == "" {
			group = p.group
		}
		e.outputs = append(e.outputs, outputRec{send: si, part: a.partID(x.Source.Topic, x.Source.Partition), off: x.Source.Offset, group: group})
	}
	if x.Producer == nil || x.Producer.Epoch < 0 {
		return
	}
	tid := txnIDOf(o)
	t := int32(-1)
	if si >= 0 {
		t = a.txn(&a.sends[si])
	} else if o.F == history.FTxnBegin {
		t = p.txn
	}
	if t >= 0 {
		if tid == "" {
			tid = a.txns[t].tid
		}
		if tr := &a.txns[t]; tr.epoch < 0 {
			tr.prodID, tr.epoch = x.Producer.ID, x.Producer.Epoch
		}
	}
	if tid == "" || o.Type == history.Invoke {
		return
	}
	if e.epochs == nil {
		e.epochs = map[tidProducer][]epochSeen{}
	}
	k := tidProducer{tid, x.Producer.ID}
	e.epochs[k] = append(e.epochs[k], epochSeen{x.Producer.Epoch, o.Index})
}

// rcFinalEnds notes the end offsets a read_committed final poll carries.
func (a *analyzer) rcFinalEnds(x *history.Ext) {
	for _, name := range sortedKeys(x.EndOffsets) {
		if t, part, ok := splitPartition(name); ok {
			pi := a.partID(t, part)
			if a.eos.rcEnd == nil {
				a.eos.rcEnd = map[int32]int64{}
			}
			if _, ok := a.eos.rcEnd[pi]; !ok {
				a.eos.rcEnd[pi] = x.EndOffsets[name]
			}
		}
	}
}

// checkEOS runs the exactly-once checks (after checkLost: it reads what
// final reads cover).
func (a *analyzer) checkEOS() {
	a.checkZombieWrites()
	a.checkHanging()
	a.hangingFromGodView()
	if len(a.eos.outputs) > 0 {
		a.checkOutputs()
	}
}

// txnGroups are the groups whose offsets the history shows committed inside
// a transaction.
func (a *analyzer) txnGroups() map[string]bool {
	out := map[string]bool{}
	for _, reg := range a.groups.regs {
		for i := range reg.commits {
			if reg.commits[i].inTxn {
				out[reg.group] = true
				break
			}
		}
	}
	return out
}

// commitMode is the delivery semantics group (acting at process) is judged
// by: its configuration's commit mode, or transactional when the
// configuration leaves it unsaid and the group's offsets were committed
// inside transactions.
func (c *Config) commitMode(a *analyzer, group, process string) string {
	mode := c.consumerOf(group, process).Commit
	if group != "" && !c.commitConfigured(group, process) && a.groupInTxn(group) {
		return "transactional"
	}
	return mode
}

// commitConfigured reports whether the configuration states group's commit
// mode (an entry naming the group, or matching the process, says commit).
func (c *Config) commitConfigured(group, process string) bool {
	for _, g := range c.Consumers {
		if g.Commit != "" && ((group != "" && g.Group == group) || (g.Prefix != "" && (process == g.Prefix || strings.HasPrefix(process, g.Prefix+"-")))) {
			return true
		}
	}
	return false
}

func (a *analyzer) groupInTxn(group string) bool {
	if a.inTxnGroups == nil {
		a.inTxnGroups = a.txnGroups()
	}
	return a.inTxnGroups[group]
}

// committedOutput reports whether the output record of send si is in the
// committed output for sure.
func (a *analyzer) committedOutput(si int32) bool {
	s := &a.sends[si]
	v := a.val(s.val)
	if v.flags&obsFinalRC != 0 {
		return true
	}
	return v.flags&obsFinal != 0 && (a.txn(s) < 0 || a.txns[a.txn(s)].outcome == txnCommitted)
}

// mayBeOutput reports whether the output record of send si may be in the
// committed output: final reads hold it (its transaction not known to
// have aborted), or they do not cover where it may be.
func (a *analyzer) mayBeOutput(si int32) bool {
	s := &a.sends[si]
	if s.typ == history.Fail {
		return false
	}
	if a.txn(s) >= 0 {
		switch a.txns[a.txn(s)].outcome {
		case txnAborted, txnNeverCommitted:
			return false
		}
	}
	v := a.val(s.val)
	if v.flags&obsFinal != 0 {
		return true
	}
	if s.part() < 0 || a.offset(s) < 0 {
		return !(a.finalAll || a.finalTopic[a.sendTopic(s)])
	}
	po := a.parts[s.part()]
	covered := a.finalAll || a.finalTopic[po.topic] || a.finalPart[s.part()] || po.finalReached || a.offset(s) < po.finalTo
	return !covered || a.pastFinalReads(s, v)
}

func (a *analyzer) outputName(si int32) string {
	s := &a.sends[si]
	if s.part() >= 0 && a.offset(s) >= 0 {
		return a.valName(s.val) + " (" + a.parts[s.part()].name + "@" + itoa(a.offset(s)) + ")"
	}
	return a.valName(s.val)
}

func (a *analyzer) checkOutputs() {
	e := &a.eos
	for i := range e.outputs {
		if o := &e.outputs[i]; o.group == "" {
			o.group = a.procs[a.sends[o.send].proc].group
		}
	}
	outs := slices.Clone(e.outputs)
	slices.SortFunc(outs, func(x, y outputRec) int {
		return cmp.Or(cmp.Compare(x.group, y.group), cmp.Compare(x.part, y.part), cmp.Compare(x.off, y.off), cmp.Compare(x.send, y.send))
	})
	// duplicate-output and nonatomic-output, per input record.
	for lo := 0; lo < len(outs); {
		hi := lo + 1
		for hi < len(outs) && outs[hi].group == outs[lo].group && outs[hi].part == outs[lo].part && outs[hi].off == outs[lo].off {
			hi++
		}
		a.judgeOutputs(outs[lo:hi])
		lo = hi
	}
	// lost-output, per partition a processor group committed offsets of.
	groups := map[string]bool{}
	for _, o := range outs {
		groups[o.group] = true
	}
	passed := a.resetPassed()
	lostVals := a.lostAckedValues()
	processed := a.processedIndex()
	for _, reg := range a.groups.regs {
		if !groups[reg.group] {
			continue
		}
		final, _, complete, _, ok := reg.finalCommitted()
		pi := a.partByName(reg.part)
		if !ok || pi < 0 {
			continue
		}
		po := a.parts[pi]
		// The group's outputs of this partition.
		from := sort.Search(len(outs), func(i int) bool {
			o := &outs[i]
			return o.group > reg.group || o.group == reg.group && o.part >= pi
		})
		to := from
		for to < len(outs) && outs[to].group == reg.group && outs[to].part == pi {
			to++
		}
		mine := outs[from:to]
		// Where auto.offset.reset=latest put a member that found no
		// committed offset (every owner until the group's first commit:
		// an aborted attempt commits nothing), the group never owed what
		// lay below.
		var spans []offsetSpan
		if g, ok := a.members.groupIDs[reg.group]; ok {
			spans = passed[groupPart{g, pi}]
		}
		i := sort.Search(len(po.offsets), func(i int) bool { return po.offsets[i] >= po.logStart })
		for ; i < len(po.offsets) && po.offsets[i] < final; i++ {
			if !po.visRC[i] {
				continue
			}
			off := po.offsets[i]
			if slices.ContainsFunc(spans, func(s offsetSpan) bool { return s.lo <= off && off < s.hi }) {
				continue
			}
			j := sort.Search(len(mine), func(j int) bool { return mine[j].off >= off })
			var sent []int32
			may := false
			for ; j < len(mine) && mine[j].off == off; j++ {
				sent = append(sent, mine[j].send)
				may = may || a.mayBeOutput(mine[j].send)
			}
			if may {
				continue
			}
			if len(sent) == 0 && a.membersJudged(reg.group) && !processed(reg.group, pi, off) && !a.skipped[skipAt{reg.group, pi, off}] {
				// No member processed the offset, and the group was not
				// owed its record (skipped-record's judgement: the record
				// the log holds there came after a loss, or was lost
				// before the group passed it, or the cleaner removed it).
				continue
			}
			if a.cleanerMayHaveRemoved(pi, i, lostVals) {
				// The log cleaner may have removed the input before the
				// group reached it (or came back to it after an aborted
				// attempt): Kafka promises a compacted topic's reader only
				// the latest record of each key, which has an offset of
				// its own.
				continue
			}
			a.reportLostOutput(reg, pi, off, final, complete, sent)
		}
	}
}

func (a *analyzer) reportLostOutput(reg *register, pi int32, off, final, complete int64, sent []int32) {
	var ops []int64
	if complete >= 0 {
		ops = append(ops, complete)
	}
	var copies []copyAt
	why := "no output record was sent for it"
	if len(sent) > 0 {
		var names []string
		for k, si := range sent {
			s := &a.sends[si]
			ops = append(ops, a.invoke(s))
			if s.part() >= 0 && a.offset(s) >= 0 {
				copies = append(copies, copyAt{a.parts[s.part()].name, a.offset(s)})
			}
			if k < 4 {
				names = append(names, a.outputName(si)+": "+a.outputFate(si))
			}
		}
		why = "its output records are not in the committed output: " + strings.Join(names, "; ")
	}
	proc := ""
	if len(sent) > 0 {
		proc = a.procs[a.sends[sent[0]].proc].name
	}
	a.findings = append(a.findings, Finding{Type: LostOutput, group: reg.group, copies: copies, Example: Example{
		Partition: a.parts[pi].name, Offset: off, Process: proc, Ops: sortedUnique(ops),
		Detail: "group " + reg.group + " committed " + reg.part + " up to offset " + itoa(final) + ", past this input record, but " + why}})
}

// outputFate words why an output record is not in the committed output.
func (a *analyzer) outputFate(si int32) string {
	s := &a.sends[si]
	switch {
	case s.typ == history.Fail:
		return "its send failed"
	case a.txn(s) >= 0 && a.txns[a.txn(s)].outcome == txnAborted:
		return "its transaction aborted"
	case a.txn(s) >= 0 && a.txns[a.txn(s)].outcome == txnNeverCommitted:
		return "its transaction never committed"
	}
	return "final reads do not hold it"
}

// judgeOutputs: the output records of one input record.
func (a *analyzer) judgeOutputs(run []outputRec) {
	first := &run[0]
	var committed []int32
	for _, o := range run {
		if a.committedOutput(o.send) {
			committed = append(committed, o.send)
		}
	}
	proc := a.procs[a.sends[first.send].proc].name
	part := a.parts[first.part].name
	if len(committed) > 1 {
		var names []string
		var ops []int64
		var copies []copyAt
		for k, si := range committed {
			s := &a.sends[si]
			ops = append(ops, a.invoke(s))
			if a.txn(s) >= 0 && a.txns[a.txn(s)].end >= 0 {
				ops = append(ops, a.txns[a.txn(s)].end)
			}
			if s.part() >= 0 && a.offset(s) >= 0 {
				copies = append(copies, copyAt{a.parts[s.part()].name, a.offset(s)})
			}
			if k < 4 {
				names = append(names, a.outputName(si)+" by "+a.procs[s.proc].name)
			}
		}
		a.findings = append(a.findings, Finding{Type: DuplicateOutput, group: first.group, copies: copies, Example: Example{
			Partition: part, Offset: first.off, Process: a.procs[a.sends[committed[1]].proc].name, Ops: sortedUnique(ops),
			Detail: "group " + first.group + ": the committed output holds " + strconv.Itoa(len(committed)) + " output records of this input record: " + strings.Join(names, ", ")}})
	}
	if len(committed) == 0 || a.cfg.commitMode(a, first.group, proc) != "transactional" {
		return
	}
	si := committed[0]
	s := &a.sends[si]
	why := ""
	passedFirst := false
	var below *offsetBelow
	ops := []int64{a.invoke(s)}
	if a.txn(s) < 0 {
		why = "it was sent outside a transaction"
	} else {
		t := &a.txns[a.txn(s)]
		ops = append(ops, t.commitInvoke, t.end)
		r, c, ok := a.txnOffsetOf(a.txn(s), first.group, part)
		switch {
		case !ok:
			why = "its transaction (" + a.txnName(a.txn(s)) + ") committed no offset of " + part + " for the group"
		case a.groups.regs[r].commits[c].value <= first.off:
			why = "its transaction (" + a.txnName(a.txn(s)) + ") committed the group's offset of " + part + " only to " + itoa(a.groups.regs[r].commits[c].value)
			read, val := a.inputRead(si, first)
			below = &offsetBelow{read: read, val: val, commit: t.commitInvoke}
		default:
			reg := a.groups.regs[r]
			if prev := reg.commits[c].prevOK; prev >= 0 && reg.commits[prev].value > first.off {
				pc := &reg.commits[prev]
				ops = append(ops, pc.invoke, pc.complete)
				what := "an offset commit"
				if pc.inTxn {
					what = "another transaction's offset commit"
				}
				passedFirst = true
				why = what + " by " + a.procs[pc.proc].name + " had already moved the group's offset of " + part + " to " + itoa(pc.value) + " (#" + itoa(pc.complete) + ") before its transaction's commit began"
			}
		}
	}
	if why == "" {
		return
	}
	a.findings = append(a.findings, Finding{Type: NonatomicOutput, group: first.group, offsetPassedFirst: passedFirst, offsetBelow: below, Example: Example{
		Partition: part, Offset: first.off, Process: a.procs[s.proc].name, Ops: sortedUnique(ops),
		Detail: "group " + first.group + ": output record " + a.outputName(si) + " of this input record is committed, but " + why}})
}

// inputRead is the operation after which the processor held the input
// record output si was made from: the completion of the poll that returned
// it, else the start of its processing, else the send itself; and that
// record (-1: unknown).
func (a *analyzer) inputRead(si int32, o *outputRec) (int64, int32) {
	s := &a.sends[si]
	m := &a.members
	at := a.invoke(s)
	val := int32(-1)
	best := int64(-1)
	for i := range m.procs {
		pr := &m.procs[i]
		if pr.proc != s.proc || pr.part != o.part || pr.off != o.off || pr.start > a.invoke(s) || pr.start < best || m.groupNames[pr.group] != o.group {
			continue
		}
		best, at, val = pr.start, pr.start, pr.val
		if pr.poll >= 0 {
			at = pr.poll
		}
	}
	return at, val
}

// txnOffsetOf finds the offset commit transaction t made of partition for
// group: its register and commit.
func (a *analyzer) txnOffsetOf(t int32, group, part string) (int32, int32, bool) {
	r, ok := a.groups.regIDs[regKey{group, part}]
	if !ok {
		return 0, 0, false
	}
	pc, ok := a.groups.txnDone[t]
	if !ok {
		return 0, 0, false
	}
	for i, reg := range pc.regs {
		if reg == r {
			return r, pc.commits[i], true
		}
	}
	return 0, 0, false
}

// checkZombieWrites reports records of fenced producer epochs that
// read_committed readers read.
func (a *analyzer) checkZombieWrites() {
	e := &a.eos
	if len(e.epochs) == 0 {
		return
	}
	// Per transactional id and producer id, the first completion at each
	// epoch, and from the top the earliest completion at any higher epoch.
	type fence struct {
		epochs []epochSeen // ascending epoch, first completion each
		after  []int64     // after[i]: earliest completion at an epoch above epochs[i]
	}
	fences := map[tidProducer]*fence{}
	fenceOf := func(k tidProducer) *fence {
		if f, ok := fences[k]; ok {
			return f
		}
		seen := slices.Clone(e.epochs[k])
		slices.SortFunc(seen, func(x, y epochSeen) int { return cmp.Or(cmp.Compare(x.epoch, y.epoch), cmp.Compare(x.at, y.at)) })
		f := &fence{}
		for _, s := range seen {
			if n := len(f.epochs); n == 0 || f.epochs[n-1].epoch != s.epoch {
				f.epochs = append(f.epochs, s)
			}
		}
		f.after = make([]int64, len(f.epochs))
		next := int64(-1)
		for i := len(f.epochs) - 1; i >= 0; i-- {
			f.after[i] = next
			if next < 0 || f.epochs[i].at < next {
				next = f.epochs[i].at
			}
		}
		fences[k] = f
		return f
	}
	// fencedBy: the completion at a higher epoch that fenced transaction t
	// before its commit began, -1 if none.
	fencedBy := func(t *txnRec) int64 {
		// A transaction its own process aborted is aborted-read's: its
		// abort's answer may carry the epoch the abort bumped to.
		if t.epoch < 0 || t.tid == "" || t.outcome == txnAborted || (t.abortInvoke >= 0 && t.commitInvoke < 0) {
			return -1
		}
		f := fenceOf(tidProducer{t.tid, t.prodID})
		i := sort.Search(len(f.epochs), func(i int) bool { return f.epochs[i].epoch > t.epoch })
		if i == len(f.epochs) {
			return -1
		}
		at := f.epochs[i].at
		if i > 0 && f.epochs[i-1].epoch == t.epoch {
			at = f.after[i-1]
		} else if i < len(f.after) && f.after[i] >= 0 && f.after[i] < at {
			at = f.after[i]
		}
		if t.commitInvoke >= 0 && t.commitInvoke < at {
			return -1
		}
		return at
	}
	done := map[int32]bool{}
	for _, r := range a.txnReads {
		if !r.rc || done[r.txn] {
			continue
		}
		t := &a.txns[r.txn]
		at := fencedBy(t)
		if at < 0 {
			continue
		}
		done[r.txn] = true
		ops := []int64{at, r.op}
		when := "its commit was never invoked"
		if t.commitInvoke >= 0 {
			ops = append(ops, t.commitInvoke)
			when = "its commit was invoked at #" + itoa(t.commitInvoke)
		}
		a.findings = append(a.findings, Finding{Type: ZombieWrite, Example: Example{Partition: a.parts[r.part].name, Offset: r.off,
			Value: a.valName(r.val), Process: a.procs[r.proc].name, Ops: sortedUnique(ops),
			Detail: "a read_committed poll by " + a.procs[r.proc].name + " read " + a.valName(r.val) + ", written by " + a.procs[t.proc].name + " as transactional id " + t.tid +
				" at producer epoch " + itoa(int64(t.epoch)) + " (producer id " + itoa(t.prodID) + "); a higher epoch of it had completed an operation at #" + itoa(at) + " and " + when}})
	}
}

// checkHanging reports transactions whose first record in a partition is
// where a read_committed final read's end offset (the last stable offset)
// stopped, with records past it.
func (a *analyzer) checkHanging() {
	e := &a.eos
	if len(e.rcEnd) == 0 || len(a.txns) == 0 {
		return
	}
	parts := make([]int32, 0, len(e.rcEnd))
	for pi := range e.rcEnd { // kafkasim:orderless: sorted below
		parts = append(parts, pi)
	}
	slices.Sort(parts)
	for _, pi := range parts {
		end := e.rcEnd[pi]
		po := a.parts[pi]
		t := int32(-1)
		var val int32
		for _, ob := range po.obsAt(end) {
			// A record sent after the final reads began may have been
			// appended after the end offset was taken.
			if si := a.valSend[ob.val]; si >= 0 && a.txn(&a.sends[si]) >= 0 && a.offset(&a.sends[si]) == end && (a.finalBegin < 0 || a.invoke(&a.sends[si]) < a.finalBegin) {
				t, val = a.txn(&a.sends[si]), ob.val
				break
			}
		}
		if t < 0 {
			continue
		}
		tr := &a.txns[t]
		outcome := "its outcome never appeared in the history"
		if tr.outcome == txnCommitted && tr.okCommit || tr.outcome == txnAborted {
			outcome = "though its " + strings.TrimPrefix(tr.endF, "txn-") + " had completed (#" + itoa(tr.end) + ")"
		} else if tr.outcome == txnCommitted {
			outcome = "its commit's outcome unknown (a read_committed poll read it)"
		}
		ops := []int64{tr.begin}
		if tr.end >= 0 {
			ops = append(ops, tr.end)
		}
		if a.finalBegin >= 0 {
			ops = append(ops, a.finalBegin)
		}
		a.findings = append(a.findings, Finding{Type: HangingTransaction, resolved: tr.okCommit || tr.outcome == txnAborted, txnProc: a.procs[tr.proc].name,
			idleFor: e.finalT - tr.lastT, Example: Example{Partition: po.name, Offset: end, Value: a.valName(val), Process: a.procs[tr.proc].name, Ops: sortedUnique(ops),
				Detail: "a read_committed final read of " + po.name + " ended at offset " + itoa(end) + " (its last stable offset), where " + a.txnName(t) + " had written " + a.valName(val) + "; " + outcome}})
	}
}

// hangingFromGodView reports the hanging transactions the god view saw that
// no finding of the history names (a read_committed final read that did not
// record its end offsets, or none at all).
func (a *analyzer) hangingFromGodView() {
	for _, f := range a.cfg.Happened.Of(godview.HangingTransaction) {
		if slices.ContainsFunc(a.findings, func(g Finding) bool {
			return g.Type == HangingTransaction && g.Partition == f.Partition && g.Offset == f.From
		}) {
			continue
		}
		a.findings = append(a.findings, Finding{Type: HangingTransaction, resolved: true, Example: Example{Partition: f.Partition, Offset: f.From,
			Detail: "the simulator saw " + f.Partition + "'s last stable offset held at " + itoa(f.From) + " by transactional id " + f.TransactionalID +
				" (producer id " + itoa(f.Producer) + ") when the run ended, a transaction its coordinator no longer held open"}})
	}
}

// modesLearned words the groups judged exactly-once because the history
// shows their offsets committed in transactions, their configuration saying
// nothing of their commit mode ("" when none).
func (c *Config) modesLearned(a *analyzer) string {
	var names []string
	for i, name := range a.members.groupNames {
		if a.groupInTxn(name) && !c.commitConfigured(name, a.members.groupFirst[i]) {
			names = append(names, name)
		}
	}
	for _, reg := range a.groups.regs {
		if a.groupInTxn(reg.group) && !slices.Contains(names, reg.group) && !c.commitConfigured(reg.group, "") {
			names = append(names, reg.group)
		}
	}
	if len(names) == 0 {
		return ""
	}
	sort.Strings(names)
	return "groups " + strings.Join(capList(names, 8), ", ") + ": commit mode not configured; judged exactly-once (commit: transactional, not auto) because the history shows their offsets committed inside transactions (sendOffsetsToTransaction)"
}

// cleanerMayHaveRemoved reports whether the log cleaner of a compacted
// topic may have removed every record a group was owed at partition pi's
// i-th known offset: each record known there (but an acknowledged one lost
// and never read, or one read_committed readers never see) has a key a
// record at a higher offset has too. skipped-record asks the same of each.
func (a *analyzer) cleanerMayHaveRemoved(pi int32, i int, lost map[int32]bool) bool {
	if a.compactionIndex(pi) == nil {
		return false
	}
	po := a.parts[pi]
	for _, ob := range po.obsAt(po.offsets[i]) {
		if (a.obsFlags(&ob)&obsRead == 0 && lost[ob.val]) || !a.visibleToRC(ob.val) {
			continue
		}
		if !a.compactableRecord(pi, po.offsets[i], ob.val) {
			return false
		}
	}
	return true
}

// lostAckedValues are the values lost-acked-write reported.
func (a *analyzer) lostAckedValues() map[int32]bool {
	lost := map[int32]bool{}
	for i := range a.findings {
		if f := &a.findings[i]; f.Type == LostAckedWrite {
			if v, ok := a.valIDs.get(f.Value); ok {
				lost[v] = true
			}
		}
	}
	return lost
}

// membersJudged reports whether skipped-record judged group: its members'
// processing is in the history.
func (a *analyzer) membersJudged(group string) bool {
	g, ok := a.members.groupIDs[group]
	return ok && a.members.processes[g]
}

// processedIndex returns a lookup of the offsets a group's members
// finished processing, built at its first question.
func (a *analyzer) processedIndex() func(group string, pi int32, off int64) bool {
	var done map[skipAt]bool
	return func(group string, pi int32, off int64) bool {
		if done == nil {
			m := &a.members
			done = map[skipAt]bool{}
			for i := range m.procs {
				if pr := &m.procs[i]; pr.ok {
					done[skipAt{m.groupNames[pr.group], pr.part, pr.off}] = true
				}
			}
		}
		return done[skipAt{group, pi, off}]
	}
}
