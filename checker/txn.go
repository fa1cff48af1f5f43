package checker

import (
	"slices"

	"kafkasim/history"
)

// Transactions (KIP-98) in a history: txn-begin / txn-commit / txn-abort
// operations, and sends made while a transaction is open on the process (or
// carrying transactional_id).
//
// A transaction's outcome:
//   - committed: its txn-commit completed ok; or the commit's outcome is
//     unknown (info, or never completed) and a read_committed poll that
//     completed after the commit was invoked returned one of its records
//     (Jepsen's must-have-committed?: such a read is evidence of the commit).
//   - aborted: its txn-abort completed ok, or its txn-commit failed; or the
//     commit's outcome is unknown and its group's committed offsets show
//     that it did not commit (offsetsNotCommitted).
//   - indeterminate: its commit was invoked, the outcome is unknown, and no
//     read_committed reader saw it.
//   - never committed: no commit was ever invoked (the transaction was left
//     open when the history ended, its process crashed, or its abort did not
//     complete ok). The coordinator aborts such a transaction when it times
//     out or the producer is fenced: it can never commit.
//
// A send inside a transaction is an acknowledged write only if the
// transaction committed; its record may be lost (lost-acked-write) like any
// acknowledged record.
//
// Reads of transactional records (definitions follow Jepsen's kafka.clj,
// generalised from "a transaction that reads its own writes" to any reader):
//   - aborted-read: a poll returned a record of an aborted transaction.
//     Under read_committed a violation (the reader stops at the last stable
//     offset and filters aborted records using the aborted-transaction index);
//     under read_uncommitted permitted: that isolation level returns every
//     record below the high watermark, aborted ones included.
//   - uncommitted-read: a read_committed poll returned a record of a
//     transaction that never committed.
//   - precommitted-read: a read_committed poll completed, having returned a
//     record of a transaction, before that transaction's commit was invoked:
//     the record was read before it could have been committed. (Jepsen's
//     precommitted-read is the case where the reader is the writing
//     transaction itself.)
//
// Only read_committed polls are judged for uncommitted and precommitted
// reads: a read_uncommitted poll returns records of open transactions by
// design.

const readCommitted = "read_committed"

type txnOutcome uint8

const (
	txnOpen txnOutcome = iota // while the history is read
	txnCommitted
	txnAborted
	txnIndeterminate
	txnNeverCommitted
)

var outcomeWords = [...]string{"open", "committed", "aborted", "of unknown outcome", "never committed"}

type txnRec struct {
	proc         int32
	tid          string
	begin        int64 // op index where it began: txn-begin's invocation, or its first send
	commitInvoke int64 // -1: commit never invoked
	abortInvoke  int64 // -1
	end          int64 // completion op index of its commit or abort, -1
	endType      history.Type
	endF         string
	sends        []int32
	reads        []readRef // transactional records its process read before it committed
	outcome      txnOutcome
	okCommit     bool // its commit completed ok (its end is a known point in time)
	// The producer id and epoch its sends carried (epoch -1: not
	// recorded), and the time of its last operation (ns).
	prodID int64
	epoch  int32
	lastT  int64
}

// readRef is a transaction whose record a process read.
type readRef struct {
	txn int32
	rc  bool
}

// txnRead is one poll's read of a transactional record.
type txnRead struct {
	txn, val, proc, part int32
	op, off              int64
	rc                   bool
}

func txnIDOf(o *history.Op) string {
	if o.Value.Ext != nil {
		return o.Value.Ext.TransactionalID
	}
	return ""
}

func (p *procState) addRead(t int32, rc bool) {
	k := 2 * int64(t)
	if rc {
		k++
	}
	if p.readSet == nil {
		p.readSet = map[int64]bool{}
	}
	if p.readSet[k] {
		return
	}
	p.readSet[k] = true
	p.reads = append(p.reads, readRef{txn: t, rc: rc})
}

// takeReads hands the reads gathered so far to a transaction.
func (p *procState) takeReads() []readRef {
	out := append([]readRef(nil), p.reads...)
	p.reads = p.reads[:0]
	clear(p.readSet)
	return out
}

