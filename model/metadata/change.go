package metadata

import "slices"

// Election is the kind of leader election a change may run.
type Election uint8

const (
	// ElectionOnline elects only from the ISR (or, when the ISR is empty,
	// the ELR), or the last known leader.
	ElectionOnline Election = iota
	// ElectionUnclean may also elect any live replica: data may be lost.
	ElectionUnclean
	// ElectionPreferred moves leadership to the preferred replica (the
	// first of the assignment) when it may lead, and otherwise keeps a
	// valid leader (Kafka's PartitionChangeBuilder.Election.PREFERRED,
	// electPreferredLeader): the controller's leader balancing and
	// ElectLeaders with ElectionType.PREFERRED. It never elects uncleanly
	// outside the ISR (only the last known leader, as ONLINE does).
	ElectionPreferred
)

// PreferredReplica is the first replica of the assignment, the one Kafka
// balances leadership back to (PartitionRegistration.preferredReplica).
func (p *Partition) PreferredReplica() int32 {
	if len(p.Replicas) == 0 {
		return NoLeader
	}
	return p.Replicas[0]
}

// HasPreferredLeader reports whether the preferred replica leads
// (PartitionRegistration.hasPreferredLeader): a leaderless partition has not.
func (p *Partition) HasPreferredLeader() bool {
	return p.Leader != NoLeader && p.Leader == p.PreferredReplica()
}

// ChangeBuilder computes the PartitionChange the controller writes for a
// partition, after Kafka's PartitionChangeBuilder (4.x): ELR upkeep, leader
// election, ISR and last-known-leader updates. Nothing is written when nothing
// changes.
type ChangeBuilder struct {
	p *Partition
	// Acceptable says whether a broker may lead now (registered, unfenced,
	// not shutting down, not the broker being removed).
	Acceptable func(int32) bool
	// ELREnabled is eligible.leader.replicas.enable.
	ELREnabled bool
	Election   Election
	MinISR     int // the topic's effective min.insync.replicas
	// TargetISR is the ISR wanted (nil: unchanged).
	TargetISR []int32
	// UncleanShutdown are replicas that restarted uncleanly: they leave
	// the ISR and the ELR.
	UncleanShutdown []int32
	// Recovered is set by a leader's AlterPartition once an uncleanly
	// elected leader has recovered (leaderRecoveryState RECOVERED).
	Recovered bool
	// TargetReplicas, TargetRemoving and TargetAdding start or change a
	// reassignment (nil: unchanged); see Reassignment.
	TargetReplicas []int32
	TargetRemoving []int32
	TargetAdding   []int32
}

// NewChangeBuilder starts a change of p.
func NewChangeBuilder(p *Partition, acceptable func(int32) bool, elr bool, election Election, minISR int) *ChangeBuilder {
	return &ChangeBuilder{p: p, Acceptable: acceptable, ELREnabled: elr, Election: election, MinISR: minISR}
}

// ElectionResult says who a change made leader and how.
type ElectionResult struct {
	Leader  int32
	Unclean bool
	FromELR bool
}

