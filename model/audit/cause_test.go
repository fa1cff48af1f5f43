package audit

import (
	"testing"
	"time"

	"kafkasim/model/metadata"
	"kafkasim/model/partlog"
	"kafkasim/model/record"
	"kafkasim/sim"
)

// causeWorld is three brokers' replicas of orders-0: broker 1 led epoch 0
// and committed a, b and c with broker 2 in sync; broker 3 fell out of sync
// after a and b (it holds a, and b when stale3b).
func causeWorld(t *testing.T, stale3b bool) (*Audit, []*partlog.Log, map[int32]bool) {
	t.Helper()
	third := []vb{{"a", 0}}
	if stale3b {
		third = append(third, vb{"b", 0})
	}
	return openedReplicas(t, 3, []vb{{"a", 0}, {"b", 0}, {"c", 0}}, []vb{{"a", 0}, {"b", 0}, {"c", 0}}, third)
}

// openedReplicas is brokers 1..3 holding the replicas of orders-0 given,
// each opened once, with broker 1 leading epoch 0 and its high watermark at
// hw. down lists brokers whose replica the god view cannot see (down, or
// not started yet).
func openedReplicas(t *testing.T, hw int64, first, second, third []vb) (*Audit, []*partlog.Log, map[int32]bool) {
	t.Helper()
	a, logs := replicaLogs(t, first, second, third)
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
	a.ReplicaHW(1, tpOrders, 0, true, hw, logs[0])
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

// Broker 1 leads epoch 0 alone and commits a, b and c; brokers 2 and 3
// fell out of sync after a. Broker 1 loses power, and broker 2 is elected
// uncleanly while broker 1 is down: whether the election lost data an
// in-sync copy kept is known when broker 1 opens its log again. The new
// leader commits d in its epoch first, at b's offset: broker 1's log then
// holds the older epoch's b where d now stands. Whether its recovery lost
// the data is judged against what the election lost, not against the log
// the new leader wrote since. Back with b, it kept what the election lost,
// which is blamed (durability sweep, flush.messages=1, seed 4: broker 3 came
// back with all but the last committed batch and the loss was blamed on
// the power loss, a violation); back without b, the power loss had taken
// the only in-sync copy, and the election only exposed it.
func TestReplicaBackAfterTheNewLeaderCommittedIsJudgedByWhatTheElectionLost(t *testing.T) {
	for _, keep := range []int64{1, 2} {
		a, logs, down := openedReplicas(t, 3, []vb{{"a", 0}, {"b", 0}, {"c", 0}}, []vb{{"a", 0}}, []vb{{"a", 0}})
		down[1] = true
		a.w.Crash(a.brokerNode(1), true)
		a.PartitionLeader(2, tpOrders, 1, logs[1], true)
		oneLoss(t, a, CauseUncleanElection, "")
		d := record.New([]record.Record{{Value: "d"}}, record.Producer{ID: record.NoProducer}, false, record.CompressionNone).Stamped(logs[1].LEO(), 1)
		if err := logs[1].Append([]*record.Batch{d}, true); err != nil {
			t.Fatal(err)
		}
		a.ReplicaHW(2, tpOrders, 1, true, 2, logs[1])
		logs[0].TruncateTo(keep)
		down[1] = false
		a.ReplicaRecovered(1, tpOrders, logs[0], partlog.Recovery{TruncatedAt: -1})
		if keep == 2 {
			oneLoss(t, a, CauseUncleanElection, "")
		} else {
			oneLoss(t, a, CausePowerLoss, CauseUncleanElection)
		}
	}
}

// A power loss takes from a replica only what was committed when it
// recovered. Broker 1 leads; broker 3 loses power while a and b are
// committed, comes back with a only, fetches b again and falls out of sync
// before c and d are committed (it is still short since its power loss: it
// has not rejoined the ISR). Broker 1, leading alone, loses power and comes
// back with c but not d (what the default flush policy had not written
// back); broker 3 was elected uncleanly meanwhile. Broker 3's power loss
// took nothing the election lost, and broker 1 kept c: the election is
// blamed. Back without c, broker 1's own power loss had taken every
// in-sync copy, and the election only exposed it.
func TestUncleanLeaderShortSinceAnOlderPowerLossIsNoRootCause(t *testing.T) {
	for _, keep := range []int64{2, 3} {
		a, logs, down := openedReplicas(t, 2, []vb{{"a", 0}, {"b", 0}, {"c", 0}, {"d", 0}}, []vb{{"a", 0}}, []vb{{"a", 0}, {"b", 0}})
		b := logs[2].BatchAt(1)
		powerLoss(a, logs, 3, 1)
		if err := logs[2].Append([]*record.Batch{b}, false); err != nil {
			t.Fatal(err)
		}
		a.ReplicaHW(1, tpOrders, 0, true, 4, logs[0])
		down[1] = true
		a.w.Crash(a.brokerNode(1), true)
		a.PartitionLeader(3, tpOrders, 1, logs[2], true)
		logs[0].TruncateTo(keep)
		down[1] = false
		a.ReplicaRecovered(1, tpOrders, logs[0], partlog.Recovery{TruncatedAt: -1})
		cause, exposedBy := CauseUncleanElection, ""
		if keep == 2 {
			cause, exposedBy = CausePowerLoss, CauseUncleanElection
		}
		expect(t, a, CommittedDataKept, 0)
		if ls := a.Losses(); len(ls) != 1 || ls[0].From != 2 || ls[0].To != 4 || ls[0].Cause != cause || ls[0].ExposedBy != exposedBy {
			t.Fatalf("broker 1 back with %d batches: losses %+v, want offsets 2..3 lost to %s (exposed by %q)", keep, ls, cause, exposedBy)
		}
	}
}

// Brokers 1 and 2, in sync, hold a, b and c; broker 3 fell out of sync
// after a and has written nothing since. Both in-sync disks are wiped;
// broker 3 loses power, but its log was all on disk: it comes back as it
// was, and is elected uncleanly. The wipes took every in-sync copy, the
// election only exposed it; broker 3's power loss took nothing (fuzz seed
// 204908, flush.messages=1: blamed on that power loss, a violation). The
// wiped replicas come back before the election (the loss is judged at it)
// or after (judged when they open their logs).
func TestElectionOfAnOutOfSyncReplicaAfterWipesOfEveryInSyncCopyBlamesTheWipes(t *testing.T) {
	for _, backBefore := range []bool{false, true} {
		a, logs, down := openedReplicas(t, 3, []vb{{"a", 0}, {"b", 0}, {"c", 0}}, []vb{{"a", 0}, {"b", 0}, {"c", 0}}, []vb{{"a", 0}})
		a.w.RunFor(time.Minute) // written back: nothing of the logs is in page cache only
		wipeBack := func() {
			for b := int32(1); b <= 2; b++ {
				logs[b-1].TruncateTo(0)
				down[b] = false
				a.ReplicaRecovered(b, tpOrders, logs[b-1], partlog.Recovery{TruncatedAt: -1})
			}
		}
		for b := int32(1); b <= 2; b++ {
			down[b] = true
			if err := a.w.InjectFault(sim.Fault{Kind: sim.FaultDisk, Disk: sim.DiskWipe, Target: "broker-" + string(rune('0'+b))}); err != nil {
				t.Fatal(err)
			}
		}
		if backBefore {
			wipeBack()
		}
		a.w.Crash(a.brokerNode(3), true)
		a.ReplicaRecovered(3, tpOrders, logs[2], partlog.Recovery{TruncatedAt: -1})
		a.PartitionLeader(3, tpOrders, 1, logs[2], true)
		if !backBefore {
			wipeBack()
		}
		oneLoss(t, a, CauseDiskWipe, CauseUncleanElection)
	}
}