// lateTxnReads takes the reads of transactional records that came before
// the record's send was invoked (a read from the future, which only an
// anomaly explains): while the history was read, nobody had sent them yet.
// A read belongs to the reader's first transaction that ended (commit or
// abort invoked) after it, as addRead would have had it.
func (a *analyzer) lateTxnReads() {
	procTxns := map[int32][]int32{}
	for t := range a.txns {
		procTxns[a.txns[t].proc] = append(procTxns[a.txns[t].proc], int32(t))
	}
	for pi, po := range a.parts {
		// Only early reads can be such reads (addPoll), in history order.
		for i := range po.early {
			ob := &po.early[i]
			si := a.valSend[ob.val]
			if a.obsFlags(ob)&obsRead == 0 || si < 0 || a.txn(&a.sends[si]) < 0 || ob.op >= a.invoke(&a.sends[si]) {
				continue
			}
			w, rc := a.txn(&a.sends[si]), a.obsFlags(ob)&obsRC != 0
			a.txnReads = append(a.txnReads, txnRead{txn: w, val: ob.val, op: ob.op, proc: a.obsProc(ob), part: int32(pi), off: ob.off, rc: rc})
			for _, t := range procTxns[a.obsProc(ob)] {
				tr := &a.txns[t]
				end := tr.commitInvoke
				if end < 0 {
					end = tr.abortInvoke
				}
				if end < 0 || end > ob.op {
					tr.reads = append(tr.reads, readRef{txn: w, rc: rc})
					break
				}
			}
		}
	}
}

// txnFor returns the process's open transaction, opening one at op index
// at if none is.
func (a *analyzer) txnFor(pid int32, p *procState, tid string, at int64) int32 {
	if p.txn >= 0 {
		return p.txn
	}
	return a.beginTxn(pid, p, tid, at)
}

func (a *analyzer) beginTxn(pid int32, p *procState, tid string, at int64) int32 {
	// A transaction still open on the process was left behind: it never
	// commits unless its commit was invoked (resolveTxns).
	t := int32(len(a.txns))
	a.txns = append(a.txns, txnRec{proc: pid, tid: tid, begin: at, commitInvoke: -1, abortInvoke: -1, end: -1, epoch: -1})
	p.txn = t
	return t
}

func (a *analyzer) addTxnOp(pid int32, p *procState, o *history.Op) {
	tid := txnIDOf(o)
	if p.txn >= 0 {
		a.txns[p.txn].lastT = max(a.txns[p.txn].lastT, o.Time)
	}
	switch {
	case o.F == history.FTxnBegin:
		if o.Type == history.Invoke {
			a.beginTxn(pid, p, tid, o.Index)
			a.txns[p.txn].lastT = o.Time
		}
		a.addEOS(pid, p, o, -1)
		return
	case o.Type == history.Invoke:
		t := a.txnFor(pid, p, tid, o.Index)
		tr := &a.txns[t]
		if o.F == history.FTxnCommit {
			tr.commitInvoke = o.Index
			tr.reads = p.takeReads()
			a.groups.txnOffsets(a, pid, p, t, o)
		} else {
			tr.abortInvoke = o.Index
			p.takeReads() // the records read so far went into the abort
		}
		return
	}
	// A completion.
	t := p.txn
	if t < 0 {
		// A completion without its invocation (or the process restarted
		// in between): a transaction of its own.
		t = a.beginTxn(pid, p, tid, o.Index)
		if o.F == history.FTxnCommit {
			a.txns[t].commitInvoke = o.Index
		} else {
			a.txns[t].abortInvoke = o.Index
		}
	}
	tr := &a.txns[t]
	tr.end, tr.endType, tr.endF = o.Index, o.Type, o.F
	tr.lastT = max(tr.lastT, o.Time)
	a.addEOS(pid, p, o, -1)
	if x := o.Value.Ext; x != nil {
		for _, s := range x.Sends {
			a.txnSend(pid, p, t, s, o)
		}
	}
	if o.F == history.FTxnCommit {
		a.groups.txnCommitted(a, t, o)
	}
	p.txn = -1
}

