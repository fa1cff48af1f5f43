package checker

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"kafkasim/checker/history"
)

// The history analysis: from every send and poll, a version order per
// partition (offset -> values seen there), then the anomalies.
//
// Where it is stronger than Jepsen's checker:
//   - lost is told from unseen by final reads (SPEC.md §3): a final read
//     reads every partition to its end, so an acknowledged record missing
//     from it is gone, not merely not yet read. Without final reads, a write
//     is lost only if reads went past its offset and never saw it (Jepsen's
//     rule); otherwise it is unseen.
//   - sends are matched to their completions by value, so a producer with
//     many sends in flight (as Kafka's are) is checked correctly.

type sendInfo struct {
	value     string
	process   string
	topic     string
	key       string
	hasKey    bool
	rank      int   // the send's place in its producer's order
	invoke    int64 // op index
	complete  int64 // op index, -1 while pending
	typ       history.Type
	partition int32
	offset    int64
	invokeAt  int64
}

type observation struct {
	value   string
	op      int64
	process string
	final   bool
	read    bool // a poll saw it (else an acknowledgement placed it)
}

type partitionOrder struct {
	name     string
	topic    string
	versions map[int64][]observation // offset -> values observed (reads and acks)
	offsets  []int64                 // known offsets, sorted (after build)
	maxRead  int64                   // highest offset any read saw (-1)
	finalEnd int64                   // one past the highest offset final reads saw (-1: none)
}

type analysis struct {
	ops        []history.Op
	sends      map[string]*sendInfo
	sendOrder  []*sendInfo
	parts      map[string]*partitionOrder
	partNames  []string
	finalTopic map[string]bool // topics covered by final reads
	// logStart is each partition's log start offset when final reads
	// began: acknowledged records below it were deleted by retention.
	logStart map[string]int64
	findings []Finding
	stats    Stats
	ranks    map[string]int // sends so far per producer
}

// Stats summarise a history (summary.json's writes and reads).
type Stats struct {
	Attempted     int     `json:"attempted"`
	Acked         int     `json:"acked"`
	Failed        int     `json:"failed"`
	Indeterminate int     `json:"indeterminate"`
	LostAcked     int     `json:"lost_acked"`
	Availability  float64 `json:"availability"`
	Polls         int     `json:"polls"`
	Records       int     `json:"records"`
	Duplicates    int     `json:"duplicates"`
	// Deleted counts acknowledged records below the log start final reads
	// began from: retention deleted them (an extension).
	Deleted int `json:"deleted_by_retention"`
	// Compacted counts acknowledged records of compacted topics that a
	// later record with the same key superseded (an extension).
	Compacted int `json:"compacted"`
}

func partName(topic string, p int32) string { return topic + "-" + strconv.Itoa(int(p)) }

func analyze(ops []history.Op) *analysis {
	a := &analysis{ops: ops, sends: map[string]*sendInfo{}, parts: map[string]*partitionOrder{}, finalTopic: map[string]bool{},
		logStart: map[string]int64{}, ranks: map[string]int{}}
	a.collect()
	a.build()
	a.checkOffsets()
	a.checkSends()
	a.checkPolls()
	a.checkCoverage()
	a.checkLost()
	a.checkKeyOrder()
	return a
}

func (a *analysis) part(topic string, p int32) *partitionOrder {
	name := partName(topic, p)
	po := a.parts[name]
	if po == nil {
		po = &partitionOrder{name: name, topic: topic, versions: map[int64][]observation{}, maxRead: -1, finalEnd: -1}
		a.parts[name] = po
		a.partNames = append(a.partNames, name)
	}
	return po
}

func (po *partitionOrder) observe(offset int64, o observation) {
	for _, x := range po.versions[offset] {
		if x.value == o.value && x.op == o.op {
			return
		}
	}
	po.versions[offset] = append(po.versions[offset], o)
}

