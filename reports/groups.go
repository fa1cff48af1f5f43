package reports

import (
	"sort"
	"strconv"
	"time"

	"kafkasim/history"
)

// Consumer groups as a history shows them (docs/history.md), so that a
// history recorded anywhere can be drawn: who owned each partition when
// (assign/revoke), the time a partition had no owner, the rebalances, the
// commits and the records processed.
//
// Ownership. An `assign` lists every partition its member owns after it: a
// partition listed starts (or continues) the member's tenure, one it owned
// and no longer lists ends it. A `revoke` ends the tenures of the
// partitions it lists. A process's `crash` or `restart` ends all of its
// tenures (a member that dies owns nothing, whatever the coordinator
// still believes until its session times out). An assign counts when it
// completes (the member owns the partitions once onPartitionsAssigned
// ran), a revoke when it is invoked (the member stops processing when
// onPartitionsRevoked begins).

// Ownership is one member's tenure of a partition: from the assign that
// gave it to the member until it was revoked, reassigned, or its process
// died.
type Ownership struct {
	Group     string
	Partition string // "orders-0"
	Process   string
	MemberID  string
	// Generation is the classic generation or KIP-848 member epoch of the
	// assign that began the tenure (-1: the history did not say). A member
	// that keeps a partition across a rebalance (cooperative, or KIP-848)
	// starts a new tenure at the new generation, with no gap.
	Generation int32
	From, To   time.Duration
	// Open: still owned when the history ended (To is its end).
	Open bool
}

// OwnerGap is time in which a partition a group had owned had no owner.
type OwnerGap struct {
	Group     string
	Partition string
	From, To  time.Duration
	// Generation is the generation or member epoch of the assign that
	// ended the gap: the rebalance it waited for (-1 when Open).
	Generation int32
	// Open: nobody owned the partition again before the history ended (To
	// is its end).
	Open bool
}

// Rebalance is a generation (or member epoch) of a group: first seen when
// a member's assign carried it.
type Rebalance struct {
	At         time.Duration
	Generation int32
	// Members is how many processes were assigned in it.
	Members int
}

// GroupActivity is one group in a history.
type GroupActivity struct {
	Group      string
	Partitions []string    // every partition a member owned, sorted
	Owners     []Ownership // by partition, then From
	Gaps       []OwnerGap  // by partition, then From
	Rebalances []Rebalance // by At
	// Commits completed ok, fail and info (indeterminate).
	CommitsOK, CommitsFailed, CommitsIndeterminate int
	// Processed counts the process operations completed ok; Reprocessed
	// those of a record the group had already processed.
	Processed, Reprocessed int
	// End is the end of the history: where open tenures and gaps end.
	End time.Duration
}

// Unowned is the total time each partition had no owner (its gaps,
// the open one included), by partition.
func (a *GroupActivity) Unowned() map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, g := range a.Gaps {
		out[g.Partition] += g.To - g.From
	}
	return out
}

// UnownedPerRebalance is the time without owner that each rebalance ended:
// per generation, the sum over partitions of the gaps its assigns closed,
// and the longest of them. Open gaps belong to no rebalance.
func (a *GroupActivity) UnownedPerRebalance() map[int32]struct{ Total, Longest time.Duration } {
	out := map[int32]struct{ Total, Longest time.Duration }{}
	for _, g := range a.Gaps {
		if g.Open {
			continue
		}
		v := out[g.Generation]
		v.Total += g.To - g.From
		v.Longest = max(v.Longest, g.To-g.From)
		out[g.Generation] = v
	}
	return out
}

// groupBuilder collects one group's activity in history order.
type groupBuilder struct {
	act *GroupActivity
	// open[process][partition] is the index in act.Owners of the
	// process's open tenure.
	open       map[string]map[string]int
	seenGen    map[int32]int // generation → index in act.Rebalances
	genMembers map[int32]map[string]bool
	done       map[string]*rangeSet // processed offsets per partition
}

