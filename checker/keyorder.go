package checker

import (
	"kafkasim/history"
)

// key-order: a reader sees one producer's records of a key in the order they
// were sent. Checked as the polls come in (addPoll), from each reader's
// latest record seen per key, not over the version order like the others.

type keyID struct{ producer, topic, key int32 }

// keySeenTable is a reader's latest record seen per key. It is looked up
// for every record a poll returns: a key whose producer and topic numbers
// fit is one 64-bit word, which the runtime's maps hash fastest; the rest
// (a history with more than a million processes or 4,096 topics) a map of
// the whole keyID.
type keySeenTable struct {
	packed map[uint64]keySeen
	wide   map[keyID]keySeen
}

// pack returns id as one word, false when it does not fit.
func (id keyID) pack() (uint64, bool) {
	if uint32(id.producer) >= 1<<20 || uint32(id.topic) >= 1<<12 {
		return 0, false
	}
	return uint64(id.producer)<<44 | uint64(id.topic)<<32 | uint64(uint32(id.key)), true
}

func (t *keySeenTable) get(id keyID) (keySeen, bool) {
	if w, ok := id.pack(); ok {
		ks, found := t.packed[w]
		return ks, found
	}
	ks, found := t.wide[id]
	return ks, found
}

func (t *keySeenTable) put(id keyID, ks keySeen) {
	if w, ok := id.pack(); ok {
		if t.packed == nil {
			t.packed = map[uint64]keySeen{}
		}
		t.packed[w] = ks
		return
	}
	if t.wide == nil {
		t.wide = map[keyID]keySeen{}
	}
	t.wide[id] = ks
}

type keySeen struct {
	rank int32 // the send's index: one producer's are numbered in its order
	val  int32
	part int32
	op   int64
}

// keyOrder: a reader sees one producer's records of one key in the order
// they were sent, as long as the key always goes to one partition (Kafka
// orders records per partition only). A reader that sees a key's later
// record, in one partition, before an earlier one in another, saw the key
// move between partitions: adding partitions remaps keys.
func (a *analyzer) keyOrder(p *procState, si int32, s *sendRec, r *history.Record, part int32, o *history.Op) {
	id := keyID{producer: s.proc, topic: a.parts[part].topic, key: s.key}
	prev, ok := p.keySeen.get(id)
	if ok && si < prev.rank && part != prev.part {
		key := a.keys[s.key]
		a.findings = append(a.findings, Finding{Type: KeyOrder, Example: Example{Partition: a.parts[part].name, Offset: r.Offset,
			Value: r.Value, Process: o.Process, Ops: []int64{prev.op, o.Index},
			Detail: o.Process + " read " + r.Value + " (key " + key + ", " + a.parts[part].name + ") after " + a.valName(prev.val) +
				" (key " + key + ", " + a.parts[prev.part].name + "), which " + a.procs[s.proc].name + " sent later"}})
		return
	}
	if !ok || si > prev.rank {
		p.keySeen.put(id, keySeen{rank: si, val: s.val, part: part, op: o.Index})
	}
}
