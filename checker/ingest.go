package checker

import (
	"kafkasim/history"
)

// Ingestion: the history taken one operation at a time (add), each turned
// into a few compact facts in the index (a send's record, observations, a
// reader's session) and per-process state. Nothing here needs the whole
// history: what does runs once it is all in (finish, analyze.go).

// session is one reader's reading of one partition, from its first poll (or
// an assign) to a crash, a restart or a revoke.
type session struct {
	proc, part int32
	final, rc  bool
	hasLast    bool
	// fromStart: the reader began at the log start (assign mode, no group,
	// auto.offset.reset=earliest): it read every offset below first that
	// existed, as far as readAcross is concerned.
	fromStart bool
	first     int64 // first offset read
	max       int64 // highest offset read
	last      int64 // last offset read (the position's predecessor)
	lastAt    int64 // when the poll that read last completed (ns)
}

type procState struct {
	name  string
	sess  map[int32]int32 // partition -> open session
	owned map[int32]bool  // group member: partitions owned
	// ownedGen is the generation (member epoch) of the assignment owned
	// holds, -1 when none or not recorded.
	ownedGen int32
	group    string
	pollIso  string // isolation of the pending poll invocation
	pollAt   int64  // op index of the pending poll invocation
	pollFin  bool
	// finalPolls counts the final polls that completed, finalRecs whether
	// any of them returned a record: what the process's final reads cover.
	finalPolls int
	finalRecs  bool
	// fin: what its final polls named (the partitions they cover without
	// positions: mergeFinal) and how far they said they read.
	fin     finalProc
	txn     int32     // open transaction, -1
	reads   []readRef // transactional records read since this process's last transaction ended
	readSet map[int64]bool
	keySeen keySeenTable
	commits []pendingCommit
	fetches []pendingFetch
	gm      *memberProc // as a group member (members.go); nil until it acts as one
}

func (a *analyzer) proc(name string) (int32, *procState) {
	if id, ok := a.procIDs[name]; ok {
		return id, a.procs[id]
	}
	id := int32(len(a.procs))
	p := &procState{name: name, sess: map[int32]int32{}, txn: -1, ownedGen: -1}
	a.procIDs[name] = id
	a.procs = append(a.procs, p)
	return id, p
}

// add takes the next operation of the history.
func (a *analyzer) add(o *history.Op) {
	a.nOps++
	if a.nOps > 1 && o.Index <= a.lastIndex && !a.linRecs {
		a.keepLinRecs()
	}
	a.lastIndex = max(a.lastIndex, o.Index)
	a.members.lastTime = max(a.members.lastTime, o.Time)
	a.lossOps.see(o.Index, o.Time)
	pid, p := a.proc(o.Process)
	switch o.F {
	case history.FSend:
		a.addSend(pid, p, o)
	case history.FPoll:
		if o.Type == history.Invoke {
			p.pollIso, p.pollAt, p.pollFin = o.Value.Isolation, o.Index, o.Value.Final
			if o.Value.Final && a.finalBegin < 0 {
				a.finalBegin, a.eos.finalT = o.Index, o.Time
			}
			return
		}
		if o.Type == history.OK {
			a.addPoll(pid, p, o)
		}
		p.pollAt = -1
	case history.FCrash, history.FRestart:
		a.memberEnded(p, o)
		a.endProcess(p)
	case history.FAssign, history.FRevoke:
		a.addRebalance(pid, p, o)
	case history.FProcess:
		a.addProcess(pid, p, o)
	case history.FSideEffect:
		a.addSideEffect(pid, p, o)
	case history.FCommit:
		a.addCommit(pid, p, o)
	case history.FFetchCommitted:
		a.addFetch(pid, p, o)
	case history.FTxnBegin, history.FTxnCommit, history.FTxnAbort:
		a.addTxnOp(pid, p, o)
	}
}

// endProcess: a client process died or came back. Its sessions end, and a
// transaction it had open can never commit.
func (a *analyzer) endProcess(p *procState) {
	clear(p.sess)
	p.owned, p.ownedGen = nil, -1
	p.keySeen = keySeenTable{}
	p.takeReads()
	p.pollAt = -1
	p.txn = -1 // an open transaction can no longer commit (resolveTxns)
	a.groups.procEnded(p)
}