// txnSend takes one send a transaction's commit or abort lists: it places
// the transaction's records where the send operations did not.
func (a *analyzer) txnSend(pid int32, p *procState, t int32, s history.Send, o *history.Op) {
	vi := a.valID(s.Value)
	si := a.valSend[vi]
	if si < 0 {
		key := int32(-1)
		if s.HasKey {
			key = a.keyID(s.Key)
		}
		rec := a.newSend(vi, pid, a.topicID(s.Topic), key, a.txns[t].begin)
		a.setTxn(&rec, t)
		a.setComplete(&rec, o.Index)
		if s.Partition >= 0 {
			a.setPart(&rec, a.partID(s.Topic, s.Partition))
			if s.Offset >= 0 {
				rec.typ = history.OK
				a.setOffset(&rec, s.Offset)
			}
		}
		a.valSend[vi] = int32(len(a.sends))
		a.sends = append(a.sends, rec)
		a.txns[t].sends = append(a.txns[t].sends, a.valSend[vi])
		return
	}
	rec := &a.sends[si]
	if rec.proc != pid {
		return
	}
	if a.txn(rec) < 0 {
		a.setTxn(rec, t)
		a.txns[t].sends = append(a.txns[t].sends, si)
	}
	if rec.part() < 0 && s.Partition >= 0 {
		a.setPart(rec, a.partID(s.Topic, s.Partition))
	}
	if a.offset(rec) < 0 && s.Offset >= 0 && rec.part() >= 0 && rec.typ != history.Fail {
		a.setOffset(rec, s.Offset)
		rec.typ = history.OK
		if a.complete(rec) < 0 {
			a.setComplete(rec, o.Index)
		}
	}
}

// resolveTxns decides each transaction's outcome.
func (a *analyzer) resolveTxns() {
	seen := make([]bool, len(a.txns)) // a read_committed poll after the commit began saw it
	for _, r := range a.txnReads {
		if t := &a.txns[r.txn]; r.rc && t.commitInvoke >= 0 && r.op > t.commitInvoke {
			seen[r.txn] = true
		}
	}
	for i := range a.txns {
		t := &a.txns[i]
		switch {
		case t.endF == history.FTxnCommit && t.endType == history.OK:
			t.outcome, t.okCommit = txnCommitted, true
		case t.endF == history.FTxnCommit && t.endType == history.Fail,
			t.endF == history.FTxnAbort && t.endType == history.OK:
			t.outcome = txnAborted
		case t.commitInvoke >= 0:
			t.outcome = txnIndeterminate
			if seen[i] {
				t.outcome = txnCommitted
			} else if a.offsetsNotCommitted(int32(i)) {
				t.outcome = txnAborted
			}
		default:
			t.outcome = txnNeverCommitted
		}
	}
}

// offsetsNotCommitted reports whether the group's committed offsets show
// that transaction t, whose commit's outcome is unknown (its process died
// while committing, or its EndTxn was answered PRODUCER_FENCED), did not
// commit: a fetch-committed of its group returned, for one of the
// partitions it committed an offset of, an offset below the transaction's
// (or none, -1), with no other commit of that partition invoked between the
// transaction's commit and the fetch's completion (one that failed does not
// count: it wrote nothing the fetch could return), and either
//   - the fetch began after the transaction ended: a transaction's offsets
//     commit with it or not at all (the coordinator keeps them pending
//     until its marker), and a fetch-committed asks for stable offsets only
//     (KIP-447: OffsetFetch with require_stable answers
//     UNSTABLE_OFFSET_COMMIT while they are pending); or
//   - the fetching member owned the partition under a generation (member
//     epoch) above the one the transaction's offsets carried: by then the
//     group coordinator refuses the transaction's TxnOffsetCommit (KIP-447:
//     OffsetMetadataManager.validateTransactionalOffsetCommit, ILLEGAL_GENERATION
//     from a classic group past its generation, STALE_MEMBER_EPOCH or
//     UNKNOWN_MEMBER_ID from a consumer group whose member gave the
//     partition up or left: a consumer group grants a partition only once
//     its previous owner released it, and KIP-1251's per-partition check
//     takes a lagging epoch only for partitions the member still owns),
//     an abortable error its producer can only abort after
//     (TxnOffsetCommitHandler); had the coordinator taken it earlier, the
//     fetch would have waited for it (require_stable) and returned the
//     transaction's offset had it committed.
//
// (A committed offset that went back by a loss of __consumer_offsets would
// pass for an abort; the god view's facts permit what follows from that
// loss anyway.)
func (a *analyzer) offsetsNotCommitted(t int32) bool {
	tr := &a.txns[t]
	pc, ok := a.groups.txnDone[t]
	if !ok {
		if pc, ok = a.groups.txnOffs[t]; !ok {
			return false
		}
	}
	for k, r := range pc.regs {
		reg := a.groups.regs[r]
		c := reg.commits[pc.commits[k]]
		for _, f := range reg.fetches {
			if f.value >= c.value {
				continue
			}
			after := tr.end >= 0 && f.invoke > tr.end
			fenced := c.gen >= 0 && f.gen > c.gen
			if !after && !fenced {
				continue
			}
			since := false
			for j, o := range reg.commits {
				// A commit that failed wrote nothing the fetch could
				// return: an OffsetCommit's error is the coordinator's
				// refusal, and a transaction whose commit failed was
				// aborted, its pending offsets dropped with its marker
				// (OffsetMetadataManager.replayEndTransactionMarker).
				if o.typ == history.Fail {
					continue
				}
				if int32(j) != pc.commits[k] && o.invoke > c.invoke && o.invoke < f.complete {
					since = true
					break
				}
			}
			if !since {
				return true
			}
		}
	}
	return false
}

