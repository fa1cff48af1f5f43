package audit

import (
	"slices"
	"testing"

	"kafkasim/godview"
	"kafkasim/model/metadata"
	"kafkasim/model/partlog"
	"kafkasim/model/record"
	"kafkasim/model/storage"
	"kafkasim/sim"
)

type diskNode struct {
	env  sim.Env
	gate *storage.Gate
}

func (n *diskNode) Start(env sim.Env)               { n.env, n.gate = env, storage.NewGate(env) }
func (n *diskNode) Deliver(sim.NodeID, sim.Message) {}
func (n *diskNode) Fire(t sim.Timer)                { n.gate.Fire(t) }

// replicaLogs builds a world of brokers 1 and 2, each with a log of orders-0
// holding one single-record batch per value, of the given leader epochs.
func replicaLogs(t *testing.T, logs ...[]struct {
	v     string
	epoch int32
}) (*Audit, []*partlog.Log) {
	t.Helper()
	return replicaLogsWith(t, partlog.DefaultConfig(), logs...)
}

// replicaLogsWith is replicaLogs with a log configuration.
func replicaLogsWith(t *testing.T, cfg partlog.Config, logs ...[]struct {
	v     string
	epoch int32
}) (*Audit, []*partlog.Log) {
	t.Helper()
	w := sim.NewWorld(sim.DefaultOptions(1))
	nodes := make([]*diskNode, len(logs))
	for i := range logs {
		i := i
		w.AddNode(sim.NodeSpec{Name: "broker-" + string(rune('1'+i)), Role: "broker", New: func() sim.Node { nodes[i] = &diskNode{}; return nodes[i] }})
	}
	w.Start()
	w.RunUntil(0)
	var out []*partlog.Log
	for i, batches := range logs {
		l, _ := partlog.Open(nodes[i].env.Disk(), nodes[i].gate, "data/orders-0", cfg, partlog.Checkpoints{})
		for _, b := range batches {
			rb := record.New([]record.Record{{Value: b.v}}, record.Producer{ID: record.NoProducer}, false, record.CompressionNone).Stamped(l.LEO(), b.epoch)
			if err := l.Append([]*record.Batch{rb}, true); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, l)
	}
	return New(w), out
}

type vb = struct {
	v     string
	epoch int32
}

// An unclean leader that holds an older epoch's divergent tail (writes it
// took as a deposed leader, never committed) in place of committed batches
// below its log end: the committed batches are lost to the unclean
// election, from where it diverges, not from its log end (fuzz seed 204388).
func TestUncleanLeaderWithDivergentTailLosesFromTheDivergence(t *testing.T) {
	tp := metadata.TopicPartition{Topic: "orders", Partition: 0}
	for _, unclean := range []bool{true, false} {
		a, logs := replicaLogs(t,
			[]vb{{"a", 0}, {"b", 0}, {"x", 1}},           // broker 1 led epoch 1 and committed x at 2
			[]vb{{"a", 0}, {"b", 0}, {"y", 0}, {"z", 0}}) // broker 2, deposed in epoch 0, took y and z
		a.ReplicaHW(1, tp, 1, true, 3, logs[0])
		a.PartitionLeader(2, tp, 2, logs[1], unclean)
		if !unclean {
			expect(t, a, CommittedDataKept, 1)
			continue
		}
		expect(t, a, CommittedDataKept, 0)
		ls := a.Losses()
		if len(ls) != 1 || ls[0].From != 2 || ls[0].To != 3 || ls[0].Cause != "unclean-election" || ls[0].LeaderEnd != 4 {
			t.Fatalf("losses %+v, want offset 2 lost to the unclean election with the leader ending at 4", ls)
		}
	}
}

// A replica whose recovery after a power loss brought back an older epoch's
// batch in place of a committed one (the truncation that removed it never
// reached disk), elected cleanly as the only ISR member: the committed data
// is lost to the power loss from where its log stops agreeing, below its log
// end (fuzz seed 602490). After a restart that lost nothing (killed, page
// cache kept) the tail is what the broker held before, and a committed batch
// another broker then truncates is a violation, not a power loss.
func TestRecoveredOlderEpochTailIsPowerLossOnlyAfterOne(t *testing.T) {
	tp := metadata.TopicPartition{Topic: "orders", Partition: 0}
	for _, powerLoss := range []bool{true, false} {
		a, logs := replicaLogs(t,
			[]vb{{"a", 0}, {"b", 0}, {"x", 1}}, // broker 1 led epoch 1 and committed x at 2
			[]vb{{"a", 0}, {"b", 0}, {"y", 0}}) // broker 2: y, taken in epoch 0, truncated in page cache only
		a.ReplicaHW(1, tp, 1, true, 3, logs[0])
		a.w.Crash(a.brokerNode(2), powerLoss)
		a.ReplicaRecovered(2, tp, logs[1], partlog.Recovery{TruncatedAt: -1})
		if !powerLoss {
			a.ReplicaTruncated(1, tp, 2, logs[0].Batches(2), "a truncation nothing permits")
			expect(t, a, CommittedDataKept, 1)
			if ls := a.Losses(); len(ls) != 0 {
				t.Fatalf("losses %+v: nothing lost page cache, so nothing may be excused", ls)
			}
			continue
		}
		a.PartitionLeader(2, tp, 2, logs[1], false)
		expect(t, a, CommittedDataKept, 0)
		ls := a.Losses()
		if len(ls) != 1 || ls[0].From != 2 || ls[0].To != 3 || ls[0].Cause != "power-loss" || ls[0].LeaderEnd != 3 {
			t.Fatalf("losses %+v, want offset 2 lost to the power loss with the leader ending at 3", ls)
		}
	}
}

