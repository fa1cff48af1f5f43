package checker

import (
	"kafkasim/history"
)

// key-order: a reader sees one producer's records of a key in the order they
// were sent. Checked as the polls come in (addPoll), from each reader's
// latest record seen per key, not over the version order like the others.

type keyID struct{ producer, topic, key int32 }

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
	if p.keySeen == nil {
		p.keySeen = map[keyID]keySeen{}
	}
	id := keyID{producer: s.proc, topic: a.parts[part].topic, key: s.key}
	prev, ok := p.keySeen[id]
	if ok && si < prev.rank && part != prev.part {
		key := a.keys[s.key]
		a.findings = append(a.findings, Finding{Type: KeyOrder, Example: Example{Partition: a.parts[part].name, Offset: r.Offset,
			Value: r.Value, Process: o.Process, Ops: []int64{prev.op, o.Index},
			Detail: o.Process + " read " + r.Value + " (key " + key + ", " + a.parts[part].name + ") after " + a.valName(prev.val) +
				" (key " + key + ", " + a.parts[prev.part].name + "), which " + a.procs[s.proc].name + " sent later"}})
		return
	}
	if !ok || si > prev.rank {
		p.keySeen[id] = keySeen{rank: si, val: s.val, part: part, op: o.Index}
	}
}
