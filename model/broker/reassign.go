package broker

import (
	"slices"

	"kafkasim/model/metadata"
)

// Replicas a reassignment adds and removes (KIP-455). A broker added to a
// partition's replicas creates the replica and follows the leader like any
// other (apply); the leader tracks it from the change that added it. A
// broker the completed reassignment removed stops the replica and deletes
// its log, as Kafka 4's ReplicaManager.applyDelta does with the partitions a
// metadata delta deletes from the broker (stopPartitions with
// deleteLocalLog).

// ReplicaDeleter is told of a replica whose log was deleted: what it held
// lives on in the partition's new replicas, it is not data lost. The audit
// implements it; a DataAuditor that does not is not told.
type ReplicaDeleter interface {
	ReplicaDeleted(broker int32, tp metadata.TopicPartition)
}

// deleteReplica stops p, no longer assigned to this broker, and deletes its
// log: a leader stops leading (its waiting writes fail with
// NOT_LEADER_OR_FOLLOWER, parked fetches wake to find it gone, a hosted
// coordinator resigns), a follower stops fetching, and the replica and its
// checkpoint entries are forgotten.
func (rm *replicaManager) deleteReplica(p *partition, reg *metadata.Partition) {
	rm.stopFetching(p)
	if p.isLeader {
		p.isLeader = false
		p.followers = nil
		p.touch()
		rm.completeWaiting(p)
		rm.leadershipChanged(p, reg.LeaderEpoch, false)
	}
	p.pending = nil
	rm.parts.remove(p.tp)
	if i := slices.Index(rm.order, p.tp); i >= 0 {
		rm.order = slices.Delete(rm.order, i, i+1)
	}
	rm.wakeParked(p.tp)
	name := p.tp.String()
	delete(rm.hwCkpt, name)
	delete(rm.startCkpt, name)
	delete(rm.recoveryCkpt, name)
	if p.log != nil {
		p.log.Delete()
	}
	rm.note("replica-deleted", "%s: no longer a replica (replicas %v): stopped and log deleted", p.tp, reg.Replicas)
	if d, ok := rm.audit().(ReplicaDeleter); ok {
		d.ReplicaDeleted(rm.id(), p.tp)
	}
}

// deleteStrayLogs removes, once the broker's metadata has caught up, the
// logs on its disk of partitions whose replicas no longer include it: a
// reassignment completed while it was down, or a power loss brought back
// files it had deleted (Kafka 3.7+ deletes such stray logs at startup,
// LogManager.isStrayKraftReplica).
func (rm *replicaManager) deleteStrayLogs() {
	disk := rm.n.env.Disk()
	for _, reg := range rm.image().Partitions() {
		if slices.Contains(reg.Replicas, rm.id()) {
			continue
		}
		files := disk.List(dataDir + "/" + reg.TopicPartition.String() + "/")
		if len(files) == 0 {
			continue
		}
		for _, f := range files {
			disk.Remove(f)
		}
		name := reg.TopicPartition.String()
		delete(rm.hwCkpt, name)
		delete(rm.startCkpt, name)
		delete(rm.recoveryCkpt, name)
		rm.note("replica-deleted", "%s: stray log deleted at startup (replicas %v)", reg.TopicPartition, reg.Replicas)
	}
}

// syncFollowerStates keeps a leader's follower states in step with the
// assignment: a replica a reassignment added gets a fresh state (position
// unknown, not caught up), one it removed is dropped.
func syncFollowerStates(followers []*followerState, replicas []int32, self int32) []*followerState {
	if len(followers) == len(replicas)-1 {
		same := true
		for _, f := range followers {
			if !slices.Contains(replicas, f.id) {
				same = false
				break
			}
		}
		if same {
			return followers // the usual case: the assignment did not change
		}
	}
	out := followers[:0:0]
	for _, r := range replicas {
		if r == self {
			continue
		}
		if f := followerOf(followers, r); f != nil {
			out = append(out, f)
			continue
		}
		out = append(out, &followerState{id: r, leo: -1, lastFetchLeaderLEO: -1, brokerEpoch: brokerEpochUnknown,
			lastCaughtUp: never, lastFetchTime: never})
	}
	return out
}