// A leader deposed by an unclean election that has not learned it yet
// acknowledges, with the ISR it still knows, a write its followers no longer
// hold (they truncated to the unclean leader's log; fetches that waited at the
// deposed leader moved its high watermark). The write is lost with the
// election, which the topic permits: no ISR owes it, neither the new epoch's
// nor the stale one (fuzz seed 601822). Without an unclean election the same
// acknowledgement breaks acked-on-every-isr-member.
func TestDeposedLeaderAckAfterUncleanElectionIsOwedByNoISR(t *testing.T) {
	tp := metadata.TopicPartition{Topic: "orders", Partition: 0}
	for _, unclean := range []bool{true, false} {
		a, logs := replicaLogs(t,
			[]vb{{"a", 0}, {"b", 0}, {"y", 0}}, // broker 1 led epoch 0; y is the write it acknowledges late
			[]vb{{"a", 0}})                     // broker 2 holds what the new epoch's log holds
		a.SetReplicas(func(broker int32, _ metadata.TopicPartition) *partlog.Log { return logs[broker-1] })
		a.ReplicaHW(1, tp, 0, true, 2, logs[0]) // a and b committed in epoch 0
		if unclean {
			a.PartitionLeader(2, tp, 1, logs[1], true) // broker 2 elected uncleanly: b lost from offset 1
		}
		a.AckedAll(1, tp, 0, 2, []int32{1, 2}, 1) // the deposed leader acknowledges y at 2
		if unclean {
			expect(t, a, AckedOnEveryISRMember, 0)
			continue
		}
		expect(t, a, AckedOnEveryISRMember, 1)
	}
}

// A leader deposed by an unclean election commits, with the stale ISR it
// still knows, writes of its epoch where the unclean leader's log holds an
// older epoch's never-committed tail. The deposed leader truncates, when it
// learns the new epoch, to where its epochs stop agreeing with the new
// leader's (Kafka's follower on the leader's OffsetsForLeaderEpoch answer,
// KIP-279), below the new leader's log end: what it exposed from there is
// lost with the election, not only what lies past that log end (fuzz seed
// 252014). Where its log holds the new leader's older-epoch tail too, only
// what follows that tail is lost.
func TestDeposedLeaderExposedLossStartsWhereItsEpochsDiverge(t *testing.T) {
	tp := metadata.TopicPartition{Topic: "orders", Partition: 0}
	for _, tc := range []struct {
		name     string
		deposed  []vb
		from, to int64
	}{
		{"its epoch starts below the unclean leader's log end", []vb{{"a", 0}, {"b", 0}, {"x", 1}, {"w", 1}}, 2, 4},
		{"it holds the unclean leader's tail", []vb{{"a", 0}, {"b", 0}, {"y", 0}, {"z", 0}, {"w", 1}}, 4, 5},
	} {
		a, logs := replicaLogs(t,
			[]vb{{"a", 0}, {"b", 0}, {"y", 0}, {"z", 0}}, // broker 1 led epoch 0; y and z never committed
			tc.deposed) // broker 2 leads epoch 1
		a.SetReplicas(func(broker int32, _ metadata.TopicPartition) *partlog.Log { return logs[broker-1] })
		a.ReplicaHW(1, tp, 0, true, 2, logs[0])     // a and b committed in epoch 0
		a.PartitionLeader(2, tp, 1, logs[1], false) // broker 2 leads epoch 1 cleanly
		a.PartitionLeader(1, tp, 2, logs[0], true)  // broker 1 elected uncleanly: its log ends at 4
		hw := logs[1].LEO()
		a.ReplicaHW(2, tp, 1, true, hw, logs[1]) // the deposed leader commits its epoch's writes
		expect(t, a, CommittedDataKept, 0)
		expect(t, a, PartitionReplicasAgree, 0)
		ls := a.Losses()
		if len(ls) != 1 || ls[0].From != tc.from || ls[0].To != tc.to || ls[0].Records != int(tc.to-tc.from) || ls[0].Cause != CauseUncleanElection {
			t.Fatalf("%s: losses %+v, want offsets %d..%d lost to the unclean election", tc.name, ls, tc.from, tc.to-1)
		}
		// Its acknowledgement of a write there is owed by no ISR.
		a.AckedAll(2, tp, 1, tc.from, []int32{2, 1}, 1)
		expect(t, a, AckedOnEveryISRMember, 0)
	}
}