// GroupActivities reads every group's activity from a history, groups
// sorted by name; nil when the history has no group operation.
func GroupActivities(h History) []GroupActivity {
	builders := map[string]*groupBuilder{}
	var names []string
	get := func(group string) *groupBuilder {
		b, ok := builders[group]
		if !ok {
			b = &groupBuilder{act: &GroupActivity{Group: group}, open: map[string]map[string]int{},
				seenGen: map[int32]int{}, genMembers: map[int32]map[string]bool{}, done: map[string]*rangeSet{}}
			builders[group] = b
			names = append(names, group)
		}
		return b
	}
	var end time.Duration
	h.EachHead(func(op *history.Op) {
		t := time.Duration(op.Time)
		end = max(end, t)
		switch op.F {
		case history.FCrash, history.FRestart:
			if op.Type == history.Invoke {
				for _, name := range names {
					builders[name].closeAll(op.Process, t)
				}
			}
			return
		case history.FAssign, history.FRevoke, history.FCommit, history.FProcess:
		default:
			return
		}
		x := op.Value.Ext
		if x == nil || x.Group == "" {
			return
		}
		b := get(x.Group)
		switch {
		case op.F == history.FAssign && op.Type == history.OK:
			b.assign(op.Process, x, t)
		case op.F == history.FRevoke && op.Type == history.Invoke:
			for _, p := range x.Partitions {
				b.close(op.Process, p, t)
			}
		case op.F == history.FCommit && op.Type != history.Invoke:
			switch op.Type {
			case history.OK:
				b.act.CommitsOK++
			case history.Fail:
				b.act.CommitsFailed++
			default:
				b.act.CommitsIndeterminate++
			}
		case op.F == history.FProcess && op.Type == history.OK && op.Value.Offset >= 0:
			b.act.Processed++
			tp := op.Value.Topic + "-" + strconv.Itoa(int(op.Value.Partition))
			s := b.done[tp]
			if s == nil {
				s = &rangeSet{}
				b.done[tp] = s
			}
			if !s.add(op.Value.Offset) {
				b.act.Reprocessed++
			}
		}
	})
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	out := make([]GroupActivity, 0, len(names))
	for _, name := range names {
		out = append(out, builders[name].finish(end))
	}
	return out
}

func (b *groupBuilder) assign(process string, x *history.Ext, t time.Duration) {
	owned := b.open[process]
	if owned == nil {
		owned = map[string]int{}
		b.open[process] = owned
	}
	listed := make(map[string]bool, len(x.Partitions))
	for _, p := range x.Partitions {
		listed[p] = true
	}
	var gone []string
	for p := range owned { // kafkasim:orderless: sorted below
		if !listed[p] {
			gone = append(gone, p)
		}
	}
	sort.Strings(gone)
	for _, p := range gone {
		b.close(process, p, t)
	}
	for _, p := range x.Partitions {
		if i, ok := owned[p]; ok {
			o := &b.act.Owners[i]
			if o.Generation == x.Generation && o.MemberID == x.MemberID {
				continue
			}
			b.close(process, p, t)
		}
		owned[p] = len(b.act.Owners)
		b.act.Owners = append(b.act.Owners, Ownership{Group: b.act.Group, Partition: p, Process: process,
			MemberID: x.MemberID, Generation: x.Generation, From: t})
	}
	if x.Generation >= 0 {
		if _, ok := b.seenGen[x.Generation]; !ok {
			b.seenGen[x.Generation] = len(b.act.Rebalances)
			b.act.Rebalances = append(b.act.Rebalances, Rebalance{At: t, Generation: x.Generation})
			b.genMembers[x.Generation] = map[string]bool{}
		}
		if m := b.genMembers[x.Generation]; !m[process] {
			m[process] = true
			b.act.Rebalances[b.seenGen[x.Generation]].Members++
		}
	}
}

