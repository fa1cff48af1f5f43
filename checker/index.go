package checker

import (
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"kafkasim/history"
)

// The index: the tables every check reads. Processes, topics, partitions,
// keys and values are numbered as they first appear; each partition keeps
// the values seen at its offsets (observations, from polls and from
// acknowledgements) and, once the history is in, its version order (build).
// Ingestion (ingest.go) fills these tables and the checks only read them,
// so they live apart from both.

// Observation flags.
const (
	obsRead  uint8 = 1 << iota // a poll saw it (else an acknowledgement placed it)
	obsFinal                   // a final poll saw it
	obsRC                      // a read_committed poll saw it
	// valInfo only: a poll that finished before the final reads began saw
	// it (it was committed before the final reads took their ends).
	obsBeforeFinal
	// valInfo only: a read_committed final poll saw it.
	obsFinalRC
)

// observation is one value seen at one offset of a partition: by a poll, or
// placed there by a send's acknowledgement. A long run holds millions, so
// what the session or the send says is not repeated here: obsProc and
// obsFlags.
type observation struct {
	off  int64
	op   int64 // history index of the operation that saw it
	val  int32
	sess int32 // reader session; -1 for an acknowledgement
}

// obsProc is the process that saw an observation: the reader's, or the
// producer's whose acknowledgement placed it (values are sent once).
func (a *analyzer) obsProc(ob *observation) int32 {
	if ob.sess >= 0 {
		return a.sessions[ob.sess].proc
	}
	return a.sends[a.valSend[ob.val]].proc
}

// obsFlags is how an observation was made: none for an acknowledgement;
// obsRead for a poll's, with obsFinal when its session's polls are final
// (session opens one per finality), obsRC when the poll read committed,
// as its session's first poll did unless the poll is in rcFlipped.
func (a *analyzer) obsFlags(ob *observation) uint8 {
	if ob.sess < 0 {
		return 0
	}
	s := &a.sessions[ob.sess]
	f := obsRead
	if s.final {
		f |= obsFinal
	}
	rc := s.rc
	if len(a.rcFlipped) > 0 && a.rcFlipped[opSession{ob.op, ob.sess}] {
		rc = !rc
	}
	if rc {
		f |= obsRC
	}
	return f
}

// opSession is a poll's reading of one session's partition.
type opSession struct {
	op   int64
	sess int32
}

type partState struct {
	name    string
	topic   int32
	obs     obsStore // read through all, after, groups, obsAt once built
	offsets []int64  // distinct known offsets, ascending (built and let go in finish)
	visRC   []bool   // offsets[i] holds a record read_committed readers must see
	// early are the reads that may be reads from the future
	// (lateTxnReads), in history order: those of a value not sent yet,
	// or sent later in a transaction.
	early    []observation
	maxRead  int64 // highest offset any read saw (-1)
	finalEnd int64 // one past the highest offset final reads saw (-1: none)
	logStart int64 // log start offset when final reads began
	// finalTo is how far final reads that said so (a final poll's
	// positions) read the partition: every offset below it (-1: none
	// said); finalReached whether they reached its end offset;
	// finalSaid whether such final reads gave a position or an end
	// offset of it at all (mergeFinal).
	finalTo      int64
	finalReached bool
	finalSaid    bool
	// Linearizability: the reads of this partition, in history order.
	lin linLog
}

type valInfo struct {
	send  int32 // index in sends, -1: nobody sent it
	flags uint8 // obsRead | obsFinal | obsRC: how polls saw it
}

// val is what is known of value v.
func (a *analyzer) val(v int32) valInfo { return valInfo{send: a.valSend[v], flags: a.valFlags[v]} }

// sendRec is one send. A long run holds millions, so it packs into 36
// bytes, what a simulated run's sends need; what does not fit (a foreign
// history's sparse op indexes, huge offsets, times past 78 hours, a
// transaction) is kept aside, by value (a value has one send at most),
// and read through records' accessors (invoke, offset, doneAt, txn) and
// analyzer.sendTopic. A send's place in its producer's order is its index
// in sends (sends are numbered as invoked), and its completion's index is
// kept as the distance from its invocation's (records.complete).
type sendRec struct {
	val  int32
	proc int32
	key  int32 // -1: null key
	// pt is the partition (part), or, while it is unknown, -1 less the
	// send's topic (a partition's topic is the send's unless sendTopicFar).
	pt   int32
	done int32  // the completion's index less invoke; donePending, doneFar
	inv  uint32 // the invocation's op index; invFar
	off  int32  // the acknowledged offset, -1: unknown; offFar
	// atLo and atHi: the completion's time (ns), its low 48 bits; atFar.
	atLo uint32
	atHi uint16
	typ  history.Type
	bits sendBits
}