func TestEpochsAgreeUpTo(t *testing.T) {
	e := func(pairs ...int64) []partlog.EpochEntry {
		var out []partlog.EpochEntry
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, partlog.EpochEntry{Epoch: int32(pairs[i]), StartOffset: pairs[i+1]})
		}
		return out
	}
	for _, tc := range []struct {
		a    []partlog.EpochEntry
		aEnd int64
		b    []partlog.EpochEntry
		bEnd int64
		want int64
	}{
		{e(0, 0), 63, e(0, 0, 1, 56), 65, 56},               // fuzz seed 252014
		{e(0, 0, 2, 63), 63, e(0, 0, 1, 56), 65, 56},        // the unclean leader's new epoch at its end
		{e(0, 0), 63, e(0, 0), 60, 60},                      // one epoch: the shorter log's end
		{e(0, 0, 3, 10), 20, e(0, 0, 3, 10, 4, 15), 30, 15}, // the same epochs, then another
		{e(0, 0, 3, 10), 20, e(0, 0, 3, 12), 30, 10},        // epoch 3 starts elsewhere: the logs differ from 10
		{e(3, 40), 50, e(0, 0, 3, 10), 60, 50},              // retention deleted the start of one
		{nil, 0, e(0, 0), 5, 0},
	} {
		if got := epochsAgreeUpTo(tc.a, tc.aEnd, tc.b, tc.bEnd); got != tc.want {
			t.Errorf("epochsAgreeUpTo(%v, %d, %v, %d) = %d, want %d", tc.a, tc.aEnd, tc.b, tc.bEnd, got, tc.want)
		}
	}
}

// Two unclean elections: epoch 1's loss begins at offset 1; epoch 2, clean,
// commits up to 3; epoch 3's unclean leader holds all of that (its loss
// begins at 4). Epoch 2's leader acknowledging offset 3, which member 2
// lacks, is deposed by epoch 3's election but not lost with it: the
// exemption goes by each election's own loss, not the earliest one.
func TestDeposedLeaderAckBelowTheLaterElectionsLossIsChecked(t *testing.T) {
	tp := metadata.TopicPartition{Topic: "orders", Partition: 0}
	for _, second := range []bool{false, true} {
		a, logs := replicaLogs(t,
			[]vb{{"a", 0}, {"b", 2}, {"c", 2}, {"d", 2}}, // broker 1, leader of epoch 2
			[]vb{{"a", 0}, {"b", 2}, {"c", 2}},           // broker 2 lacks d
			[]vb{{"a", 0}, {"b", 2}, {"c", 2}, {"d", 2}}, // broker 3, unclean leader of epoch 3
			[]vb{{"a", 0}}) // broker 4, unclean leader of epoch 1
		a.SetReplicas(func(broker int32, _ metadata.TopicPartition) *partlog.Log { return logs[broker-1] })
		a.ReplicaHW(1, tp, 0, true, 1, logs[0])
		a.PartitionLeader(4, tp, 1, logs[3], true) // loss from 1
		a.PartitionLeader(1, tp, 2, logs[0], false)
		a.ReplicaHW(1, tp, 2, true, 3, logs[0])
		if second {
			a.PartitionLeader(3, tp, 3, logs[2], true) // loss from 4: nothing committed lost
		}
		a.AckedAll(1, tp, 2, 3, []int32{1, 2}, 1)
		expect(t, a, AckedOnEveryISRMember, 1)
	}
}

// Retention deletes old segments on each broker on its own schedule: a
// committed batch below a replica's log start is deleted, as Kafka permits,
// not lost — neither when that replica is elected leader nor when it joins
// the ISR (fuzz --base retention-slow-consumer, seed 3).
func TestBatchesBelowTheLogStartWereDeletedNotLost(t *testing.T) {
	tp := metadata.TopicPartition{Topic: "orders", Partition: 0}
	cfg := partlog.DefaultConfig()
	cfg.SegmentBytes = 1 // a segment per batch
	a, logs := replicaLogsWith(t, cfg,
		[]vb{{"a", 0}, {"b", 0}, {"c", 0}, {"d", 0}},
		[]vb{{"a", 0}, {"b", 0}, {"c", 0}, {"d", 0}})
	a.SetReplicas(func(b int32, _ metadata.TopicPartition) *partlog.Log { return logs[b-1] })
	a.ReplicaHW(1, tp, 0, true, 4, logs[0])
	a.AckedAll(1, tp, 0, 3, []int32{1}, 1)
	// Broker 2's retention ran: its first two segments are gone.
	logs[1].MaybeIncrementLogStartOffset(2)
	logs[1].DeleteOldSegments(4, 0)
	if logs[1].LogStartOffset() != 2 || logs[1].BatchAt(0) != nil {
		t.Fatalf("broker 2's log starts at %d and still holds offset 0", logs[1].LogStartOffset())
	}
	a.ISRJoined(1, tp, 0, 2)
	expect(t, a, AckedOnEveryISRMember, 0)
	a.PartitionLeader(2, tp, 1, logs[1], false)
	expect(t, a, CommittedDataKept, 0)
	if len(a.Losses()) != 0 {
		t.Fatalf("losses %+v", a.Losses())
	}
	// What broker 2 lacks above its log start is lost as ever.
	logs[1].TruncateTo(3)
	a.PartitionLeader(2, tp, 2, logs[1], false)
	expect(t, a, CommittedDataKept, 1)
}