// checkTxnReads reports aborted, uncommitted and precommitted reads, one
// finding per record and kind (and isolation level, for aborted reads).
func (a *analyzer) checkTxnReads() {
	type key struct {
		val int32
		typ string
		rc  bool
	}
	idx := map[key]int{}
	var out []Finding
	for _, r := range a.txnReads {
		t := &a.txns[r.txn]
		si := a.valSend[r.val]
		if si < 0 || a.sends[si].typ == history.Fail {
			continue // a failed send: aborted-read of its own (checkOffsets)
		}
		var typ, why string
		switch {
		case t.outcome == txnAborted:
			typ, why = AbortedRead, "whose transaction aborted"
			if t.end >= 0 {
				why += " (#" + itoa(t.end) + ")"
			}
		case !r.rc:
			continue
		case t.outcome == txnNeverCommitted:
			typ, why = UncommittedRead, "whose transaction never committed"
		case t.commitInvoke < 0 || r.op < t.commitInvoke:
			typ, why = PrecommittedRead, "before its transaction's commit was invoked"
			if t.commitInvoke >= 0 {
				why += " (#" + itoa(t.commitInvoke) + ")"
			}
		default:
			continue
		}
		k := key{r.val, typ, r.rc}
		if i, ok := idx[k]; ok {
			f := &out[i]
			if len(f.Ops) < 24 {
				f.Ops = append(f.Ops, r.op)
			}
			if name := a.procs[r.proc].name; name != f.Process && !slices.Contains(f.others, name) {
				f.others = append(f.others, name)
			}
			continue
		}
		s := &a.sends[si]
		iso := "read_uncommitted"
		if r.rc {
			iso = readCommitted
		}
		ops := []int64{r.op, a.invoke(s)}
		if c := a.complete(s); c >= 0 {
			ops = append(ops, c)
		}
		if t.commitInvoke >= 0 {
			ops = append(ops, t.commitInvoke)
		}
		if t.abortInvoke >= 0 {
			ops = append(ops, t.abortInvoke)
		}
		if t.end >= 0 {
			ops = append(ops, t.end)
		}
		idx[k] = len(out)
		out = append(out, Finding{Type: typ, iso: iso, Example: Example{Partition: a.parts[r.part].name, Offset: r.off,
			Value: a.valName(r.val), Process: a.procs[r.proc].name, Ops: ops,
			Detail: "a " + iso + " poll by " + a.procs[r.proc].name + " read " + a.valName(r.val) + ", sent by " + a.procs[t.proc].name + " in a transaction begun at #" + itoa(t.begin) + ", " + why}})
	}
	for i := range out {
		out[i].Ops = sortedUnique(out[i].Ops)
	}
	a.findings = append(a.findings, out...)
}