// collect pairs sends with their completions (by value: values are unique)
// and records every read.
func (a *analysis) collect() {
	for i := range a.ops {
		o := &a.ops[i]
		switch o.F {
		case history.FSend:
			a.collectSend(o)
		case history.FPoll:
			if o.Type == history.Invoke {
				continue
			}
			if o.Type != history.OK {
				continue
			}
			a.stats.Polls++
			if x := o.Value.Ext; x != nil && o.Value.Final {
				for name, off := range x.LogStartOffsets { // kafkasim:orderless: fills maps
					a.logStart[name] = max(a.logStart[name], off)
					a.finalTopic[topicOf(name)] = true
				}
			}
			for _, r := range o.Value.Records {
				a.stats.Records++
				po := a.part(r.Topic, r.Partition)
				po.observe(r.Offset, observation{value: r.Value, op: o.Index, process: o.Process, final: o.Value.Final, read: true})
				po.maxRead = max(po.maxRead, r.Offset)
				if o.Value.Final {
					po.finalEnd = max(po.finalEnd, r.Offset+1)
					a.finalTopic[r.Topic] = true
				}
			}
		}
	}
	for _, s := range a.sendOrder {
		a.stats.Attempted++
		switch s.typ {
		case history.OK:
			a.stats.Acked++
			a.part(s.topic, s.partition).observe(s.offset, observation{value: s.value, op: s.complete, process: s.process})
		case history.Fail:
			a.stats.Failed++
		default:
			a.stats.Indeterminate++
		}
	}
	if a.stats.Attempted > 0 {
		a.stats.Availability = float64(a.stats.Acked) / float64(a.stats.Attempted)
	}
}

func (a *analysis) collectSend(o *history.Op) {
	v := o.Value.Value
	if o.Type == history.Invoke {
		if _, dup := a.sends[v]; dup {
			a.findings = append(a.findings, Finding{Type: Duplicate, Example: Example{Value: v, Process: o.Process, Ops: []int64{o.Index},
				Detail: "the history sends this value twice: values must be unique"}})
			return
		}
		s := &sendInfo{value: v, process: o.Process, topic: o.Value.Topic, invoke: o.Index, complete: -1, typ: history.Info,
			partition: -1, offset: -1, invokeAt: o.Time, key: o.Value.Key, hasKey: o.Value.HasKey, rank: a.ranks[o.Process]}
		a.ranks[o.Process]++
		a.sends[v] = s
		a.sendOrder = append(a.sendOrder, s)
		return
	}
	s, ok := a.sends[v]
	if !ok || s.complete >= 0 {
		return // a completion without its invocation: nothing to check against
	}
	s.complete, s.typ = o.Index, o.Type
	if o.Value.Partition >= 0 {
		s.partition = o.Value.Partition
	}
	if o.Type == history.OK {
		s.offset = o.Value.Offset
		if s.partition < 0 || s.offset < 0 {
			s.typ = history.Info // an ok without a position says nothing checkable
		}
	}
}

func (a *analysis) build() {
	sort.Strings(a.partNames)
	for _, name := range a.partNames {
		po := a.parts[name]
		po.offsets = make([]int64, 0, len(po.versions))
		for off := range po.versions { // kafkasim:orderless: sorted below
			po.offsets = append(po.offsets, off)
		}
		sort.Slice(po.offsets, func(i, j int) bool { return po.offsets[i] < po.offsets[j] })
	}
}

// knownBetween reports the first known offset strictly between lo and hi.
func (po *partitionOrder) knownBetween(lo, hi int64) (int64, bool) {
	i := sort.Search(len(po.offsets), func(i int) bool { return po.offsets[i] > lo })
	if i < len(po.offsets) && po.offsets[i] < hi {
		return po.offsets[i], true
	}
	return 0, false
}