// In a compacted topic the cleaner removes batches whose records all have
// later ones of the same key: a gap inside a replica's log is not a loss —
// not when that replica leads, joins the ISR, or acknowledges (fuzz seeds
// 69, 198, 598 with compaction drawn). Past the log's end it still is.
func TestCompactionGapsAreNotLosses(t *testing.T) {
	tp := metadata.TopicPartition{Topic: "orders", Partition: 0}
	cfg := partlog.DefaultConfig()
	cfg.Compact = true
	a, logs := replicaLogsWith(t, cfg,
		[]vb{{"a", 0}, {"b", 0}, {"c", 0}, {"d", 0}},
		[]vb{{"a", 0}, {"b", 0}, {"c", 0}, {"d", 0}})
	a.SetReplicas(func(b int32, _ metadata.TopicPartition) *partlog.Log { return logs[b-1] })
	a.ReplicaHW(1, tp, 0, true, 4, logs[0])
	// Broker 2's copy as its cleaner left it: offsets 1 and 2 gone.
	kept := []*record.Batch{logs[1].BatchAt(0), logs[1].BatchAt(3)}
	logs[1].TruncateTo(0)
	if err := logs[1].Append(kept, false); err != nil {
		t.Fatal(err)
	}
	if logs[1].BatchAt(1) != nil || logs[1].LEO() != 4 {
		t.Fatalf("broker 2's log: end %d, offset 1 %v", logs[1].LEO(), logs[1].BatchAt(1))
	}
	a.AckedAll(1, tp, 0, 3, []int32{1, 2}, 2)
	a.AckedAll(1, tp, 0, 1, []int32{1, 2}, 2) // a retry answered with its old offset, now cleaned
	a.ISRJoined(1, tp, 0, 2)
	a.PartitionLeader(2, tp, 1, logs[1], false)
	expect(t, a, AckedOnEveryISRMember, 0)
	expect(t, a, CommittedDataKept, 0)
	// A follower of a compacted topic told to truncate below an epoch its
	// leader's cleaner erased drops committed batches and copies back
	// what the leader kept (fuzz seed 1000446): not a loss the audit can
	// tell from the batches.
	a.ReplicaTruncated(2, tp, 1, logs[1].Batches(1), "diverging epoch")
	expect(t, a, CommittedDataKept, 0)
	// A compacted log that ends early lost what lies past its end.
	logs[1].TruncateTo(3)
	a.PartitionLeader(2, tp, 2, logs[1], false)
	expect(t, a, CommittedDataKept, 1)
}

// A follower copies an epoch only from its first batch the cleaner left, so
// its cache starts that epoch late; as leader it tells a replica holding an
// older epoch's batch in the gap that the older epoch ends later, and KIP-101
// cannot find the divergence (fuzz seed 3009859). The stale batch below the
// high watermark is hidden from the leader, not a broken invariant; where the
// leader still holds a batch, it could have told, and the audit reports it.
func TestStaleBatchInACleanedEpochStart(t *testing.T) {
	tp := metadata.TopicPartition{Topic: "orders", Partition: 0}
	cfg := partlog.DefaultConfig()
	cfg.Compact = true
	for _, gap := range []bool{true, false} {
		a, logs := replicaLogsWith(t, cfg,
			[]vb{{"a", 0}, {"b", 0}, {"x", 1}, {"y", 1}}, // broker 1 led epoch 1 from 2
			[]vb{{"a", 0}, {"b", 0}, {"x", 1}, {"y", 1}}, // broker 2 copied it
			[]vb{{"a", 0}, {"b", 0}, {"z", 0}})           // broker 3, deposed in epoch 0, took z
		a.SetReplicas(func(b int32, _ metadata.TopicPartition) *partlog.Log { return logs[b-1] })
		a.ReplicaHW(1, tp, 1, true, 4, logs[0])
		if gap {
			// Broker 2 copied epoch 1 after broker 1's cleaner removed x.
			kept := []*record.Batch{logs[1].BatchAt(0), logs[1].BatchAt(1), logs[1].BatchAt(3)}
			logs[1].TruncateTo(0)
			if err := logs[1].Append(kept, false); err != nil {
				t.Fatal(err)
			}
			if e, end := logs[1].Epochs().EndOffsetFor(0, logs[1].LEO()); e != 0 || end != 3 {
				t.Fatalf("broker 2 says epoch 0 ends at %d (epoch %d), want 3", end, e)
			}
		}
		a.partLeaders[epochLeader{epoch: 2, tp: tp}] = 2
		// Broker 3 follows broker 2 in epoch 2 and copies y after z.
		if err := logs[2].Append([]*record.Batch{logs[0].BatchAt(3)}, false); err != nil {
			t.Fatal(err)
		}
		a.ReplicaHW(3, tp, 2, false, 4, logs[2])
		want := 0
		if !gap {
			want = 1
		}
		expect(t, a, PartitionReplicasAgree, want)
	}
}