// Build returns the change record, or nil when nothing changes, and the
// election's outcome.
func (b *ChangeBuilder) Build() (*PartitionChange, ElectionResult) {
	p := b.p
	targetISR := p.ISR
	if b.TargetISR != nil {
		targetISR = b.TargetISR
	}
	targetISR = without(targetISR, b.UncleanShutdown)
	targetReplicas, targetRemoving, targetAdding := p.Replicas, p.RemovingReplicas, p.AddingReplicas
	if b.TargetReplicas != nil {
		targetReplicas = b.TargetReplicas
	}
	if b.TargetRemoving != nil {
		targetRemoving = b.TargetRemoving
	}
	if b.TargetAdding != nil {
		targetAdding = b.TargetAdding
	}
	// completeReassignmentIfNeeded: every change, whatever asked for it
	// (most often the leader's AlterPartition adding the last new
	// replica to the ISR), completes a reassignment whose target is in
	// sync.
	reassignment := Reassignment{Removing: targetRemoving, Adding: targetAdding, Replicas: targetReplicas}
	if replicas, isr, done := reassignment.MaybeComplete(targetISR); done {
		targetReplicas, targetISR, targetRemoving, targetAdding = replicas, isr, []int32{}, []int32{}
	}
	if len(targetISR) == 0 && !b.ELREnabled {
		// Without ELR the ISR never empties: its last member stays, so
		// that it (and only it) can lead again when it returns.
		targetISR = slices.Clone(p.ISR)
	}
	targetELR := slices.Clone(p.ELR)
	if b.ELREnabled {
		if len(targetISR) >= b.MinISR {
			targetELR = nil
		} else {
			// Replicas that left the ISR while it was below min ISR hold
			// everything committed (the high watermark stopped advancing):
			// they stay eligible, unless they restarted uncleanly.
			targetELR = sorted(without(union(p.ISR, p.ELR), union(targetISR, b.UncleanShutdown)))
			// A replica a completed reassignment removed is not
			// eligible: its log is being deleted. (Kafka's
			// maybePopulateTargetElr does not filter; its brokers
			// would never have the replica again to lead it.)
			targetELR = intersect(targetELR, targetReplicas)
		}
	} else {
		targetELR = nil
	}

	valid := func(r int32) bool {
		return (slices.Contains(targetISR, r) || (len(targetISR) == 0 && slices.Contains(targetELR, r))) && b.Acceptable(r)
	}
	res := ElectionResult{Leader: NoLeader}
	switch {
	case b.Election == ElectionPreferred:
		// electPreferredLeader: the preferred replica, else the current
		// leader if still valid, else any other valid replica, else the
		// last known leader.
		switch {
		case len(targetReplicas) > 0 && valid(targetReplicas[0]):
			res.Leader = targetReplicas[0]
		case p.Leader != NoLeader && valid(p.Leader):
			res.Leader = p.Leader
		default:
			for i, r := range targetReplicas {
				if i > 0 && valid(r) {
					res.Leader = r
					break
				}
			}
			if res.Leader == NoLeader && b.canElectLastKnownLeader(targetISR, targetELR) {
				res = ElectionResult{Leader: p.LastKnownELR[0], Unclean: true}
			}
		}
	case p.Leader != NoLeader && valid(p.Leader):
		res.Leader = p.Leader
	default:
		for _, r := range targetReplicas {
			if valid(r) {
				res.Leader = r
				break
			}
		}
		if res.Leader == NoLeader && b.canElectLastKnownLeader(targetISR, targetELR) {
			res = ElectionResult{Leader: p.LastKnownELR[0], Unclean: true}
		}
		if res.Leader == NoLeader && b.Election == ElectionUnclean {
			for _, r := range targetReplicas {
				if b.Acceptable(r) {
					res = ElectionResult{Leader: r, Unclean: true}
					break
				}
			}
		}
	}

	rec := &PartitionChange{Topic: p.Topic, Partition: p.Partition, Leader: NoLeaderChange}
	var recISR []int32
	isrSet := false
	if res.Leader != p.Leader {
		rec.Leader = res.Leader
		if res.Leader != NoLeader && slices.Contains(targetELR, res.Leader) && !slices.Contains(targetISR, res.Leader) {
			res.FromELR = true
			targetISR = []int32{res.Leader}
			targetELR = without(targetELR, []int32{res.Leader})
		} else if res.Unclean {
			recISR, isrSet = []int32{res.Leader}, true
			if !p.Recovering {
				t := true
				rec.Recovering = &t
			}
		}
	}
	// triggerLeaderEpochBumpForReplicaReassignmentIfNeeded: a replica
	// that leaves the assignment must not go on counting as a follower of
	// the current leader epoch, so the epoch moves even when the leader
	// stays.
	if rec.Leader == NoLeaderChange && !containsAll(targetReplicas, p.Replicas) {
		rec.Leader = p.Leader
	}
	// An unclean election forgets the ELR: whoever was eligible may now
	// hold data the new leader does not.
	if isrSet || !b.ELREnabled {
		targetELR = nil
	}
	if !slices.Equal(targetELR, p.ELR) && !(len(targetELR) == 0 && len(p.ELR) == 0) {
		elr := nonNil(targetELR)
		rec.ELR = &elr
	}
	if !isrSet && !slices.Equal(targetISR, p.ISR) {
		recISR, isrSet = nonNil(targetISR), true
	}
	if isrSet {
		rec.ISR = &recISR
	}
	b.updateLastKnownLeader(rec, recISR, isrSet)
	if b.Recovered && p.Recovering && rec.Recovering == nil {
		f := false
		rec.Recovering = &f
	}
	setAssignmentChanges(rec, p, targetReplicas, targetRemoving, targetAdding)
	if rec.Leader == NoLeaderChange && rec.ISR == nil && rec.ELR == nil && rec.LastKnownELR == nil && rec.Recovering == nil &&
		rec.Replicas == nil && rec.RemovingReplicas == nil && rec.AddingReplicas == nil {
		return nil, res
	}
	return rec, res
}