// checkOffsets: two values at one offset; one value at two offsets; reads
// of writes that definitely failed, or that nobody sent.
func (a *analysis) checkOffsets() {
	positions := map[string][]string{} // value -> "partition@offset" it was seen at
	posOps := map[string][]int64{}
	for _, name := range a.partNames {
		po := a.parts[name]
		for _, off := range po.offsets {
			obs := po.versions[off]
			var distinct []string
			var ops []int64
			for _, o := range obs {
				if !contains(distinct, o.value) {
					distinct = append(distinct, o.value)
				}
				ops = append(ops, o.op)
				key := fmt.Sprintf("%s@%d", name, off)
				if !contains(positions[o.value], key) {
					positions[o.value] = append(positions[o.value], key)
					posOps[o.value] = append(posOps[o.value], o.op)
				}
			}
			if len(distinct) > 1 {
				sort.Strings(distinct)
				a.findings = append(a.findings, Finding{Type: InconsistentOffsets, Example: Example{Partition: name, Offset: off,
					Value: distinct[0], Ops: sortedUnique(ops), Detail: fmt.Sprintf("values %v at one offset", distinct)}})
			}
		}
	}
	values := make([]string, 0, len(positions))
	for v := range positions { // kafkasim:orderless: sorted below
		values = append(values, v)
	}
	sort.Strings(values)
	for _, v := range values {
		if ps := positions[v]; len(ps) > 1 {
			a.stats.Duplicates++
			p, off := splitPos(ps[0])
			a.findings = append(a.findings, Finding{Type: Duplicate, Example: Example{Partition: p, Offset: off, Value: v,
				Ops: sortedUnique(posOps[v]), Detail: fmt.Sprintf("one value at %d offsets: %v", len(ps), ps)}})
		}
		s, sent := a.sends[v]
		switch {
		case sent && s.typ == history.Fail:
			p, off := splitPos(positions[v][0])
			a.findings = append(a.findings, Finding{Type: AbortedRead, Example: Example{Partition: p, Offset: off, Value: v,
				Process: s.process, Ops: append([]int64{s.invoke, s.complete}, posOps[v]...),
				Detail: "read a record whose send definitely failed"}})
		case !sent && len(a.sends) > 0:
			p, off := splitPos(positions[v][0])
			a.findings = append(a.findings, Finding{Type: PhantomRead, Example: Example{Partition: p, Offset: off, Value: v,
				Ops: sortedUnique(posOps[v]), Detail: "read a record no process sent"}})
		}
	}
}