// idem is a batch of producer 7, epoch 0, from sequence seq, of values v.
func idem(seq int32, v ...string) *record.Batch {
	rs := make([]record.Record, len(v))
	for i := range v {
		rs[i] = record.Record{Value: v[i]}
	}
	return record.New(rs, record.Producer{ID: 7, Epoch: 0, BaseSequence: seq}, false, record.CompressionNone)
}

// factsOf are the audit's facts of kind, in order.
func factsOf(a *Audit, kind godview.Kind) []godview.Fact {
	return godview.Seen(a.Facts()...).Of(kind)
}

// idempotentLog is orders-0 on one replica: "a" of no producer at offset 0,
// then producer 7's sequences 0–1 ("b", "c") at offsets 1–2 and sequence 2
// ("d") at offset 3, none committed yet.
func idempotentLog(t *testing.T) (*Audit, *partlog.Log, metadata.TopicPartition) {
	t.Helper()
	a, logs := replicaLogs(t, []vb{{"a", 0}})
	l := logs[0]
	if err := l.Append([]*record.Batch{idem(0, "b", "c").Stamped(l.LEO(), 0), idem(2, "d").Stamped(l.LEO()+2, 0)}, true); err != nil {
		t.Fatal(err)
	}
	return a, l, metadata.TopicPartition{Topic: "orders", Partition: 0}
}

// A leader that answers OUT_OF_ORDER_SEQUENCE_NUMBER to the retry of a
// committed idempotent batch forgot it (its producer state was rebuilt at a
// restart): the audit records that batch, and only a retry of a committed
// batch (same producer id, epoch and sequences) counts.
func TestOutOfOrderRetryOfACommittedBatchIsRecorded(t *testing.T) {
	a, l, tp := idempotentLog(t)
	a.ReplicaHW(1, tp, 0, true, l.LEO(), l)
	a.OutOfOrderSequence(1, tp, idem(5, "e"))                                                                                                                // a gap, nothing written
	a.OutOfOrderSequence(1, tp, idem(0, "b"))                                                                                                                // other sequences
	a.OutOfOrderSequence(1, tp, record.New([]record.Record{{Value: "d"}}, record.Producer{ID: 7, Epoch: 1, BaseSequence: 2}, false, record.CompressionNone)) // another epoch
	if f := factsOf(a, godview.ForgottenBatch); len(f) != 0 {
		t.Fatalf("forgotten %+v, want none", f)
	}
	a.OutOfOrderSequence(1, tp, idem(0, "b", "c"))
	if f := factsOf(a, godview.ForgottenBatch); len(f) != 1 || f[0].Partition != "orders-0" || f[0].From != 1 || f[0].To != 3 || f[0].Producer != 7 {
		t.Fatalf("forgotten %+v, want orders-0 offsets [1, 3)", f)
	}
}

// A leader whose producer state knows nothing of a producer takes its retry
// of a committed batch as new: that is Kafka's behaviour only when
// retention deleted the batch below the leader's log start (a reload found
// no snapshot that still had the producer). The audit records the batch
// then, and only for a retry of a committed batch (same producer id, epoch
// and sequences).
func TestRetryOfABatchRetentionDeletedTakenAsNewIsRecorded(t *testing.T) {
	a, l, tp := idempotentLog(t)
	a.ReplicaHW(1, tp, 0, true, l.LEO(), l)
	a.UnknownProducer(1, tp, idem(0, "b", "c"), l.LEO(), 2, 10)                                                                                                                         // the log still holds offsets 1..2
	a.UnknownProducer(1, tp, idem(5, "e"), l.LEO(), 4, 10)                                                                                                                              // a new batch
	a.UnknownProducer(1, tp, idem(0, "b"), l.LEO(), 4, 10)                                                                                                                              // other sequences
	a.UnknownProducer(1, tp, record.New([]record.Record{{Value: "b"}, {Value: "c"}}, record.Producer{ID: 7, Epoch: 1, BaseSequence: 0}, false, record.CompressionNone), l.LEO(), 4, 10) // another epoch
	a.UnknownProducer(1, tp, idem(0, "b", "c"), l.LEO(), 4, 2)                                                                                                                          // below the log start, but the last rebuild replayed it: state lost some other way
	if f := factsOf(a, godview.ForgottenProducer); len(f) != 0 {
		t.Fatalf("forgotten producers %+v, want none", f)
	}
	a.UnknownProducer(1, tp, idem(0, "b", "c"), l.LEO(), 3, 10)
	if f := factsOf(a, godview.ForgottenProducer); len(f) != 1 || f[0].Partition != "orders-0" || f[0].From != 1 || f[0].To != 3 || f[0].Producer != 7 {
		t.Fatalf("forgotten producers %+v, want orders-0 offsets [1, 3)", f)
	}
	if f := factsOf(a, godview.ForgottenBatch); len(f) != 0 {
		t.Fatalf("forgotten batches %+v, want none", f)
	}
}

