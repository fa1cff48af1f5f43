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

// The history analysis. An analyzer takes a history one operation at a time
// and keeps only compact facts about it (numbered processes, partitions and
// values; one small record per send, per record read and per transaction),
// never the operations themselves: a history can be streamed through it
// (CheckReader). The checks that need the whole version order run once at
// the end (finish).
//
// Where it is stronger than Jepsen's checker:
//   - lost is told from unseen by final reads (docs/history.md): a final read
//     reads every partition to its end, so an acknowledged record missing
//     from it is gone, not merely not yet read. Without final reads, a write
//     is lost only if reads went past its offset and never saw it (Jepsen's
//     rule); otherwise it is unseen.
//   - sends are matched to their completions by value, so a producer with
//     many sends in flight (as Kafka's are) is checked correctly.
//   - a consumer's session is per partition: an assign or a revoke resets
//     only the partitions it names (see groups.go).
//
// Operations are taken in history order, which is index order (docs/history.md):
// "before" and "after" between operations compare their indexes.

// Observation flags.
const (
	obsRead  uint8 = 1 << iota // a poll saw it (else an acknowledgement placed it)
	obsFinal                   // a final poll saw it
	obsRC                      // a read_committed poll saw it
	// valInfo only: a poll that finished before the final reads began saw
	// it (it was committed before the final reads took their ends).
	obsBeforeFinal
)

// observation is one value seen at one offset of a partition: by a poll, or
// placed there by a send's acknowledgement.
type observation struct {
	off   int64
	op    int64 // history index of the operation that saw it
	val   int32
	proc  int32
	sess  int32 // reader session; -1 for an acknowledgement
	flags uint8
}

type partState struct {
	name     string
	topic    int32
	obs      []observation // sorted by (offset, value, op) in finish
	offsets  []int64       // distinct known offsets, ascending (finish)
	at       []int32       // index in obs of the first observation of offsets[i]
	visRC    []bool        // offsets[i] holds a record read_committed readers must see
	maxRead  int64         // highest offset any read saw (-1)
	finalEnd int64         // one past the highest offset final reads saw (-1: none)
	logStart int64         // log start offset when final reads began
	// Linearizability: the reads of this partition, in history order.
	lin linLog
}

type valInfo struct {
	send  int32 // index in sends, -1: nobody sent it
	flags uint8 // obsRead | obsFinal | obsRC: how polls saw it
}

type sendRec struct {
	val      int32
	proc     int32
	topic    int32
	key      int32 // -1: null key
	rank     int32 // the send's place in its producer's order
	part     int32 // -1: unknown
	txn      int32 // -1: not transactional
	typ      history.Type
	invoke   int64 // op index
	complete int64 // op index, -1 while pending
	offset   int64 // -1: unknown
	doneAt   int64 // the completion's time (ns)
	// noAck: an acks=0 send the producer reported done, as Kafka's does
	// (the callback succeeds with offset -1): acknowledged without a
	// position, judged by the final reads alone.
	noAck bool
}

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
}

// skipCandidate is a jump in a session's offsets, checked at the end
// against the offsets known to exist.
type skipCandidate struct {
	part, proc, sess int32
	rc, intra        bool
	prev, next       int64
	op               int64
	// finding: the index in findings of the skip checkSkips reported for
	// this jump (-1: none); checkCoverage adds to it, not beside it.
	finding int32
}

type keyID struct{ producer, topic, key int32 }

type keySeen struct {
	rank int32
	val  int32
	part int32
	op   int64
}

type procState struct {
	name    string
	sess    map[int32]int32 // partition -> open session
	owned   map[int32]bool  // group member: partitions owned
	group   string
	pollIso string // isolation of the pending poll invocation
	pollAt  int64  // op index of the pending poll invocation
	pollFin bool
	// finalPolls counts the final polls that completed, finalRecs whether
	// any of them returned a record: what the process's final reads cover.
	finalPolls int
	finalRecs  bool
	rank       int32
	txn        int32     // open transaction, -1
	reads      []readRef // transactional records read since this process's last transaction ended
	readSet    map[int64]bool
	keySeen    map[keyID]keySeen
	commits    []pendingCommit
	fetches    []pendingFetch
}

type partKey struct {
	topic string
	p     int32
}

type analyzer struct {
	cfg *Config

	procIDs  map[string]int32
	procs    []*procState
	partIDs  map[partKey]int32
	parts    []*partState
	partName map[string]int32
	topicIDs map[string]int32
	topics   []string
	keyIDs   map[string]int32
	keys     []string
	valIDs   map[string]int32
	vals     []valInfo
	valNames []string

	sends    []sendRec
	sessions []session
	skips    []skipCandidate
	txns     []txnRec
	txnReads []txnRead
	groups   groupState

	// What final reads cover: whole topics (a reader without an assignment
	// that returned their records reads every partition of them), single
	// partitions (those a final reader was assigned, or returned records
	// of), or everything (a final reader without an assignment that
	// returned nothing at all, in a history of one topic: every partition
	// it read was empty).
	finalTopic map[int32]bool
	finalPart  map[int32]bool
	finalAll   bool
	spans      map[int32][]readSpan    // readAcross's index, built at first use
	compaction map[int32]*compactIndex // compactable's index, built at first use
	// readOffsets: where polls first read each value (checkLostNoAck's
	// index, built at first use).
	readOffsets map[int32]int64
	finalBegin  int64 // op index of the first final poll (-1: none yet)
	findings    []Finding
	stats       Stats
	lastIndex   int64
	nOps        int64

	lastPart   partKey // a one-entry cache for partID
	lastPartID int32
}

func newAnalyzer(cfg *Config) *analyzer {
	a := &analyzer{cfg: cfg, procIDs: map[string]int32{}, partIDs: map[partKey]int32{}, partName: map[string]int32{},
		topicIDs: map[string]int32{}, keyIDs: map[string]int32{}, finalTopic: map[int32]bool{}, finalPart: map[int32]bool{},
		groups: newGroupState(), lastPartID: -1, finalBegin: -1}
	sends := 0
	if cfg.Sizes != nil {
		sends = cfg.Sizes.Sends
	}
	// Every value sent is numbered once: the sends, the values and their
	// numbers are as many as the send invocations.
	a.valIDs = make(map[string]int32, sends)
	a.vals, a.valNames, a.sends = make([]valInfo, 0, sends), make([]string, 0, sends), make([]sendRec, 0, sends)
	return a
}