func (a *analyzer) addSend(pid int32, p *procState, o *history.Op) {
	vi := a.valID(o.Value.Value)
	if o.Type == history.Invoke {
		if a.valSend[vi] >= 0 {
			a.findings = append(a.findings, Finding{Type: Duplicate, Example: Example{Value: o.Value.Value, Process: o.Process, Ops: []int64{o.Index},
				Detail: "the history sends this value twice: values must be unique"}})
			return
		}
		key := int32(-1)
		if o.Value.HasKey {
			key = a.keyID(o.Value.Key)
		}
		s := a.newSend(vi, pid, a.topicID(o.Value.Topic), key, o.Index)
		if tid := txnIDOf(o); p.txn >= 0 || tid != "" {
			a.setTxn(&s, a.txnFor(pid, p, tid, o.Index))
		}
		a.valSend[vi] = int32(len(a.sends))
		a.sends = append(a.sends, s)
		if a.txn(&s) >= 0 {
			a.txns[a.txn(&s)].sends = append(a.txns[a.txn(&s)].sends, a.valSend[vi])
			a.txns[a.txn(&s)].lastT = max(a.txns[a.txn(&s)].lastT, o.Time)
		}
		a.addEOS(pid, p, o, a.valSend[vi])
		return
	}
	si := a.valSend[vi]
	if si < 0 {
		return // a completion without its invocation: nothing to check against
	}
	s := &a.sends[si]
	if a.complete(s) >= 0 || s.proc != pid {
		return
	}
	a.setComplete(s, o.Index)
	s.typ = o.Type
	a.setDoneAt(s, o.Time)
	if a.txn(s) >= 0 {
		a.txns[a.txn(s)].lastT = max(a.txns[a.txn(s)].lastT, o.Time)
	}
	a.addEOS(pid, p, o, si)
	if o.Value.Partition >= 0 {
		a.setPart(s, a.partID(o.Value.Topic, o.Value.Partition))
	}
	if o.Type == history.OK {
		a.setOffset(s, o.Value.Offset)
		if s.part() < 0 || a.offset(s) < 0 {
			s.typ = history.Info // an ok without a position says nothing checkable
		}
	}
	s.bits &^= sendNoAck
	if s.typ == history.Info && a.txn(s) < 0 && a.cfg.producer(p.name).Acks == "0" {
		s.bits |= sendNoAck
	}
}

func (a *analyzer) isolation(p *procState, o *history.Op) string {
	if o.Value.Isolation != "" {
		return o.Value.Isolation
	}
	if p.pollIso != "" && p.pollAt >= 0 {
		return p.pollIso
	}
	return a.cfg.consumer(p.name).Isolation
}

type pollPart struct {
	part int32
	sess int32
	last int64
	run  int32 // the poll's open run of reads in the partition (obsStore.read), -1
}