// A leader whose producer state knows nothing of a producer takes its batch
// at any sequence (KIP-360): the audit records a batch it appended at a
// sequence other than 0 once that very batch commits (an earlier batch of
// the producer may land after it) — not a batch at sequence 0, not another
// batch committed at the same offsets, not one that never commits.
func TestUnknownProducerAppendAtALaterSequenceIsRecorded(t *testing.T) {
	a, l, tp := idempotentLog(t) // offsets 0..3
	a.UnknownProducer(1, tp, idem(0, "x", "y"), l.LEO(), 0, 0)
	a.UnknownProducer(1, tp, idem(527, "x", "y"), l.LEO(), 0, 0) // announced at 4..5, never appended
	if err := l.Append([]*record.Batch{idem(5, "p", "q").Stamped(l.LEO(), 0)}, true); err != nil {
		t.Fatal(err)
	}
	a.ReplicaHW(1, tp, 0, true, l.LEO(), l)
	if u := factsOf(a, godview.UnknownProducerAppend); len(u) != 0 {
		t.Fatalf("unknown-producer appends %+v, want none: another batch committed at those offsets", u)
	}
	a.UnknownProducer(1, tp, idem(527, "x", "y"), l.LEO(), 0, 0)
	if err := l.Append([]*record.Batch{idem(527, "x", "y").Stamped(l.LEO(), 0)}, true); err != nil {
		t.Fatal(err)
	}
	if u := factsOf(a, godview.UnknownProducerAppend); len(u) != 0 {
		t.Fatalf("unknown-producer appends %+v, want none before the commit", u)
	}
	a.ReplicaHW(1, tp, 0, true, l.LEO(), l)
	if u := factsOf(a, godview.UnknownProducerAppend); len(u) != 1 || u[0].Partition != "orders-0" || u[0].From != 6 || u[0].To != 8 || u[0].Producer != 7 {
		t.Fatalf("unknown-producer appends %+v, want orders-0 offsets [6, 8)", u)
	}
}

// The leader may answer OUT_OF_ORDER_SEQUENCE_NUMBER to the retry of a batch
// its log holds before the high watermark reaches it: the batch is recorded
// as forgotten when it is committed (fuzz seed 2217: a leader restarted
// cleanly, its snapshot holding each producer's last batch only, answered
// the retry of an earlier, not yet committed one; the producer rewrote it
// under a new epoch, and both copies were committed). A retry that matches
// no batch committed later records nothing.
func TestOutOfOrderRetryOfABatchCommittedLaterIsRecorded(t *testing.T) {
	a, l, tp := idempotentLog(t)
	a.ReplicaHW(1, tp, 0, true, 1, l) // only offset 0 is committed
	a.OutOfOrderSequence(1, tp, idem(0, "b", "c"))
	a.OutOfOrderSequence(1, tp, idem(7, "x")) // matches nothing, ever
	if f := factsOf(a, godview.ForgottenBatch); len(f) != 0 {
		t.Fatalf("forgotten %+v before the batch is committed, want none", f)
	}
	a.ReplicaHW(1, tp, 0, true, l.LEO(), l)
	if f := factsOf(a, godview.ForgottenBatch); len(f) != 1 || f[0].Partition != "orders-0" || f[0].From != 1 || f[0].To != 3 || f[0].Producer != 7 {
		t.Fatalf("forgotten %+v, want orders-0 offsets [1, 3)", f)
	}
}

// A group coordinator's generation write committed by a leader an unclean
// election had deposed, at or past the offset the new leader's log stops,
// is lost as it commits (the deposed leader's high watermark moves over
// records the new leader never holds): GenerationWrite.Deposed says so.
// Writes before the election, below where the new leader's log stops, or
// the new leader's own, are not.
func TestGenerationWriteOfADeposedCoordinator(t *testing.T) {
	tp := metadata.TopicPartition{Topic: "__consumer_offsets", Partition: 7}
	a, logs := replicaLogs(t,
		[]vb{{"a", 0}, {"b", 0}, {"y", 0}}, // broker 1 led epoch 0
		[]vb{{"a", 0}})                     // broker 2's log stops at 1
	a.SetReplicas(func(broker int32, _ metadata.TopicPartition) *partlog.Log { return logs[broker-1] })
	a.SetGroupMembers(func(string) ([]string, bool) { return nil, false })
	a.ReplicaHW(1, tp, 0, true, 2, logs[0])
	a.GroupGenerationCommitted(1, 7, 0, "g", 1, 1) // before the election
	a.PartitionLeader(2, tp, 1, logs[1], true)     // broker 2 elected uncleanly: b lost from offset 1
	a.GroupGenerationCommitted(1, 7, 0, "g", 2, 2) // the deposed leader's write at 2
	a.GroupGenerationCommitted(1, 7, 0, "g", 2, 0) // the deposed leader's, below where the new log stops
	a.GroupGenerationCommitted(2, 7, 1, "g", 3, 1) // the new leader's
	var got []bool
	for _, w := range a.GroupGenerationWrites("g") {
		got = append(got, w.Deposed)
	}
	if want := []bool{false, true, false, false}; !slices.Equal(got, want) {
		t.Fatalf("deposed %v, want %v", got, want)
	}
	if a.GroupGenerationWrites("other") != nil {
		t.Fatal("a group never written has writes")
	}
}