func (b *ChangeBuilder) canElectLastKnownLeader(targetISR, targetELR []int32) bool {
	p := b.p
	return b.ELREnabled && len(targetISR) == 0 && len(targetELR) == 0 && len(p.LastKnownELR) == 1 && b.Acceptable(p.LastKnownELR[0])
}

// OnlyUncleanlyElectable reports whether p has no leader and nobody an ONLINE
// or PREFERRED election may ever pick, whichever brokers come back: its ISR
// and ELR are empty and it has no single last known leader
// (electAnyLeader and electPreferredLeader look no further). Nothing but a
// leader adds to an ISR, and only ISR members enter the ELR, so p stays so
// until an UNCLEAN election: its topic's unclean.leader.election.enable, or
// an operator's ElectLeaders of type UNCLEAN.
func (p *Partition) OnlyUncleanlyElectable() bool {
	return p.Leader == NoLeader && len(p.ISR) == 0 && len(p.ELR) == 0 && len(p.LastKnownELR) != 1
}

// updateLastKnownLeader keeps the last known leader in LastKnownELR: set the
// first time the ISR empties, kept while the partition has no leader, cleared
// once it has one.
func (b *ChangeBuilder) updateLastKnownLeader(rec *PartitionChange, newISR []int32, isrSet bool) {
	if !b.ELREnabled {
		return
	}
	p := b.p
	if isrSet && len(newISR) == 0 && (len(p.LastKnownELR) != 1 || p.LastKnownELR[0] != p.Leader) && p.Leader != NoLeader {
		v := []int32{p.Leader}
		rec.LastKnownELR = &v
		return
	}
	willLead := rec.Leader >= 0 || (p.Leader != NoLeader && rec.Leader != NoLeader)
	if willLead && len(p.LastKnownELR) > 0 {
		v := []int32{}
		rec.LastKnownELR = &v
	}
}

// setAssignmentChanges writes the assignment and reassignment fields that
// differ from the partition's (PartitionChangeBuilder.setAssignmentChanges).
func setAssignmentChanges(rec *PartitionChange, p *Partition, replicas, removing, adding []int32) {
	if len(replicas) > 0 && !slices.Equal(replicas, p.Replicas) {
		v := slices.Clone(replicas)
		rec.Replicas = &v
	}
	if !slices.Equal(removing, p.RemovingReplicas) && !(len(removing) == 0 && len(p.RemovingReplicas) == 0) {
		v := nonNil(slices.Clone(removing))
		rec.RemovingReplicas = &v
	}
	if !slices.Equal(adding, p.AddingReplicas) && !(len(adding) == 0 && len(p.AddingReplicas) == 0) {
		v := nonNil(slices.Clone(adding))
		rec.AddingReplicas = &v
	}
}

func containsAll(xs, ys []int32) bool {
	for _, y := range ys {
		if !slices.Contains(xs, y) {
			return false
		}
	}
	return true
}

func intersect(xs, keep []int32) []int32 {
	var out []int32
	for _, x := range xs {
		if slices.Contains(keep, x) {
			out = append(out, x)
		}
	}
	return out
}

func without(xs, drop []int32) []int32 {
	var out []int32
	for _, x := range xs {
		if !slices.Contains(drop, x) {
			out = append(out, x)
		}
	}
	return out
}

func union(a, b []int32) []int32 {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

func sorted(xs []int32) []int32 {
	slices.Sort(xs)
	return xs
}

func nonNil(xs []int32) []int32 {
	if xs == nil {
		return []int32{}
	}
	return xs
}