func (a *analyzer) addPoll(pid int32, p *procState, o *history.Op) {
	rc := a.isolation(p, o) == readCommitted
	final := o.Value.Final || (p.pollAt >= 0 && p.pollFin)
	a.stats.Polls++
	invoke := o.Index
	if p.pollAt >= 0 {
		invoke = p.pollAt
	}
	if final && a.finalBegin < 0 {
		a.finalBegin, a.eos.finalT = invoke, o.Time
	}
	if x := o.Value.Ext; x != nil && final && rc {
		a.rcFinalEnds(x)
	}
	if final {
		p.finalPolls++
		for part := range p.owned { // kafkasim:orderless: sets flags
			p.fin.part(part)
		}
	}
	if x := o.Value.Ext; x != nil && final {
		for _, name := range sortedKeys(x.LogStartOffsets) {
			t, part, ok := splitPartition(name)
			if !ok {
				continue
			}
			pi := a.partID(t, part)
			po := a.parts[pi]
			po.logStart = max(po.logStart, x.LogStartOffsets[name])
			p.fin.topic(po.topic)
			p.fin.part(pi)
		}
		if x.Positions != nil || x.EndOffsets != nil {
			p.fin.said = true
		}
		for _, name := range sortedKeys(x.Positions) {
			if t, part, ok := splitPartition(name); ok {
				p.fin.readTo(a.partID(t, part), x.Positions[name])
			}
		}
		for _, name := range sortedKeys(x.EndOffsets) {
			if t, part, ok := splitPartition(name); ok {
				p.fin.endAt(a.partID(t, part), x.EndOffsets[name])
			}
		}
	}
	member := !final && groupOf(p, o) != ""
	var inPoll [8]pollPart
	parts := inPoll[:0]
	flags := obsRead
	if final {
		flags |= obsFinal
	}
	if rc {
		flags |= obsRC
	}
	early := uint8(0)
	if !final && a.finalBegin < 0 {
		early = obsBeforeFinal
	}
	for i := range o.Value.Records {
		r := &o.Value.Records[i]
		a.stats.Records++
		pi := a.partID(r.Topic, r.Partition)
		po := a.parts[pi]
		vi := a.valID(r.Value)
		j := -1
		for k := range parts {
			if parts[k].part == pi {
				j = k
				break
			}
		}
		if j >= 0 {
			a.step(pi, parts[j].sess, pid, rc, parts[j].last, r.Offset, o, true)
			parts[j].last = r.Offset
		} else {
			sid := a.session(pid, p, pi, final, rc)
			s := &a.sessions[sid]
			if s.hasLast {
				a.step(pi, sid, pid, rc, s.last, r.Offset, o, false)
			} else {
				s.first, s.max = r.Offset, r.Offset
			}
			if s.rc != rc {
				// A session's reader changed isolation: its
				// observations of this poll say so (obsFlags).
				if a.rcFlipped == nil {
					a.rcFlipped = map[opSession]bool{}
				}
				a.rcFlipped[opSession{o.Index, sid}] = true
			}
			parts = append(parts, pollPart{part: pi, sess: sid, last: r.Offset, run: -1})
			j = len(parts) - 1
		}
		s := &a.sessions[parts[j].sess]
		s.max = max(s.max, r.Offset)
		parts[j].run = po.obs.read(r.Offset, vi, o.Index, parts[j].sess, parts[j].run)
		if member {
			a.memberPolled(p, pi, r.Offset, vi, parts[j].sess, o.Index, o.Time)
		}
		po.lin.n++
		if a.linRecs {
			po.lin.recs = append(po.lin.recs, linRec{off: r.Offset, val: vi})
		}
		po.maxRead = max(po.maxRead, r.Offset)
		if final {
			po.finalEnd = max(po.finalEnd, r.Offset+1)
			p.fin.part(pi)
			p.fin.readTo(pi, r.Offset+1)
			if len(p.owned) == 0 {
				p.fin.topic(po.topic)
			}
			p.finalRecs = true
		}
		a.valFlags[vi] |= flags | early
		if final && rc {
			a.valFlags[vi] |= obsFinalRC
		}
		v := a.val(vi)
		if v.send < 0 || a.txn(&a.sends[v.send]) >= 0 && o.Index < a.invoke(&a.sends[v.send]) {
			po.early = append(po.early, observation{off: r.Offset, op: o.Index, val: vi, sess: parts[j].sess})
		}
		if v.send < 0 {
			continue // not sent yet (if ever): see lateTxnReads
		}
		s2 := &a.sends[v.send]
		if !final && s2.key >= 0 {
			a.keyOrder(p, v.send, s2, r, pi, o)
		}
		if a.txn(s2) >= 0 {
			a.txnReads = append(a.txnReads, txnRead{txn: a.txn(s2), val: vi, op: o.Index, proc: pid, part: pi, off: r.Offset, rc: rc})
			p.addRead(a.txn(s2), rc)
		}
	}
	for _, pp := range parts {
		s := &a.sessions[pp.sess]
		s.last, s.hasLast, s.lastAt = pp.last, true, o.Time
		po := a.parts[pp.part]
		po.lin.add(invoke, o.Index, pid, po.lin.n, rc)
	}
}

// session returns the reader's open session on a partition, opening one if
// needed. Final reads start again from the beginning: a new session.
func (a *analyzer) session(pid int32, p *procState, part int32, final, rc bool) int32 {
	if sid, ok := p.sess[part]; ok && a.sessions[sid].final == final {
		return sid
	}
	sid := int32(len(a.sessions))
	fromStart := p.group == "" && p.owned == nil && a.cfg.consumer(p.name).AutoOffsetReset != "latest"
	a.sessions = append(a.sessions, session{proc: pid, part: part, final: final, rc: rc, fromStart: fromStart})
	p.sess[part] = sid
	return sid
}

// keepLinRecs: the history's indexes stopped strictly increasing, so an
// operation's index may no longer name one poll, and partJob cannot tell
// the reads' records apart by it. From here on each partition keeps its
// reads' records for linearizability as well, starting with those read so
// far: until now, the polls' indexes strictly increased, so each record
// read so far belongs to the read of its operation. (A read's records are
// a set to partJob, which sorts them: their order within it is free.)
func (a *analyzer) keepLinRecs() {
	a.linRecs = true
	for _, po := range a.parts {
		reads := po.lin.reads
		po.lin.recs = make([]linRec, po.lin.n)
		fill := make([]int32, len(reads))
		for k := range reads {
			fill[k] = po.lin.from(k)
		}
		po.obs.rawReads(func(off int64, val int32, op int64) {
			k := po.lin.readAt(op)
			if k < 0 || fill[k] >= reads[k].to {
				panic("checker: a record read by no read of its partition")
			}
			po.lin.recs[fill[k]] = linRec{off: off, val: val}
			fill[k]++
		})
	}
}