func partName(topic string, p int32) string { return topic + "-" + strconv.Itoa(int(p)) }

func (a *analyzer) proc(name string) (int32, *procState) {
	if id, ok := a.procIDs[name]; ok {
		return id, a.procs[id]
	}
	id := int32(len(a.procs))
	p := &procState{name: name, sess: map[int32]int32{}, txn: -1}
	a.procIDs[name] = id
	a.procs = append(a.procs, p)
	return id, p
}

func (a *analyzer) topicID(name string) int32 {
	if id, ok := a.topicIDs[name]; ok {
		return id
	}
	id := int32(len(a.topics))
	a.topicIDs[name] = id
	a.topics = append(a.topics, name)
	return id
}

func (a *analyzer) partID(topic string, p int32) int32 {
	k := partKey{topic, p}
	if a.lastPartID >= 0 && a.lastPart == k {
		return a.lastPartID
	}
	id, ok := a.partIDs[k]
	if !ok {
		id = int32(len(a.parts))
		name := partName(topic, p)
		po := &partState{name: name, topic: a.topicID(topic), maxRead: -1, finalEnd: -1}
		if sz := a.cfg.Sizes; sz != nil {
			// A partition observes each record read from it and each
			// send acknowledged in it (placeAcks).
			tp := history.TopicPartition{Topic: topic, Partition: p}
			reads := sz.Reads[tp]
			po.obs = make([]observation, 0, reads+sz.Acks[tp])
			po.lin.recs = make([]linRec, 0, reads)
		}
		a.parts = append(a.parts, po)
		a.partIDs[k] = id
		a.partName[name] = id
	}
	a.lastPart, a.lastPartID = k, id
	return id
}

// partByName finds a partition by its "topic-partition" name, -1 if unknown.
func (a *analyzer) partByName(name string) int32 {
	if id, ok := a.partName[name]; ok {
		return id
	}
	return -1
}

func (a *analyzer) keyID(k string) int32 {
	if id, ok := a.keyIDs[k]; ok {
		return id
	}
	id := int32(len(a.keys))
	a.keyIDs[k] = id
	a.keys = append(a.keys, k)
	return id
}

func (a *analyzer) valID(v string) int32 {
	if id, ok := a.valIDs[v]; ok {
		return id
	}
	id := int32(len(a.vals))
	a.valIDs[v] = id
	a.vals = append(a.vals, valInfo{send: -1})
	a.valNames = append(a.valNames, v)
	return id
}

