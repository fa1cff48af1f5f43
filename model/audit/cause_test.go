package audit

import (
	"testing"

	"kafkasim/model/metadata"
	"kafkasim/model/partlog"
)

// causeWorld is three brokers' replicas of orders-0: broker 1 led epoch 0
// and committed a, b and c with broker 2 in sync; broker 3 fell out of sync
// after a and b (it holds a, and b when stale3b). Every replica has opened
// its log once. down lists brokers whose replica the god view cannot see
// (down, or not started yet).
func causeWorld(t *testing.T, stale3b bool) (*Audit, []*partlog.Log, map[int32]bool) {
	t.Helper()
	third := []vb{{"a", 0}}
	if stale3b {
		third = append(third, vb{"b", 0})
	}
	a, logs := replicaLogs(t, []vb{{"a", 0}, {"b", 0}, {"c", 0}}, []vb{{"a", 0}, {"b", 0}, {"c", 0}}, third)
	down := map[int32]bool{}
	a.SetReplicas(func(broker int32, _ metadata.TopicPartition) *partlog.Log {
		if down[broker] {
			return nil
		}
		return logs[broker-1]
	})
	for b := int32(1); b <= 3; b++ {
		a.ReplicaRecovered(b, tpOrders, logs[b-1], partlog.Recovery{TruncatedAt: -1})
	}
	a.ReplicaHW(1, tpOrders, 0, true, 3, logs[0])
	return a, logs, down
}

var tpOrders = metadata.TopicPartition{Topic: "orders", Partition: 0}

// powerLoss takes broker's page cache: its replica comes back holding its
// first keep batches.
func powerLoss(a *Audit, logs []*partlog.Log, broker int32, keep int64) {
	a.w.Crash(a.brokerNode(broker), true)
	logs[broker-1].TruncateTo(keep)
	a.ReplicaRecovered(broker, tpOrders, logs[broker-1], partlog.Recovery{TruncatedAt: -1})
}

func oneLoss(t *testing.T, a *Audit, cause, exposedBy string) {
	t.Helper()
	expect(t, a, CommittedDataKept, 0)
	ls := a.Losses()
	if len(ls) != 1 || ls[0].From != 1 || ls[0].To != 3 || ls[0].Cause != cause || ls[0].ExposedBy != exposedBy {
		t.Fatalf("losses %+v, want offsets 1..2 lost to %s (exposed by %q)", ls, cause, exposedBy)
	}
}

// Both in-sync replicas lose power before b and c reach disk; the partition
// has no ISR or ELR member left, and Kafka elects the last known leader
// (marked unclean). The power loss took every in-sync copy: the election
// only exposed it. A replica that fell out of sync earlier may hold some of
// the lost batches (stale3b), but no clean election would have chosen it.
func TestElectionAfterPowerLossOfEveryInSyncCopyBlamesThePowerLoss(t *testing.T) {
	for _, stale3b := range []bool{false, true} {
		a, logs, _ := causeWorld(t, stale3b)
		powerLoss(a, logs, 1, 1)
		powerLoss(a, logs, 2, 1)
		a.PartitionLeader(2, tpOrders, 1, logs[1], true)
		oneLoss(t, a, CausePowerLoss, CauseUncleanElection)
	}
}

// An out-of-sync replica that also lost power is elected uncleanly while the
// in-sync leader, up, still holds b and c: the election lost them.
func TestUncleanElectionPastAnInSyncCopyBlamesTheElection(t *testing.T) {
	a, logs, _ := causeWorld(t, false)
	powerLoss(a, logs, 3, 1)
	a.PartitionLeader(3, tpOrders, 1, logs[2], true)
	oneLoss(t, a, CauseUncleanElection, "")
}

// An in-sync replica that is down when the election happens may hold the
// data on disk: the election is blamed until it comes back. Killed, it comes
// back with its page cache and the data; after a power loss that took the
// data, the power loss is blamed, and the election only exposed it.
func TestElectionWhileAnInSyncReplicaIsDownIsSettledWhenItReturns(t *testing.T) {
	for _, lostPower := range []bool{false, true} {
		a, logs, down := causeWorld(t, false)
		powerLoss(a, logs, 2, 1)
		down[1] = true
		a.w.Crash(a.brokerNode(1), lostPower)
		a.PartitionLeader(2, tpOrders, 1, logs[1], true)
		oneLoss(t, a, CauseUncleanElection, "")
		if lostPower {
			logs[0].TruncateTo(1)
		}
		down[1] = false
		a.ReplicaRecovered(1, tpOrders, logs[0], partlog.Recovery{TruncatedAt: -1})
		if lostPower {
			oneLoss(t, a, CausePowerLoss, CauseUncleanElection)
		} else {
			oneLoss(t, a, CauseUncleanElection, "")
		}
	}
}
