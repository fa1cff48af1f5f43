package audit

import (
	"kafkasim/godview"
	"kafkasim/model/proto"
)

// LastGroupCommit is the latest acknowledged commit of tp by a member of
// group (its offset), and the god view's first loss of committed data on
// the group's __consumer_offsets partition (part) after that commit was
// acknowledged that took the commit's record, so that the coordinator
// loading the partition since holds an older offset. lostAfter is false
// when no such loss came after the commit; ok is false when no commit of
// tp was acknowledged.
func (a *Audit) LastGroupCommit(group string, tp proto.TopicPartition, part int32) (offset int64, loss godview.Fact, lostAfter, ok bool) {
	if a.groups == nil {
		return 0, godview.Fact{}, false, false
	}
	g, found := a.groups.byGroup[group]
	if !found {
		return 0, godview.Fact{}, false, false
	}
	mark, found := g.commits[tp]
	if !found {
		return 0, godview.Fact{}, false, false
	}
	loss, lostAfter = lossAfter(a.facts, mark.losses, offsetsPartition(part), mark.record)
	return mark.offset, loss, lostAfter, true
}

// lossAfter is the first loss of partition's offset among facts after the
// first `seen` losses (those the god view had seen when a commit was
// acknowledged).
func lossAfter(facts []godview.Fact, seen int, partition string, offset int64) (godview.Fact, bool) {
	n := 0
	for _, f := range facts {
		if f.Kind != godview.Loss {
			continue
		}
		n++
		if n > seen && f.Covers(partition, offset) {
			return f, true
		}
	}
	return godview.Fact{}, false
}