// add takes the next operation of the history.
func (a *analyzer) add(o *history.Op) {
	a.nOps++
	a.lastIndex = max(a.lastIndex, o.Index)
	pid, p := a.proc(o.Process)
	switch o.F {
	case history.FSend:
		a.addSend(pid, p, o)
	case history.FPoll:
		if o.Type == history.Invoke {
			p.pollIso, p.pollAt, p.pollFin = o.Value.Isolation, o.Index, o.Value.Final
			if o.Value.Final && a.finalBegin < 0 {
				a.finalBegin = o.Index
			}
			return
		}
		if o.Type == history.OK {
			a.addPoll(pid, p, o)
		}
		p.pollAt = -1
	case history.FCrash, history.FRestart:
		a.endProcess(p)
	case history.FAssign, history.FRevoke:
		a.addRebalance(p, o)
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
	p.owned = nil
	p.keySeen = nil
	p.takeReads()
	p.pollAt = -1
	p.txn = -1 // an open transaction can no longer commit (resolveTxns)
	a.groups.procEnded(p)
}

func (a *analyzer) addSend(pid int32, p *procState, o *history.Op) {
	vi := a.valID(o.Value.Value)
	if o.Type == history.Invoke {
		if a.vals[vi].send >= 0 {
			a.findings = append(a.findings, Finding{Type: Duplicate, Example: Example{Value: o.Value.Value, Process: o.Process, Ops: []int64{o.Index},
				Detail: "the history sends this value twice: values must be unique"}})
			return
		}
		key := int32(-1)
		if o.Value.HasKey {
			key = a.keyID(o.Value.Key)
		}
		s := sendRec{val: vi, proc: pid, topic: a.topicID(o.Value.Topic), key: key, rank: p.rank, part: -1, txn: -1,
			typ: history.Info, invoke: o.Index, complete: -1, offset: -1}
		p.rank++
		if tid := txnIDOf(o); p.txn >= 0 || tid != "" {
			s.txn = a.txnFor(pid, p, tid, o.Index)
		}
		a.vals[vi].send = int32(len(a.sends))
		a.sends = append(a.sends, s)
		if s.txn >= 0 {
			a.txns[s.txn].sends = append(a.txns[s.txn].sends, a.vals[vi].send)
		}
		return
	}
	si := a.vals[vi].send
	if si < 0 {
		return // a completion without its invocation: nothing to check against
	}
	s := &a.sends[si]
	if s.complete >= 0 || s.proc != pid {
		return
	}
	s.complete, s.typ, s.doneAt = o.Index, o.Type, o.Time
	if o.Value.Partition >= 0 {
		s.part = a.partID(o.Value.Topic, o.Value.Partition)
	}
	if o.Type == history.OK {
		s.offset = o.Value.Offset
		if s.part < 0 || s.offset < 0 {
			s.typ = history.Info // an ok without a position says nothing checkable
		}
	}
	s.noAck = s.typ == history.Info && s.txn < 0 && a.cfg.producer(p.name).Acks == "0"
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
	from int32 // first record of this partition in the read's records (linearizability)
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
		a.finalBegin = invoke
	}
	if final {
		p.finalPolls++
		for part := range p.owned { // kafkasim:orderless: sets flags
			a.finalPart[part] = true
		}
	}
	if x := o.Value.Ext; x != nil && final {
		names := make([]string, 0, len(x.LogStartOffsets))
		for name := range x.LogStartOffsets { // kafkasim:orderless: sorted below
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			t, part, ok := splitPartition(name)
			if !ok {
				continue
			}
			po := a.parts[a.partID(t, part)]
			po.logStart = max(po.logStart, x.LogStartOffsets[name])
			a.finalTopic[po.topic] = true
			a.finalPart[a.partID(t, part)] = true
		}
	}
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
			parts = append(parts, pollPart{part: pi, sess: sid, last: r.Offset, from: int32(len(po.lin.recs))})
			j = len(parts) - 1
		}
		s := &a.sessions[parts[j].sess]
		s.max = max(s.max, r.Offset)
		po.obs = append(po.obs, observation{off: r.Offset, op: o.Index, val: vi, proc: pid, sess: parts[j].sess, flags: flags})
		po.lin.recs = append(po.lin.recs, linRec{off: r.Offset, val: vi})
		po.maxRead = max(po.maxRead, r.Offset)
		if final {
			po.finalEnd = max(po.finalEnd, r.Offset+1)
			a.finalPart[pi] = true
			if len(p.owned) == 0 {
				a.finalTopic[po.topic] = true
			}
			p.finalRecs = true
		}
		v := &a.vals[vi]
		v.flags |= flags | early
		if v.send < 0 {
			continue // not sent yet (if ever): see lateTxnReads
		}
		s2 := &a.sends[v.send]
		if !final && s2.key >= 0 {
			a.keyOrder(p, pid, s2, r, pi, o)
		}
		if s2.txn >= 0 {
			a.txnReads = append(a.txnReads, txnRead{txn: s2.txn, val: vi, op: o.Index, proc: pid, part: pi, off: r.Offset, rc: rc})
			p.addRead(s2.txn, rc)
		}
	}
	for _, pp := range parts {
		s := &a.sessions[pp.sess]
		s.last, s.hasLast = pp.last, true
		po := a.parts[pp.part]
		po.lin.reads = append(po.lin.reads, linRead{call: invoke, ret: o.Index, proc: pid, from: pp.from, to: int32(len(po.lin.recs)), rc: rc})
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

// step checks one move of a reader's position: offsets increase within a
// session; a jump is checked at the end against offsets known to exist.
func (a *analyzer) step(part, sid, pid int32, rc bool, prev, next int64, o *history.Op, intra bool) {
	switch {
	case next <= prev:
		typ := NonmonotonicPoll
		if intra {
			typ = IntNonmonotonicPoll
		}
		a.findings = append(a.findings, Finding{Type: typ, Example: Example{Partition: a.parts[part].name, Offset: next,
			Process: o.Process, Ops: []int64{o.Index}, Detail: "offset " + itoa(next) + " after " + itoa(prev)}})
	case next > prev+1:
		a.skips = append(a.skips, skipCandidate{part: part, proc: pid, sess: sid, rc: rc, intra: intra, prev: prev, next: next, op: o.Index, finding: -1})
	}
}

// keyOrder: a reader sees one producer's records of one key in the order
// they were sent, as long as the key always goes to one partition (Kafka
// orders records per partition only). A reader that sees a key's later
// record, in one partition, before an earlier one in another, saw the key
// move between partitions: adding partitions remaps keys.
func (a *analyzer) keyOrder(p *procState, pid int32, s *sendRec, r *history.Record, part int32, o *history.Op) {
	if p.keySeen == nil {
		p.keySeen = map[keyID]keySeen{}
	}
	id := keyID{producer: s.proc, topic: a.parts[part].topic, key: s.key}
	prev, ok := p.keySeen[id]
	if ok && s.rank < prev.rank && part != prev.part {
		key := a.keys[s.key]
		a.findings = append(a.findings, Finding{Type: KeyOrder, Example: Example{Partition: a.parts[part].name, Offset: r.Offset,
			Value: r.Value, Process: o.Process, Ops: []int64{prev.op, o.Index},
			Detail: o.Process + " read " + r.Value + " (key " + key + ", " + a.parts[part].name + ") after " + a.valNames[prev.val] +
				" (key " + key + ", " + a.parts[prev.part].name + "), which " + a.procs[s.proc].name + " sent later"}})
		return
	}
	if !ok || s.rank > prev.rank {
		p.keySeen[id] = keySeen{rank: s.rank, val: s.val, part: part, op: o.Index}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// splitPartition splits "topic-partition".
func splitPartition(name string) (string, int32, bool) {
	i := strings.LastIndexByte(name, '-')
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.ParseInt(name[i+1:], 10, 32)
	if err != nil || n < 0 {
		return "", 0, false
	}
	return name[:i], int32(n), true
}

func topicOf(partition string) string {
	if i := strings.LastIndexByte(partition, '-'); i > 0 {
		return partition[:i]
	}
	return partition
}

// finish runs the checks that need the whole history.
func (a *analyzer) finish() {
	if len(a.txns) > 0 {
		a.lateTxnReads()
	}
	a.resolveTxns()
	a.placeAcks()
	a.build()
	a.countStats()
	a.checkOffsets()
	a.checkSends()
	a.checkSkips()
	a.checkCoverage()
	a.checkLost()
	a.checkTxnReads()
	a.checkCycles()
}

// placeAcks adds every acknowledged send's position to its partition's
// observations.
func (a *analyzer) placeAcks() {
	for i := range a.sends {
		s := &a.sends[i]
		if s.typ == history.OK && s.part >= 0 && s.offset >= 0 {
			po := a.parts[s.part]
			po.obs = append(po.obs, observation{off: s.offset, op: s.complete, val: s.val, proc: s.proc, sess: -1})
		}
	}
}

// build sorts each partition's observations into its version order.
func (a *analyzer) build() {
	for _, po := range a.parts {
		obs := po.obs
		sortObservations(obs)
		// One poll that returned a record twice observed it once.
		out := obs[:0]
		for i := range obs {
			if i > 0 && obs[i].off == obs[i-1].off && obs[i].val == obs[i-1].val && obs[i].op == obs[i-1].op && obs[i].sess == obs[i-1].sess {
				continue
			}
			out = append(out, obs[i])
		}
		po.obs = out
		distinct := 0 // offsets, counted first: the slices are made once
		for i := range out {
			if i == 0 || out[i].off != out[i-1].off {
				distinct++
			}
		}
		po.offsets = slices.Grow(po.offsets[:0], distinct)
		po.at = slices.Grow(po.at[:0], distinct)
		po.visRC = slices.Grow(po.visRC[:0], distinct)
		for i := range out {
			if i == 0 || out[i].off != out[i-1].off {
				po.offsets = append(po.offsets, out[i].off)
				po.at = append(po.at, int32(i))
				po.visRC = append(po.visRC, false)
			}
			if a.visibleToRC(out[i].val) {
				po.visRC[len(po.visRC)-1] = true
			}
		}
	}
}

// visibleToRC reports whether a read_committed reader must see the record of
// value v when it passes its offset: it was not written in a transaction,
// or its transaction committed.
func (a *analyzer) visibleToRC(v int32) bool {
	si := a.vals[v].send
	if si < 0 {
		return true
	}
	t := a.sends[si].txn
	return t < 0 || a.txns[t].outcome == txnCommitted
}

// obsAt returns the observations at an offset of a partition.
func (po *partState) obsAt(off int64) []observation {
	i := sort.Search(len(po.offsets), func(i int) bool { return po.offsets[i] >= off })
	if i == len(po.offsets) || po.offsets[i] != off {
		return nil
	}
	end := len(po.obs)
	if i+1 < len(po.at) {
		end = int(po.at[i+1])
	}
	return po.obs[po.at[i]:end]
}

// knownBetween reports the first known offset strictly between lo and hi
// (for a read_committed reader, the first that holds a record it must see).
func (po *partState) knownBetween(lo, hi int64, rc bool) (int64, bool) {
	i := sort.Search(len(po.offsets), func(i int) bool { return po.offsets[i] > lo })
	for ; i < len(po.offsets) && po.offsets[i] < hi; i++ {
		if !rc || po.visRC[i] {
			return po.offsets[i], true
		}
	}
	return 0, false
}

func (a *analyzer) countStats() {
	for i := range a.sends {
		s := &a.sends[i]
		a.stats.Attempted++
		outcome := s.typ
		if s.txn >= 0 && s.typ != history.Fail {
			switch a.txns[s.txn].outcome {
			case txnCommitted:
				if s.typ != history.OK {
					outcome = history.Info
				}
			case txnAborted, txnNeverCommitted:
				outcome = history.Fail
			default:
				outcome = history.Info
			}
		}
		switch {
		case outcome == history.OK || s.noAck:
			a.stats.Acked++
		case outcome == history.Fail:
			a.stats.Failed++
		default:
			a.stats.Indeterminate++
		}
	}
	if a.stats.Attempted > 0 {
		a.stats.Availability = float64(a.stats.Acked) / float64(a.stats.Attempted)
	}
	for i := range a.txns {
		switch a.txns[i].outcome {
		case txnCommitted:
			a.stats.TxnCommitted++
		case txnAborted:
			a.stats.TxnAborted++
		case txnNeverCommitted:
			a.stats.TxnNeverCommitted++
		default:
			a.stats.TxnIndeterminate++
		}
	}
}

// checkOffsets: two values at one offset; one value at two offsets; reads
// of writes that definitely failed, or that nobody sent.
func (a *analyzer) checkOffsets() {
	nPos := make([]int32, len(a.vals))
	for _, pi := range a.sortedParts() {
		po := a.parts[pi]
		for _, off := range po.offsets {
			obs := po.obsAt(off)
			distinct := 0
			for i := range obs {
				if i == 0 || obs[i].val != obs[i-1].val {
					distinct++
					nPos[obs[i].val]++
				}
			}
			if distinct > 1 {
				var names []string
				var ops []int64
				for i := range obs {
					if i == 0 || obs[i].val != obs[i-1].val {
						names = append(names, a.valNames[obs[i].val])
					}
					ops = append(ops, obs[i].op)
				}
				sort.Strings(names)
				a.findings = append(a.findings, Finding{Type: InconsistentOffsets, Example: Example{Partition: po.name, Offset: off,
					Value: names[0], Ops: sortedUnique(ops), Detail: "values [" + strings.Join(capList(names, 8), " ") + "] at one offset"}})
			}
		}
	}
	// Values that need their positions and observers spelled out.
	flagged := map[int32]bool{}
	for v := range a.vals {
		si := a.vals[v].send
		switch {
		case nPos[v] > 1:
			flagged[int32(v)] = true
		case si >= 0 && a.sends[si].typ == history.Fail && nPos[v] > 0:
			flagged[int32(v)] = true
		case si < 0 && len(a.sends) > 0 && nPos[v] > 0:
			flagged[int32(v)] = true
		}
	}
	if len(flagged) == 0 {
		return
	}
	type where struct {
		pos  []string
		part []string
		off  []int64
		ops  []int64
	}
	ws := map[int32]*where{}
	for _, pi := range a.sortedParts() {
		po := a.parts[pi]
		for i := range po.obs {
			ob := &po.obs[i]
			if !flagged[ob.val] {
				continue
			}
			w := ws[ob.val]
			if w == nil {
				w = &where{}
				ws[ob.val] = w
			}
			pos := po.name + "@" + itoa(ob.off)
			if len(w.pos) == 0 || w.pos[len(w.pos)-1] != pos {
				w.pos = append(w.pos, pos)
				w.part = append(w.part, po.name)
				w.off = append(w.off, ob.off)
			}
			w.ops = append(w.ops, ob.op)
		}
	}
	ids := make([]int32, 0, len(ws))
	for v := range ws { // kafkasim:orderless: sorted below
		ids = append(ids, v)
	}
	slices.Sort(ids)
	for _, v := range ids {
		w := ws[v]
		name := a.valNames[v]
		si := a.vals[v].send
		if len(w.pos) > 1 {
			a.stats.Duplicates++
			ex := Example{Partition: w.part[0], Offset: w.off[0], Value: name, Ops: sortedUnique(append([]int64(nil), w.ops...)),
				Detail: "one value at " + strconv.Itoa(len(w.pos)) + " offsets: [" + strings.Join(capList(w.pos, 8), " ") + "]"}
			if si >= 0 {
				ex.Process = a.procs[a.sends[si].proc].name
			}
			copies := make([]copyAt, len(w.pos))
			for i := range w.pos {
				copies[i] = copyAt{w.part[i], w.off[i]}
			}
			a.findings = append(a.findings, Finding{Type: Duplicate, Example: ex, copies: copies})
		}
		switch {
		case si >= 0 && a.sends[si].typ == history.Fail:
			s := &a.sends[si]
			a.findings = append(a.findings, Finding{Type: AbortedRead, Example: Example{Partition: w.part[0], Offset: w.off[0], Value: name,
				Process: a.procs[s.proc].name, Ops: append([]int64{s.invoke, s.complete}, capOps(sortedUnique(w.ops), 16)...),
				Detail: "read a record whose send definitely failed"}, failedSend: true})
		case si < 0:
			a.findings = append(a.findings, Finding{Type: PhantomRead, Example: Example{Partition: w.part[0], Offset: w.off[0], Value: name,
				Ops: capOps(sortedUnique(w.ops), 16), Detail: "read a record no process sent"}})
		}
	}
}

func capList(xs []string, n int) []string {
	if len(xs) <= n {
		return xs
	}
	return append(append([]string(nil), xs[:n]...), "…")
}

func capOps(xs []int64, n int) []int64 {
	if len(xs) <= n {
		return xs
	}
	return xs[:n]
}

// sortedParts lists partitions by name.
func (a *analyzer) sortedParts() []int32 {
	ids := make([]int32, len(a.parts))
	for i := range ids {
		ids[i] = int32(i)
	}
	sort.Slice(ids, func(i, j int) bool { return a.parts[ids[i]].name < a.parts[ids[j]].name })
	return ids
}

func sortedUnique(xs []int64) []int64 {
	slices.Sort(xs)
	out := xs[:0]
	for i, x := range xs {
		if i == 0 || x != xs[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// checkSends: a producer's successive acknowledged sends to one partition
// must land at increasing offsets.
func (a *analyzer) checkSends() {
	type key struct{ proc, part int32 }
	last := map[key]int32{}
	for i := range a.sends {
		s := &a.sends[i]
		if s.typ != history.OK {
			continue
		}
		k := key{s.proc, s.part}
		if pi, ok := last[k]; ok {
			prev := &a.sends[pi]
			if s.offset <= prev.offset {
				a.findings = append(a.findings, Finding{Type: NonmonotonicSend, Example: Example{Partition: a.parts[s.part].name, Offset: s.offset,
					Value: a.valNames[s.val], Process: a.procs[s.proc].name, Ops: []int64{prev.invoke, prev.complete, s.invoke, s.complete},
					Detail: a.valNames[s.val] + " was sent after " + a.valNames[prev.val] + " but landed at " + itoa(s.offset) + ", not after " + itoa(prev.offset)},
					firstOfProducer: a.firstOfProducer(s)})
			}
		}
		last[k] = int32(i) // consecutive sends: one reordering is one finding
	}
}

// firstOfProducer reports whether no record of s's producer, acknowledged or
// read, lies below s in its partition: s's batch was the first of its
// producer that the partition's log held.
func (a *analyzer) firstOfProducer(s *sendRec) bool {
	for _, o := range a.parts[s.part].obs {
		if o.off >= s.offset {
			return true
		}
		if si := a.vals[o.val].send; si >= 0 && a.sends[si].proc == s.proc {
			return false
		}
	}
	return true
}

// checkSkips: a jump in a session's offsets over an offset known to hold a
// record (that a read_committed reader must see, for one) is a skip.
func (a *analyzer) checkSkips() {
	for i := range a.skips {
		c := &a.skips[i]
		po := a.parts[c.part]
		missed, ok := po.knownBetween(c.prev, c.next, c.rc)
		for ok && a.compactable(c.part, missed) {
			// The cleaner may have removed it before the reader got
			// there: look for a record it could not have removed.
			missed, ok = po.knownBetween(missed, c.next, c.rc)
		}
		if !ok {
			continue
		}
		typ := PollSkip
		if c.intra {
			typ = IntPollSkip
		}
		c.finding = int32(len(a.findings))
		a.findings = append(a.findings, Finding{Type: typ, Example: Example{Partition: po.name, Offset: missed,
			Process: a.procs[c.proc].name, Ops: []int64{c.op},
			Detail: "jumped from " + itoa(c.prev) + " to " + itoa(c.next) + " over offset " + itoa(missed) + ", which exists"}})
	}
}

// checkCoverage: a reader reads every record between where its session
// started and how far it got. A record the final reads hold inside that
// range that the session never read was skipped, even if its offset was read
// once with another record (after a truncation the reader must go back:
// KIP-320), if the session read on past that offset once the record could be
// there: a session that read the offset's earlier record and got no further
// before this one was sent skipped nothing (the earlier record's fate is the
// lost-write and inconsistent-offsets rules' to judge). A record inside a
// jump that checkSkips reported is that jump's skip: one jump is one finding,
// which this check names the record of. For a group member a session runs
// from an assign to a revoke.
func (a *analyzer) checkCoverage() {
	type sv struct {
		sess int32
		off  int64
		val  int32
		op   int64 // the poll that read it
	}
	// The jumps checkSkips reported, by session.
	jumps := map[int32][]int32{}
	for i := range a.skips {
		if c := &a.skips[i]; c.finding >= 0 {
			jumps[c.sess] = append(jumps[c.sess], int32(i))
		}
	}
	var finals []observation
	var reads, bySess []sv
	perSess := make([]int32, len(a.sessions)+1)
	var lastOp []int64 // lastOp[k]: the latest poll among run[k:], built when needed
	for _, pi := range a.sortedParts() {
		po := a.parts[pi]
		if po.finalEnd < 0 {
			continue
		}
		// Counted first, so that the lists (reused from partition to
		// partition) grow once rather than by doubling.
		nFinal, nRead := 0, 0
		for i := range po.obs {
			if f := po.obs[i].flags; f&obsFinal != 0 {
				nFinal++
			} else if f&obsRead != 0 {
				nRead++
			}
		}
		finals, reads = slices.Grow(finals[:0], nFinal), slices.Grow(reads[:0], nRead)
		for i := range po.obs {
			ob := &po.obs[i]
			if ob.flags&obsFinal != 0 {
				if len(finals) == 0 || finals[len(finals)-1].off != ob.off || finals[len(finals)-1].val != ob.val {
					finals = append(finals, *ob)
				}
			} else if ob.flags&obsRead != 0 {
				reads = append(reads, sv{ob.sess, ob.off, ob.val, ob.op})
			}
		}
		if len(finals) == 0 || len(reads) == 0 {
			continue
		}
		// The reads come in the observations' order (offset, value,
		// operation): gathering them by session, each session's in that
		// order, is sorting them by (session, offset, value, operation),
		// in linear time.
		bySess = placeBy(slices.Grow(bySess[:0], len(reads))[:len(reads)], reads, perSess, func(r *sv) int { return int(r.sess) })
		reads, bySess = bySess, reads
		for lo := 0; lo < len(reads); {
			hi := lo
			for hi < len(reads) && reads[hi].sess == reads[lo].sess {
				hi++
			}
			run := reads[lo:hi]
			sid := reads[lo].sess
			lo = hi
			s := &a.sessions[sid]
			js := jumps[sid]
			slices.SortFunc(js, func(x, y int32) int { return cmp.Compare(a.skips[x].prev, a.skips[y].prev) })
			lastOp = lastOp[:0]
			f := sort.Search(len(finals), func(i int) bool { return finals[i].off >= s.first })
			r := 0
			for ; f < len(finals) && finals[f].off <= s.max; f++ {
				fin := &finals[f]
				if s.rc && !a.visibleToRC(fin.val) {
					continue
				}
				for r < len(run) && run[r].off < fin.off {
					r++
				}
				found := false
				for k := r; k < len(run) && run[k].off == fin.off; k++ {
					if run[k].val == fin.val {
						found = true
						break
					}
				}
				if !found {
					// The value may sit at another offset too (a duplicate).
					for k := range run {
						if run[k].val == fin.val {
							found = true
							break
						}
					}
				}
				if found || a.compactable(pi, fin.off) {
					// (Replicas compact on their own schedules: the
					// leader the reader read from may have cleaned away
					// a record that the one the final reads read from
					// still holds.)
					continue
				}
				readOther := r < len(run) && run[r].off == fin.off
				if j := a.jumpOver(js, fin.off); j != nil {
					a.nameSkipped(j, fin)
					// The records after it that the jump passed over are
					// its too.
					for f+1 < len(finals) && finals[f+1].off < j.next {
						f++
					}
					continue
				}
				if readOther {
					if len(lastOp) == 0 {
						lastOp = slices.Grow(lastOp, len(run))[:len(run)]
						for k := len(run) - 1; k >= 0; k-- {
							lastOp[k] = run[k].op
							if k+1 < len(run) {
								lastOp[k] = max(lastOp[k], lastOp[k+1])
							}
						}
					}
					k := r
					for k < len(run) && run[k].off == fin.off {
						k++
					}
					// (Without its send, when the record got there is
					// unknown: a skip.)
					if si := a.vals[fin.val].send; si >= 0 && (k == len(run) || lastOp[k] < a.sends[si].invoke) {
						continue // it read no further once the record was sent
					}
				}
				name := a.procs[s.proc].name
				a.findings = append(a.findings, Finding{Type: PollSkip, Example: Example{Partition: po.name, Offset: fin.off,
					Value: a.valNames[fin.val], Process: name, Ops: []int64{fin.op},
					Detail: name + " read " + po.name + " from " + itoa(s.first) + " to " + itoa(s.max) + " but never the record at " + itoa(fin.off) + " that the log holds"},
					readOther: readOther})
				break
			}
		}
	}
}

// jumpOver finds the reported jump, among js (indices in skips, in order of
// where they jumped from), that passed over offset off; nil if none.
func (a *analyzer) jumpOver(js []int32, off int64) *skipCandidate {
	i := sort.Search(len(js), func(i int) bool { return a.skips[js[i]].prev >= off })
	if i == 0 {
		return nil
	}
	if c := &a.skips[js[i-1]]; off < c.next {
		return c
	}
	return nil
}

// nameSkipped puts the record the final reads hold at fin into the finding of
// jump c, which passed over it: the jump skipped a record still in the log
// (checkSkips knew only that the offset existed, perhaps by a record since
// lost, which would excuse the skip). The jump did not read the offset, so
// the finding keeps readOther false, whatever the session read there
// another time.
func (a *analyzer) nameSkipped(c *skipCandidate, fin *observation) {
	f := &a.findings[c.finding]
	name := a.procs[c.proc].name
	f.Offset, f.Value = fin.off, a.valNames[fin.val]
	f.Detail = name + " jumped from " + itoa(c.prev) + " to " + itoa(c.next) + " over the record at " + itoa(fin.off) + " that the log holds"
}

// compactable reports whether the cleaner of a compacted topic may have
// removed the record at partition part's offset: every record known there
// has a key that a record at a higher offset has too.
func (a *analyzer) compactable(part int32, offset int64) bool {
	if a.compaction == nil {
		a.compaction = map[int32]*compactIndex{}
		compact := map[string]bool{}
		for _, t := range a.cfg.Topics {
			compact[t.Name] = t.Compact
		}
		for pi, po := range a.parts {
			if !compact[topicOf(po.name)] {
				continue
			}
			ci := &compactIndex{keyAt: map[int64]int32{}, last: map[int32]int64{}}
			for i := range po.obs {
				key := int32(-1)
				if si := a.vals[po.obs[i].val].send; si >= 0 {
					key = a.sends[si].key
				}
				ci.note(po.obs[i].off, key)
			}
			a.compaction[int32(pi)] = ci
		}
		for i := range a.sends {
			s := &a.sends[i]
			if ci := a.compaction[s.part]; s.part >= 0 && ci != nil && s.typ == history.OK && s.offset >= 0 {
				ci.note(s.offset, s.key)
			}
		}
	}
	ci := a.compaction[part]
	if ci == nil {
		return false
	}
	key, ok := ci.keyAt[offset]
	return ok && key >= 0 && ci.last[key] > offset
}

// compactIndex is what compactable knows of one compacted partition: the key
// of the record at each known offset (-1: none, or records that disagree),
// and each key's highest known offset.
type compactIndex struct {
	keyAt map[int64]int32
	last  map[int32]int64
}

// note records a record of key (-1: none) seen at off.
func (ci *compactIndex) note(off int64, key int32) {
	if k, ok := ci.keyAt[off]; !ok || k == key {
		ci.keyAt[off] = key
	} else {
		ci.keyAt[off] = -1 // two different records known there
	}
	if key >= 0 {
		ci.last[key] = max(ci.last[key], off)
	}
}

// acked reports whether a send is an acknowledged write: its send was
// acknowledged at a position and, inside a transaction, the transaction
// committed.
func (a *analyzer) acked(s *sendRec) bool {
	if s.txn >= 0 {
		return a.txns[s.txn].outcome == txnCommitted && s.typ == history.OK
	}
	return s.typ == history.OK
}

// checkLost: an acknowledged write is lost if final reads covered its
// partition and did not see it; without final reads, if reads went past its
// offset and nobody ever saw it (Jepsen's rule); otherwise it is unseen. A
// committed transaction's sends are acknowledged writes.
func (a *analyzer) checkLost() {
	for _, p := range a.procs {
		// A final reader that returned nothing, without an assignment to
		// say what it read: with one topic in the history it read that
		// one; with several, what it covered is unknown.
		if p.finalPolls > 0 && !p.finalRecs && len(p.owned) == 0 && len(a.topicIDs) == 1 {
			a.finalAll = true
		}
	}
	for i := range a.sends {
		s := &a.sends[i]
		if s.noAck {
			a.checkLostNoAck(s)
			continue
		}
		if !a.acked(s) {
			continue
		}
		po := a.parts[s.part]
		v := a.vals[s.val]
		covered := a.finalAll || a.finalTopic[po.topic] || a.finalPart[s.part]
		var typ, detail string
		switch {
		case covered && s.offset < po.logStart && v.flags&obsFinal == 0 && !a.reusedOffset(po.name, s.offset, a.valNames[s.val]):
			// Below the log start: deleted by retention, not lost (unless a
			// record sent after it took its offset: then it was lost
			// first, whatever retention did later).
			a.stats.Deleted++
		case covered && v.flags&obsFinal == 0 && a.pastFinalReads(s, v):
			// Beyond the final reads' end, and only acknowledged or read
			// after they began: the high watermark they read to had not
			// reached it yet (a follower still copying, a retry still
			// being written). They say nothing about it.
			typ, detail = Unseen, "; past the final reads' end (offset "+itoa(max(po.finalEnd, 0))+"), acknowledged or read only after they began"
		case covered && v.flags&obsFinal == 0 && a.cfg.Happened.Covers(godview.HeldBack, po.name, s.offset):
			typ, detail = Unseen, "; in the leader's log above a high watermark that cannot advance (a replica stuck by undetected disk corruption keeps the ISR below min.insync.replicas)"
		case covered:
			if v.flags&obsFinal == 0 {
				typ, detail = LostAckedWrite, "; final reads (to offset "+itoa(max(po.finalEnd, 0))+") do not hold it"
			}
		case v.flags&obsRead != 0:
		case a.readAcross(s.part, s.offset):
			typ, detail = LostAckedWrite, "; reads went on to offset "+itoa(po.maxRead)+" and never saw it"
		default:
			typ = Unseen
		}
		if typ == "" {
			continue
		}
		ex := Example{Partition: po.name, Offset: s.offset, Value: a.valNames[s.val], Process: a.procs[s.proc].name, Ops: []int64{s.invoke, s.complete}}
		what := "acknowledged at offset " + itoa(s.offset)
		if s.txn >= 0 {
			t := &a.txns[s.txn]
			ex.Ops = append(ex.Ops, t.end)
			what = "written at offset " + itoa(s.offset) + " in a transaction that committed (#" + itoa(t.end) + ")"
		}
		if typ == Unseen && detail != "" {
			ex.Detail = what + detail
		} else if typ == Unseen {
			ex.Detail = "acknowledged, never read (no final read covered it)"
		} else {
			a.stats.LostAcked++
			ex.Detail = what + detail
		}
		a.findings = append(a.findings, Finding{Type: typ, Example: ex, ackedAt: s.doneAt})
	}
}

// checkLostNoAck judges an acks=0 send by the final reads: if they cover
// where it went and do not hold it, it was lost (acks=0 permits that).
func (a *analyzer) checkLostNoAck(s *sendRec) {
	v := a.vals[s.val]
	covered := a.finalAll || a.finalTopic[s.topic]
	ex := Example{Value: a.valNames[s.val], Process: a.procs[s.proc].name, Offset: -1, Ops: []int64{s.invoke, s.complete}}
	if s.part >= 0 {
		covered = covered || a.finalPart[s.part]
		ex.Partition = a.parts[s.part].name
	}
	if !covered || v.flags&obsFinal != 0 {
		return
	}
	ex.Detail = "sent with acks=0 (done without an acknowledgement or an offset); final reads do not hold it"
	if v.flags&obsRead != 0 {
		// A poll read it, so it was committed: judged at the offset it was
		// read at, like any committed record lost.
		if a.readOffsets == nil {
			a.readOffsets = map[int32]int64{}
			for _, po := range a.parts {
				for i := range po.obs {
					if ob := &po.obs[i]; ob.flags&obsRead != 0 {
						if _, seen := a.readOffsets[ob.val]; !seen {
							a.readOffsets[ob.val] = ob.off
						}
					}
				}
			}
		}
		ex.Offset = a.readOffsets[s.val]
		ex.Detail = "sent with acks=0, read at offset " + itoa(ex.Offset) + "; final reads do not hold it"
		if s.part >= 0 && ex.Offset < a.parts[s.part].logStart {
			a.stats.Deleted++ // below the log start: deleted by retention, not lost
			return
		}
	}
	a.stats.LostAcked++
	a.findings = append(a.findings, Finding{Type: LostAckedWrite, Example: ex, ackedAt: s.doneAt, noAck: ex.Offset < 0})
}

// readAcross reports whether a reader read partition part from at or below
// offset on past it, in one session (Jepsen's rule for a write nobody read:
// reads went past it); one that began at the log start (auto.offset.reset
// earliest, no group) read from below every offset. A reader that started
// above it (auto.offset.reset=latest, a group's committed offset) says
// nothing about it.
func (a *analyzer) readAcross(part int32, offset int64) bool {
	if a.spans == nil {
		a.spans = map[int32][]readSpan{}
		for i := range a.sessions {
			s := &a.sessions[i]
			first := s.first
			if s.fromStart {
				first = -1
			}
			a.spans[s.part] = append(a.spans[s.part], readSpan{first: first, max: s.max})
		}
		for _, spans := range a.spans { // kafkasim:orderless: each list on its own
			slices.SortFunc(spans, func(x, y readSpan) int { return cmp.Compare(x.first, y.first) })
			spans[0].reach = spans[0].max
			for i := 1; i < len(spans); i++ {
				spans[i].reach = max(spans[i-1].reach, spans[i].max)
			}
		}
	}
	spans := a.spans[part]
	i := sort.Search(len(spans), func(i int) bool { return spans[i].first > offset })
	return i > 0 && spans[i-1].reach > offset
}

// readSpan is one reader session's range of a partition: first and highest
// offset read; reach is the highest of the sessions that start at or
// before first.
type readSpan struct{ first, max, reach int64 }

// pastFinalReads reports whether an acknowledged write final reads did not
// hold lies at or beyond their end in its partition, with nothing from
// before they began to show that it was committed by then: it was
// acknowledged after they began, or polls read it only after they began.
func (a *analyzer) pastFinalReads(s *sendRec, v valInfo) bool {
	po := a.parts[s.part]
	if a.finalBegin < 0 || s.offset < max(po.finalEnd, 0) || v.flags&obsBeforeFinal != 0 {
		return false
	}
	return s.complete > a.finalBegin || v.flags&obsRead != 0
}

// inFinalReadsBefore reports whether final reads hold, at partition@offset,
// a record sent before operation op: one that was there when op ran, not
// one that took the offset later (after a loss reset the log).
func (a *analyzer) inFinalReadsBefore(partition string, offset, op int64) bool {
	pi := a.partByName(partition)
	if pi < 0 {
		return false
	}
	for _, o := range a.parts[pi].obsAt(offset) {
		if o.flags&obsFinal == 0 {
			continue
		}
		if si := a.vals[o.val].send; si < 0 || a.sends[si].invoke < op {
			return true
		}
	}
	return false
}

// finalHolds reports whether final reads hold value at partition@offset.
func (a *analyzer) finalHolds(partition string, offset int64, value string) bool {
	pi := a.partByName(partition)
	vi, ok := a.valIDs[value]
	if pi < 0 || !ok {
		return false
	}
	for _, o := range a.parts[pi].obsAt(offset) {
		if o.flags&obsFinal != 0 && o.val == vi {
			return true
		}
	}
	return false
}

// readAt reports whether a poll saw value at partition@offset.
func (a *analyzer) readAt(partition string, offset int64, value string) bool {
	pi := a.partByName(partition)
	vi, ok := a.valIDs[value]
	if pi < 0 || !ok {
		return false
	}
	for _, o := range a.parts[pi].obsAt(offset) {
		if o.flags&obsRead != 0 && o.val == vi {
			return true
		}
	}
	return false
}

// readValuesAt counts the distinct values polls saw at partition@offset.
func (a *analyzer) readValuesAt(partition string, offset int64) int {
	pi := a.partByName(partition)
	if pi < 0 {
		return 0
	}
	n := 0
	last := int32(-1)
	for _, o := range a.parts[pi].obsAt(offset) {
		if o.flags&obsRead != 0 && o.val != last {
			n++
			last = o.val
		}
	}
	return n
}

// ackedCopyLostAt names the sender of a record acknowledged at
// partition@offset that no poll saw there and final reads do not hold there:
// that acknowledged copy is gone (the record may survive elsewhere, from
// another attempt of its batch).
func (a *analyzer) ackedCopyLostAt(partition string, offset int64) (string, bool) {
	pi := a.partByName(partition)
	if pi < 0 {
		return "", false
	}
	obs := a.parts[pi].obsAt(offset)
	for _, o := range obs {
		if o.flags&obsRead != 0 || a.vals[o.val].send < 0 {
			continue
		}
		kept := false
		for _, x := range obs {
			kept = kept || (x.val == o.val && x.flags&(obsRead|obsFinal) != 0)
		}
		if !kept {
			return a.procs[a.sends[a.vals[o.val].send].proc].name, true
		}
	}
	return "", false
}

// logStartOf is a partition's log start offset when final reads began.
func (a *analyzer) logStartOf(partition string) int64 {
	if pi := a.partByName(partition); pi >= 0 {
		return a.parts[pi].logStart
	}
	return 0
}

// senderOf names the process that sent value, if any.
func (a *analyzer) senderOf(value string) (string, bool) {
	vi, ok := a.valIDs[value]
	if !ok || a.vals[vi].send < 0 {
		return "", false
	}
	return a.procs[a.sends[a.vals[vi].send].proc].name, true
}

// reusedOffset reports whether another record took value's offset after it:
// seen there (acknowledged or read) later than value was last seen there.
// The cleaner never reuses an offset, so value was lost some other way (a
// leader failed before its followers copied it). A record that held the
// offset before value (one lost that way, whose offset value then took)
// says nothing about value. Nor does a later acknowledgement at an offset
// where a poll read value (below a high watermark: committed) when the god
// view saw no committed data lost there: a committed offset is never taken
// again without such a loss, so that acknowledgement came from a log that
// diverged (a deposed leader, resumed from a pause, appending and answering
// acks=1 at its own end: fuzz seed 3008800), and its write is the one lost.
func (a *analyzer) reusedOffset(partition string, offset int64, value string) bool {
	pi := a.partByName(partition)
	vi, ok := a.valIDs[value]
	if pi < 0 || !ok || offset < 0 {
		return false
	}
	obs := a.parts[pi].obsAt(offset)
	last := int64(-1)
	if si := a.vals[vi].send; si >= 0 {
		last = a.sends[si].complete
	}
	read := false
	for _, o := range obs {
		if o.val == vi {
			last = max(last, o.op)
			read = read || o.flags&obsRead != 0
		}
	}
	committed := read && a.cfg.Happened.GodView() && !a.cfg.Happened.Covers(godview.Loss, partition, offset)
	for _, o := range obs {
		if o.val != vi && o.op > last && (o.flags&obsRead != 0 || !committed) {
			return true
		}
	}
	return false
}

// supersededInFinal reports whether final reads hold, after offset, a record
// with the same key as the send of value.
func (a *analyzer) supersededInFinal(partition string, offset int64, value string) bool {
	vi, ok := a.valIDs[value]
	pi := a.partByName(partition)
	if !ok || pi < 0 || a.vals[vi].send < 0 {
		return false
	}
	s := &a.sends[a.vals[vi].send]
	if s.key < 0 {
		return false
	}
	po := a.parts[pi]
	i := sort.Search(len(po.obs), func(i int) bool { return po.obs[i].off > offset })
	for ; i < len(po.obs); i++ {
		ob := &po.obs[i]
		if ob.flags&obsFinal == 0 {
			continue
		}
		if li := a.vals[ob.val].send; li >= 0 && a.sends[li].key == s.key {
			return true
		}
	}
	return false
}