func splitPos(s string) (string, int64) {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '@' {
			n, _ := strconv.ParseInt(s[i+1:], 10, 64)
			return s[:i], n
		}
	}
	return s, -1
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func sortedUnique(xs []int64) []int64 {
	sort.Slice(xs, func(i, j int) bool { return xs[i] < xs[j] })
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
func (a *analysis) checkSends() {
	type key struct{ process, part string }
	last := map[key]*sendInfo{}
	for _, s := range a.sendOrder {
		if s.typ != history.OK {
			continue
		}
		k := key{s.process, partName(s.topic, s.partition)}
		if prev, ok := last[k]; ok && s.offset <= prev.offset {
			a.findings = append(a.findings, Finding{Type: NonmonotonicSend, Example: Example{Partition: k.part, Offset: s.offset,
				Value: s.value, Process: s.process, Ops: []int64{prev.invoke, prev.complete, s.invoke, s.complete},
				Detail: fmt.Sprintf("%s was sent after %s but landed at %d, not after %d", s.value, prev.value, s.offset, prev.offset)}})
		}
		last[k] = s // consecutive sends: one reordering is one finding
	}
}

// checkPolls: within one poll, and between one consumer's consecutive polls,
// offsets of a partition must increase and must not skip records that exist.
func (a *analysis) checkPolls() {
	type session struct {
		last  map[string]int64
		final bool
	}
	sessions := map[string]*session{}
	for i := range a.ops {
		o := &a.ops[i]
		switch o.F {
		case history.FRestart, history.FCrash, history.FAssign, history.FRevoke:
			delete(sessions, o.Process) // a new session: positions may legitimately move
			continue
		case history.FPoll:
		default:
			continue
		}
		if o.Type != history.OK {
			continue
		}
		s := sessions[o.Process]
		if s == nil || s.final != o.Value.Final {
			// Final reads start again from the beginning: a new session.
			s = &session{last: map[string]int64{}, final: o.Value.Final}
			sessions[o.Process] = s
		}
		inPoll := map[string]int64{}
		for _, r := range o.Value.Records {
			name := r.TopicPartition()
			po := a.parts[name]
			if prev, ok := inPoll[name]; ok {
				a.checkStep(po, prev, r.Offset, o, IntNonmonotonicPoll, IntPollSkip)
			} else if prev, ok := s.last[name]; ok {
				a.checkStep(po, prev, r.Offset, o, NonmonotonicPoll, PollSkip)
			}
			inPoll[name] = r.Offset
		}
		for name, off := range inPoll { // kafkasim:orderless: fills a map
			s.last[name] = off
		}
	}
}

func (a *analysis) checkStep(po *partitionOrder, prev, next int64, o *history.Op, nonmono, skip string) {
	switch {
	case next <= prev:
		a.findings = append(a.findings, Finding{Type: nonmono, Example: Example{Partition: po.name, Offset: next,
			Process: o.Process, Ops: []int64{o.Index}, Detail: fmt.Sprintf("offset %d after %d", next, prev)}})
	case next > prev+1:
		if missed, ok := po.knownBetween(prev, next); ok {
			a.findings = append(a.findings, Finding{Type: skip, Example: Example{Partition: po.name, Offset: missed,
				Process: o.Process, Ops: []int64{o.Index}, Detail: fmt.Sprintf("jumped from %d to %d over offset %d, which exists", prev, next, missed)}})
		}
	}
}

// checkLost: an acknowledged write is lost if final reads covered its
// partition and did not see it; without final reads, if reads went past its
// offset and nobody ever saw it (Jepsen's rule); otherwise it is unseen.
func (a *analysis) checkLost() {
	seen := map[string]bool{}
	seenFinal := map[string]bool{}
	for _, name := range a.partNames {
		for _, obs := range a.parts[name].versions { // kafkasim:orderless: fills maps
			for _, o := range obs {
				if o.read {
					seen[o.value] = true
					if o.final {
						seenFinal[o.value] = true
					}
				}
			}
		}
	}
	for _, s := range a.sendOrder {
		if s.typ != history.OK {
			continue
		}
		po := a.parts[partName(s.topic, s.partition)]
		ex := Example{Partition: po.name, Offset: s.offset, Value: s.value, Process: s.process, Ops: []int64{s.invoke, s.complete}}
		switch {
		case a.finalTopic[s.topic] && s.offset < a.logStart[po.name] && !seenFinal[s.value]:
			// Below the log start: deleted by retention, not lost.
			a.stats.Deleted++
		case a.finalTopic[s.topic]:
			if !seenFinal[s.value] {
				a.stats.LostAcked++
				ex.Detail = fmt.Sprintf("acknowledged at offset %d; final reads (to offset %d) do not hold it", s.offset, max(po.finalEnd, 0))
				a.findings = append(a.findings, Finding{Type: LostAckedWrite, Example: ex})
			}
		case seen[s.value]:
		case po.maxRead > s.offset:
			a.stats.LostAcked++
			ex.Detail = fmt.Sprintf("acknowledged at offset %d; reads went on to offset %d and never saw it", s.offset, po.maxRead)
			a.findings = append(a.findings, Finding{Type: LostAckedWrite, Example: ex})
		default:
			ex.Detail = "acknowledged, never read (no final read covered it)"
			a.findings = append(a.findings, Finding{Type: Unseen, Example: ex})
		}
	}
}

// inFinalReads reports whether final reads saw a record at partition@offset.
func (a *analysis) inFinalReads(partition string, offset int64) bool {
	po := a.parts[partition]
	if po == nil {
		return false
	}
	for _, o := range po.versions[offset] {
		if o.final {
			return true
		}
	}
	return false
}

// readAt reports whether a poll saw value at partition@offset.
func (a *analysis) readAt(partition string, offset int64, value string) bool {
	if po := a.parts[partition]; po != nil {
		for _, o := range po.versions[offset] {
			if o.read && o.value == value {
				return true
			}
		}
	}
	return false
}

// readValuesAt counts the distinct values polls saw at partition@offset.
func (a *analysis) readValuesAt(partition string, offset int64) int {
	var vals []string
	if po := a.parts[partition]; po != nil {
		for _, o := range po.versions[offset] {
			if o.read && !contains(vals, o.value) {
				vals = append(vals, o.value)
			}
		}
	}
	return len(vals)
}

// checkCoverage: an assign-mode reader reads every record between where it
// started and how far it got. A record the final reads hold inside that range
// that the reader never read was skipped, even if its offset was read once
// with another record (after a truncation the reader must go back: KIP-320).
func (a *analysis) checkCoverage() {
	type span struct {
		first, last int64
		values      map[string]bool
	}
	type session struct {
		spans map[string]*span
	}
	grouped := map[string]bool{}
	for i := range a.ops {
		if f := a.ops[i].F; f == history.FAssign || f == history.FRevoke {
			grouped[a.ops[i].Process] = true
		}
	}
	var done []*session
	var doneProc []string
	open := map[string]*session{}
	var procs []string
	closeSession := func(proc string) {
		if s, ok := open[proc]; ok {
			done = append(done, s)
			doneProc = append(doneProc, proc)
			delete(open, proc)
		}
	}
	for i := range a.ops {
		o := &a.ops[i]
		if grouped[o.Process] {
			continue
		}
		switch o.F {
		case history.FRestart, history.FCrash:
			closeSession(o.Process)
			continue
		case history.FPoll:
		default:
			continue
		}
		if o.Type != history.OK || o.Value.Final {
			continue
		}
		s := open[o.Process]
		if s == nil {
			s = &session{spans: map[string]*span{}}
			open[o.Process] = s
			procs = append(procs, o.Process)
		}
		for _, r := range o.Value.Records {
			name := r.TopicPartition()
			sp := s.spans[name]
			if sp == nil {
				sp = &span{first: r.Offset, last: r.Offset, values: map[string]bool{}}
				s.spans[name] = sp
			}
			sp.last = max(sp.last, r.Offset)
			sp.values[r.Value] = true
		}
	}
	for _, p := range procs {
		closeSession(p)
	}
	for i, s := range done {
		names := make([]string, 0, len(s.spans))
		for n := range s.spans { // kafkasim:orderless: sorted below
			names = append(names, n)
		}
		sort.Strings(names)
		for _, name := range names {
			sp := s.spans[name]
			po := a.parts[name]
			if po == nil || po.finalEnd < 0 {
				continue
			}
			lo := sort.Search(len(po.offsets), func(j int) bool { return po.offsets[j] >= sp.first })
			for _, off := range po.offsets[lo:] {
				if off > sp.last {
					break
				}
				for _, ob := range po.versions[off] {
					if ob.final && !sp.values[ob.value] {
						a.findings = append(a.findings, Finding{Type: PollSkip, Example: Example{Partition: name, Offset: off,
							Value: ob.value, Process: doneProc[i], Ops: []int64{ob.op},
							Detail: fmt.Sprintf("%s read %s from %d to %d but never the record at %d that the log holds", doneProc[i], name, sp.first, sp.last, off)}})
						break
					}
				}
			}
		}
	}
}

// checkKeyOrder: a reader sees one producer's records of one key in the
// order they were sent, as long as the key always goes to one partition
// (Kafka orders records per partition only). A reader that sees a key's
// later record, in one partition, before an earlier one in another, saw
// the key move between partitions: adding partitions remaps keys.
func (a *analysis) checkKeyOrder() {
	type keyID struct{ producer, topic, key string }
	type seen struct {
		rank      int
		value     string
		partition int32
		op        int64
	}
	last := map[string]map[keyID]seen{} // reader -> key -> latest send read
	for i := range a.ops {
		o := &a.ops[i]
		if o.F == history.FRestart || o.F == history.FCrash {
			delete(last, o.Process) // a new session reads from scratch
			continue
		}
		if o.F != history.FPoll || o.Type != history.OK || o.Value.Final {
			continue
		}
		for _, r := range o.Value.Records {
			s, ok := a.sends[r.Value]
			if !ok || !s.hasKey {
				continue
			}
			m := last[o.Process]
			if m == nil {
				m = map[keyID]seen{}
				last[o.Process] = m
			}
			id := keyID{producer: s.process, topic: r.Topic, key: s.key}
			prev, ok := m[id]
			if ok && s.rank < prev.rank && r.Partition != prev.partition {
				a.findings = append(a.findings, Finding{Type: KeyOrder, Example: Example{Partition: r.TopicPartition(), Offset: r.Offset,
					Value: r.Value, Process: o.Process, Ops: []int64{prev.op, o.Index},
					Detail: fmt.Sprintf("%s read %s (key %s, %s-%d) after %s (key %s, %s-%d), which %s sent later",
						o.Process, r.Value, s.key, r.Topic, r.Partition, prev.value, s.key, r.Topic, prev.partition, s.process)}})
				continue
			}
			if !ok || s.rank > prev.rank {
				m[id] = seen{rank: s.rank, value: r.Value, partition: r.Partition, op: o.Index}
			}
		}
	}
}

func topicOf(partition string) string {
	if i := strings.LastIndexByte(partition, '-'); i > 0 {
		return partition[:i]
	}
	return partition
}

// supersededInFinal reports whether final reads hold, after offset, a record
// with the same key as the send of value.
func (a *analysis) supersededInFinal(partition string, offset int64, value string) bool {
	s, ok := a.sends[value]
	po := a.parts[partition]
	if !ok || !s.hasKey || po == nil {
		return false
	}
	i := sort.Search(len(po.offsets), func(i int) bool { return po.offsets[i] > offset })
	for _, off := range po.offsets[i:] {
		for _, ob := range po.versions[off] {
			if !ob.final {
				continue
			}
			if later, ok := a.sends[ob.value]; ok && later.hasKey && later.key == s.key {
				return true
			}
		}
	}
	return false
}