// sendBits: what a send is besides its fields.
type sendBits uint8

const (
	// sendNoAck: an acks=0 send the producer reported done, as Kafka's
	// does (the callback succeeds with offset -1): acknowledged without
	// a position, judged by the final reads alone.
	sendNoAck    sendBits = 1 << iota
	sendInTxn             // its transaction is in records.sendTxn
	sendTopicFar          // its partition's topic is not the send's: records.far
)

// The fields' values that say the send's own is in records.far.
const (
	invFar = math.MaxUint32
	offFar = math.MinInt32
	atFar  = math.MaxUint16
)

// sendFar is what of a send does not fit its sendRec.
type sendFar struct {
	complete, invoke, offset, doneAt int64
	topic                            int32
}

// sendRec.done's values that are not a distance: no completion yet, and a
// completion too far from its invocation (a history whose indexes are
// sparse), whose index is in records.far.
const (
	donePending = math.MinInt32
	doneFar     = math.MinInt32 + 1
)

func (r *records) farOf(s *sendRec) *sendFar {
	if r.far == nil {
		r.far = map[int32]*sendFar{}
	}
	f := r.far[s.val]
	if f == nil {
		f = &sendFar{}
		r.far[s.val] = f
	}
	return f
}

// complete is the index of s's completion, -1 while pending.
func (r *records) complete(s *sendRec) int64 {
	switch s.done {
	case donePending:
		return -1
	case doneFar:
		return r.far[s.val].complete
	}
	return r.invoke(s) + int64(s.done)
}

// setComplete records the index of s's completion (-1: pending); s's
// invocation is set.
func (r *records) setComplete(s *sendRec, index int64) {
	d := index - r.invoke(s)
	switch {
	case index == -1:
		s.done = donePending
	case d > doneFar && d <= math.MaxInt32:
		s.done = int32(d)
	default:
		r.farOf(s).complete = index
		s.done = doneFar
	}
}

// invoke is the op index of s's invocation.
func (r *records) invoke(s *sendRec) int64 {
	if s.inv != invFar {
		return int64(s.inv)
	}
	return r.far[s.val].invoke
}

func (r *records) setInvoke(s *sendRec, index int64) {
	if index >= 0 && index < invFar {
		s.inv = uint32(index)
		return
	}
	r.farOf(s).invoke = index
	s.inv = invFar
}

// offset is where s's acknowledgement placed it, -1: unknown.
func (r *records) offset(s *sendRec) int64 {
	if s.off != offFar {
		return int64(s.off)
	}
	return r.far[s.val].offset
}

func (r *records) setOffset(s *sendRec, off int64) {
	if off >= -1 && off <= math.MaxInt32 {
		s.off = int32(off)
		return
	}
	r.farOf(s).offset = off
	s.off = offFar
}

// doneAt is the time of s's completion (ns).
func (r *records) doneAt(s *sendRec) int64 {
	if s.atHi != atFar {
		return int64(s.atHi)<<32 | int64(s.atLo)
	}
	return r.far[s.val].doneAt
}

func (r *records) setDoneAt(s *sendRec, t int64) {
	if t >= 0 && t < atFar<<32 {
		s.atLo, s.atHi = uint32(t), uint16(t>>32)
		return
	}
	r.farOf(s).doneAt = t
	s.atLo, s.atHi = 0, atFar
}

// txn is s's transaction, -1: not transactional.
func (r *records) txn(s *sendRec) int32 {
	if s.bits&sendInTxn == 0 {
		return -1
	}
	return r.sendTxn[s.val]
}

