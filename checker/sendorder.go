package checker

import (
	"kafkasim/history"
)

// nonmonotonic-send: a producer's acknowledged sends to one partition land
// at increasing offsets.

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
		k := key{s.proc, s.part()}
		if pi, ok := last[k]; ok {
			prev := &a.sends[pi]
			if a.offset(s) <= a.offset(prev) {
				a.findings = append(a.findings, Finding{Type: NonmonotonicSend, Example: Example{Partition: a.parts[s.part()].name, Offset: a.offset(s),
					Value: a.valName(s.val), Process: a.procs[s.proc].name, Ops: []int64{a.invoke(prev), a.complete(prev), a.invoke(s), a.complete(s)},
					Detail: a.valName(s.val) + " was sent after " + a.valName(prev.val) + " but landed at " + itoa(a.offset(s)) + ", not after " + itoa(a.offset(prev))},
					firstOfProducer: a.firstOfProducer(s), earlierCopyAt: a.copyBelow(prev.val, s)})
			}
		}
		last[k] = int32(i) // consecutive sends: one reordering is one finding
	}
}

// firstOfProducer reports whether no record of s's producer, acknowledged or
// read, lies below s in its partition: s's batch was the first of its
// producer that the partition's log held.
func (a *analyzer) firstOfProducer(s *sendRec) bool {
	for o := range a.parts[s.part()].all() {
		if o.off >= a.offset(s) {
			return true
		}
		if si := a.valSend[o.val]; si >= 0 && a.sends[si].proc == s.proc {
			return false
		}
	}
	return true
}

// copyBelow is the offset of a copy of value val, acknowledged or read, in
// s's partition below s's offset (-1: none): the record sent before s was
// written in send order, whatever later copy of it landed after s.
func (a *analyzer) copyBelow(val int32, s *sendRec) int64 {
	for o := range a.parts[s.part()].all() {
		if o.off >= a.offset(s) {
			break
		}
		if o.val == val {
			return o.off
		}
	}
	return -1
}