// close ends the process's tenure of a partition, if it has one.
func (b *groupBuilder) close(process, partition string, t time.Duration) {
	owned := b.open[process]
	i, ok := owned[partition]
	if !ok {
		return
	}
	b.act.Owners[i].To = t
	delete(owned, partition)
}

func (b *groupBuilder) closeAll(process string, t time.Duration) {
	var ps []string
	for p := range b.open[process] { // kafkasim:orderless: closing order does not matter, each tenure ends at t
		ps = append(ps, p)
	}
	for _, p := range ps {
		b.close(process, p, t)
	}
}

// finish closes what is open at the end of the history and derives the
// gaps.
func (b *groupBuilder) finish(end time.Duration) GroupActivity {
	a := b.act
	a.End = end
	for _, owned := range b.open { // kafkasim:orderless: each open tenure is ended the same way
		for _, i := range owned {
			a.Owners[i].To, a.Owners[i].Open = end, true
		}
	}
	sort.SliceStable(a.Owners, func(i, j int) bool {
		if a.Owners[i].Partition != a.Owners[j].Partition {
			return lessPartition(a.Owners[i].Partition, a.Owners[j].Partition)
		}
		return a.Owners[i].From < a.Owners[j].From
	})
	sort.SliceStable(a.Rebalances, func(i, j int) bool { return a.Rebalances[i].At < a.Rebalances[j].At })
	for i := 0; i < len(a.Owners); {
		j := i
		for j < len(a.Owners) && a.Owners[j].Partition == a.Owners[i].Partition {
			j++
		}
		a.Partitions = append(a.Partitions, a.Owners[i].Partition)
		a.Gaps = append(a.Gaps, ownerGaps(a.Group, a.Owners[i:j], end)...)
		i = j
	}
	return *a
}

// ownerGaps are the stretches in which none of a partition's tenures
// (sorted by From) held it, from its first tenure to end.
func ownerGaps(group string, owners []Ownership, end time.Duration) []OwnerGap {
	if len(owners) == 0 {
		return nil
	}
	var gaps []OwnerGap
	cover := owners[0].To
	for _, o := range owners[1:] {
		if o.From > cover {
			gaps = append(gaps, OwnerGap{Group: group, Partition: o.Partition, From: cover, To: o.From, Generation: o.Generation})
		}
		cover = max(cover, o.To)
	}
	if cover < end {
		gaps = append(gaps, OwnerGap{Group: group, Partition: owners[0].Partition, From: cover, To: end, Generation: -1, Open: true})
	}
	return gaps
}

// rangeSet is a set of offsets kept as sorted disjoint ranges [lo, hi):
// records are processed mostly in order, so a partition's millions of
// processed offsets take a few ranges.
type rangeSet struct{ lo, hi []int64 }

// add inserts o and reports whether it was new.
func (s *rangeSet) add(o int64) bool {
	// i: the first range that ends after o.
	i := sort.Search(len(s.hi), func(k int) bool { return s.hi[k] > o })
	if i < len(s.lo) && s.lo[i] <= o {
		return false
	}
	joinsPrev := i > 0 && s.hi[i-1] == o
	joinsNext := i < len(s.lo) && s.lo[i] == o+1
	switch {
	case joinsPrev && joinsNext:
		s.hi[i-1] = s.hi[i]
		s.lo = append(s.lo[:i], s.lo[i+1:]...)
		s.hi = append(s.hi[:i], s.hi[i+1:]...)
	case joinsPrev:
		s.hi[i-1] = o + 1
	case joinsNext:
		s.lo[i] = o
	default:
		s.lo = append(s.lo, 0)
		s.hi = append(s.hi, 0)
		copy(s.lo[i+1:], s.lo[i:])
		copy(s.hi[i+1:], s.hi[i:])
		s.lo[i], s.hi[i] = o, o+1
	}
	return true
}