func (r *records) setTxn(s *sendRec, t int32) {
	if t < 0 {
		if s.bits&sendInTxn != 0 {
			delete(r.sendTxn, s.val)
			s.bits &^= sendInTxn
		}
		return
	}
	if r.sendTxn == nil {
		r.sendTxn = map[int32]int32{}
	}
	r.sendTxn[s.val] = t
	s.bits |= sendInTxn
}

// noAck: s is an acks=0 send its producer reported done (sendNoAck).
func (s *sendRec) noAck() bool { return s.bits&sendNoAck != 0 }

// part is s's partition, -1: unknown.
func (s *sendRec) part() int32 { return max(s.pt, -1) }

// newSend is a send of value v to topic, invoked at op index invoke: its
// partition, offset and completion unknown, not transactional.
func (r *records) newSend(v, proc, topic, key int32, invoke int64) sendRec {
	s := sendRec{val: v, proc: proc, key: key, pt: -1 - topic, typ: history.Info, done: donePending, off: -1}
	r.setInvoke(&s, invoke)
	return s
}

// setPart places s in partition part: a completion names it, and a foreign
// history's may name one of another topic than the invocation's.
func (a *analyzer) setPart(s *sendRec, part int32) {
	topic := a.sendTopic(s)
	s.pt = part
	if a.parts[part].topic != topic {
		a.farOf(s).topic = topic
		s.bits |= sendTopicFar
	}
}

// sendTopic is the topic s was sent to.
func (a *analyzer) sendTopic(s *sendRec) int32 {
	switch {
	case s.pt < 0:
		return -1 - s.pt
	case s.bits&sendTopicFar != 0:
		return a.far[s.val].topic
	}
	return a.parts[s.pt].topic
}

type partKey struct {
	topic string
	p     int32
}

func partName(topic string, p int32) string { return topic + "-" + strconv.Itoa(int(p)) }

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
		po := &partState{name: name, topic: a.topicID(topic), maxRead: -1, finalEnd: -1, finalTo: -1}
		po.obs.rec = &a.records
		if sz := a.cfg.Sizes; sz != nil {
			// A partition acknowledges each send acknowledged in it
			// (placeAcks).
			po.obs.acks = make([]int32, 0, sz.Acks[history.TopicPartition{Topic: topic, Partition: p}])
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
	id, added := a.valIDs.number(v, int32(len(a.valSend)))
	if !added {
		return id
	}
	a.valSend, a.valFlags = append(a.valSend, -1), append(a.valFlags, 0)
	return id
}

// valName is the value numbered v.
func (a *analyzer) valName(v int32) string { return a.valIDs.name(v) }

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

// placeAcks adds every acknowledged send's position to its partition's
// observations.
func (a *analyzer) placeAcks() {
	for i := range a.sends {
		s := &a.sends[i]
		if s.typ == history.OK && s.part() >= 0 && a.offset(s) >= 0 {
			a.parts[s.part()].obs.ack(int32(i))
		}
	}
}

// build sorts each partition's observations into its version order.
func (a *analyzer) build() {
	for _, po := range a.parts {
		po.early = nil // lateTxnReads has taken them
		po.obs.build()
		distinct := 0 // offsets, counted first: the slices are made once
		for range po.groups() {
			distinct++
		}
		po.offsets = slices.Grow(po.offsets[:0], distinct)
		po.visRC = slices.Grow(po.visRC[:0], distinct)
		for _, obs := range po.groups() {
			vis := false
			for i := range obs {
				vis = vis || a.visibleToRC(obs[i].val)
			}
			po.offsets = append(po.offsets, obs[0].off)
			po.visRC = append(po.visRC, vis)
		}
	}
}

// visibleToRC reports whether a read_committed reader must see the record of
// value v when it passes its offset: it was not written in a transaction,
// or its transaction committed.
func (a *analyzer) visibleToRC(v int32) bool {
	si := a.valSend[v]
	if si < 0 {
		return true
	}
	t := a.txn(&a.sends[si])
	return t < 0 || a.txns[t].outcome == txnCommitted
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

// sortedParts lists partitions by name.
func (a *analyzer) sortedParts() []int32 {
	ids := make([]int32, len(a.parts))
	for i := range ids {
		ids[i] = int32(i)
	}
	sort.Slice(ids, func(i, j int) bool { return a.parts[ids[i]].name < a.parts[ids[j]].name })
	return ids
}