// A leader that took a producer's retry of a batch retention deleted as new
// (its producer state forgot the producer) then holds the producer from
// that retry only: it takes the retries that follow in sequence as new too
// (Kafka's ProducerAppendInfo.checkSequence: inSequence), and the audit
// records each (fuzz seed 222235). Only a run the forgotten retry began, on
// that leader, in sequence, of committed batches below both the log start
// and the rebuild, counts.
func TestRetriesFollowingAForgottenProducersRetryAreRecorded(t *testing.T) {
	// orders-0: "a" at 0, producer 7's sequences 0–1 at 1–2, 2 at 3, 3 at
	// 4, all committed.
	setup := func(t *testing.T) (*Audit, metadata.TopicPartition, int64) {
		a, l, tp := idempotentLog(t)
		if err := l.Append([]*record.Batch{idem(3, "e").Stamped(l.LEO(), 0)}, true); err != nil {
			t.Fatal(err)
		}
		a.ReplicaHW(1, tp, 0, true, l.LEO(), l)
		return a, tp, l.LEO()
	}
	forgotten := func(a *Audit) [][2]int64 {
		var r [][2]int64
		for _, f := range factsOf(a, godview.ForgottenProducer) {
			r = append(r, [2]int64{f.From, f.To})
		}
		return r
	}
	for _, c := range []struct {
		name string
		then func(a *Audit, tp metadata.TopicPartition, leo int64)
		want [][2]int64
	}{
		{"no forgotten retry before it", func(a *Audit, tp metadata.TopicPartition, leo int64) {
			a.KnownProducer(1, tp, idem(2, "d"), 5, 10)
		}, nil},
		{"the run continues", func(a *Audit, tp metadata.TopicPartition, leo int64) {
			a.UnknownProducer(1, tp, idem(0, "b", "c"), leo, 5, 10)
			a.KnownProducer(1, tp, idem(2, "d"), 5, 10)
			a.KnownProducer(1, tp, idem(3, "e"), 5, 10)
		}, [][2]int64{{1, 3}, {3, 4}, {4, 5}}},
		{"another leader", func(a *Audit, tp metadata.TopicPartition, leo int64) {
			a.UnknownProducer(1, tp, idem(0, "b", "c"), leo, 5, 10)
			a.KnownProducer(2, tp, idem(2, "d"), 5, 10)
		}, [][2]int64{{1, 3}}},
		{"a gap in the sequences", func(a *Audit, tp metadata.TopicPartition, leo int64) {
			a.UnknownProducer(1, tp, idem(0, "b", "c"), leo, 5, 10)
			a.KnownProducer(1, tp, idem(3, "e"), 5, 10)
		}, [][2]int64{{1, 3}}},
		{"another producer epoch", func(a *Audit, tp metadata.TopicPartition, leo int64) {
			a.UnknownProducer(1, tp, idem(0, "b", "c"), leo, 5, 10)
			a.KnownProducer(1, tp, record.New([]record.Record{{Value: "d"}}, record.Producer{ID: 7, Epoch: 1, BaseSequence: 2}, false, record.CompressionNone), 5, 10)
		}, [][2]int64{{1, 3}}},
		{"the log still holds it", func(a *Audit, tp metadata.TopicPartition, leo int64) {
			a.UnknownProducer(1, tp, idem(0, "b", "c"), leo, 3, 10)
			a.KnownProducer(1, tp, idem(2, "d"), 3, 10)
			a.KnownProducer(1, tp, idem(3, "e"), 5, 10) // the run ended
		}, [][2]int64{{1, 3}}},
		{"the last rebuild replayed it", func(a *Audit, tp metadata.TopicPartition, leo int64) {
			a.UnknownProducer(1, tp, idem(0, "b", "c"), leo, 5, 10)
			a.KnownProducer(1, tp, idem(2, "d"), 5, 3)
		}, [][2]int64{{1, 3}}},
		{"a new batch, not a retry", func(a *Audit, tp metadata.TopicPartition, leo int64) {
			a.UnknownProducer(1, tp, idem(0, "b", "c"), leo, 5, 10)
			a.KnownProducer(1, tp, idem(2, "x", "y"), 5, 10) // sequences 2–3: no committed batch
			a.KnownProducer(1, tp, idem(3, "e"), 5, 10)      // the run ended
		}, [][2]int64{{1, 3}}},
		{"the leader forgot the producer again", func(a *Audit, tp metadata.TopicPartition, leo int64) {
			a.UnknownProducer(1, tp, idem(0, "b", "c"), leo, 5, 10)
			a.UnknownProducer(1, tp, idem(9, "z"), leo, 5, 10)
			a.KnownProducer(1, tp, idem(2, "d"), 5, 10)
		}, [][2]int64{{1, 3}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, tp, leo := setup(t)
			c.then(a, tp, leo)
			if got := forgotten(a); !slices.Equal(got, c.want) {
				t.Fatalf("forgotten producers %v, want %v", got, c.want)
			}
		})
	}
}

// A replica of a compacted partition whose recovery kept a batch with a
// flipped base offset (outside the CRC, as Kafka's LogSegment.recover
// checks it; bit 54 here) ends 2^54 past what was written. A committed
// batch it lacks below that end is not a gap its cleaner left: elected, it
// loses the batch, recorded as lost to disk corruption (fuzz seed 246045:
// __consumer_offsets lost a group's commits, and the god view, taking them
// for cleaned, recorded nothing). The same log without a flip on its disk
// is read as compaction left it: a gap, not a loss.
func TestFlippedBaseOffsetIsNoCleanerGap(t *testing.T) {
	tp := metadata.TopicPartition{Topic: "orders", Partition: 0}
	cfg := partlog.DefaultConfig()
	cfg.Compact = true
	for _, flip := range []bool{false, true} {
		a, logs := replicaLogsWith(t, cfg,
			[]vb{{"a", 0}, {"b", 0}, {"c", 0}, {"d", 0}}, // broker 1 led epoch 0 and committed a..d
			[]vb{{"a", 0}, {"b", 0}})                     // broker 2 holds c at its flipped offset
		flipped := record.New([]record.Record{{Value: "c"}}, record.Producer{ID: record.NoProducer}, false, record.CompressionNone).Stamped(1<<54+2, 0)
		if err := logs[1].Append([]*record.Batch{flipped}, false); err != nil {
			t.Fatal(err)
		}
		a.SetReplicas(func(broker int32, _ metadata.TopicPartition) *partlog.Log { return logs[broker-1] })
		a.ReplicaHW(1, tp, 0, true, 4, logs[0])
		disk := a.w.Disk(a.brokerNode(2))
		for i := 0; flip && !logs[1].HeaderFlipped(disk.Flips()); i++ {
			if i == 100 {
				t.Fatal("no flip landed in a batch header")
			}
			if err := a.w.InjectFault(sim.Fault{Kind: sim.FaultDisk, Target: "broker-2", Disk: sim.DiskCorrupt,
				File: partlog.SegmentFile("data/orders-0", 0)}); err != nil {
				t.Fatal(err)
			}
		}
		if got, want := a.part(tp).agreesUpTo(2, logs[1], flip), map[bool]int64{false: 1<<54 + 3, true: 2}[flip]; got != want {
			t.Fatalf("flip %v: the log agrees with what was committed up to %d, want %d", flip, got, want)
		}
		a.PartitionLeader(2, tp, 1, logs[1], false)
		expect(t, a, CommittedDataKept, 0)
		ls := a.Losses()
		if !flip {
			if len(ls) != 0 {
				t.Fatalf("losses %+v: without a flip, the gap is the cleaner's", ls)
			}
			continue
		}
		if len(ls) != 1 || ls[0].From != 2 || ls[0].To != 4 || ls[0].Cause != CauseDiskCorruption {
			t.Fatalf("losses %+v, want offsets 2..3 lost to disk corruption", ls)
		}
	}
}

// A leader paused past its own fencing learns, as it catches up on metadata,
// an ISR expansion the controller committed before it was deposed. The new
// leader (the member that joined) has written its own epoch since, where the
// deposed leader holds writes it took alone: the join is history, not a
// replica joining without acknowledged writes (fuzz seed 275581). The same
// logs at the current epoch are a violation.
func TestDeposedLeaderLearningAnOldISRIsNotJudgedAgainstTheNewEpoch(t *testing.T) {
	tp := metadata.TopicPartition{Topic: "orders", Partition: 0}
	for _, deposed := range []bool{true, false} {
		a, logs := replicaLogs(t,
			[]vb{{"a", 1}, {"b", 1}, {"x", 1}},           // broker 1 led epoch 1; took x alone while paused
			[]vb{{"a", 1}, {"b", 1}, {"c", 2}, {"d", 2}}, // broker 2: what broker 2 leads
			[]vb{{"a", 1}, {"b", 1}, {"c", 2}, {"d", 2}}) // broker 3 follows it
		a.SetReplicas(func(b int32, _ metadata.TopicPartition) *partlog.Log { return logs[b-1] })
		a.PartitionLeader(1, tp, 1, logs[0], false)
		a.ReplicaHW(1, tp, 1, true, 2, logs[0])
		a.AckedAll(1, tp, 1, 1, []int32{1, 2}, 2)
		if deposed {
			a.PartitionLeader(2, tp, 2, logs[1], false)
			a.AckedAll(2, tp, 2, 3, []int32{2, 3}, 2)
			a.ISRJoined(1, tp, 1, 2)
			expect(t, a, AckedOnEveryISRMember, 0)
			continue
		}
		a.AckedAll(1, tp, 1, 2, []int32{1}, 1)
		a.ISRJoined(1, tp, 1, 2)
		expect(t, a, AckedOnEveryISRMember, 1)
	}
}
