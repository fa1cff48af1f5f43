package group

import (
	"testing"

	"kafkasim/model/metadata"
	"kafkasim/model/proto"
	"kafkasim/sim"
)

const txnClient sim.NodeID = 201

func txnCommitReq(member string, generation int32, pid int64, epoch int16, offset int64) *proto.TxnOffsetCommitRequest {
	return &proto.TxnOffsetCommitRequest{CorrelationID: next(), TransactionalID: "etl-0", GroupID: "g", ProducerID: pid, ProducerEpoch: epoch,
		GenerationIDOrMemberEpoch: generation, MemberID: member,
		Partitions: []proto.OffsetCommitPartition{{TopicPartition: tps(0)[0], CommittedOffset: offset, CommittedLeaderEpoch: 2}}}
}

// fetched is partition 0's answer to an OffsetFetch of group g.
func fetched(t *testing.T, f *fakeTopics, stable bool) proto.OffsetFetchPartitionResponse {
	t.Helper()
	req := fetchReq(stable)
	req.Partitions = tps(0)
	n := len(f.Sent)
	f.Request(txnClient, req)
	f.Commit() // a stable fetch waits for the writes before it
	r := answer[*proto.OffsetFetchResponse](t, f.To(txnClient, n))
	if r.Error != proto.None || len(r.Partitions) != 1 {
		t.Fatalf("OffsetFetch: %+v", r)
	}
	return r.Partitions[0]
}

// txnCommit serves a TxnOffsetCommit whose partition the transaction
// coordinator adds, and returns its answer once written.
func txnCommit(t *testing.T, f *fakeTopics, req *proto.TxnOffsetCommitRequest) proto.ErrorCode {
	t.Helper()
	n := len(f.Sent)
	if got := f.Request(txnClient, req); len(got) != 0 {
		t.Fatalf("a TxnOffsetCommit is answered only after its partition joined the transaction, got %+v", got)
	}
	if len(f.addedToTxn) != 1 || f.addedToTxn[0].producerID != req.ProducerID || f.addedToTxn[0].producerEpoch != req.ProducerEpoch {
		t.Fatalf("the coordinator should add its partition to the transaction of producer %d epoch %d, got %+v", req.ProducerID, req.ProducerEpoch, f.addedToTxn)
	}
	f.answerAddToTxn(proto.None)
	f.Commit()
	r := answer[*proto.TxnOffsetCommitResponse](t, f.To(txnClient, n))
	return r.Partitions[0].Error
}

func complete(t *testing.T, f *fakeTopics, pid int64, epoch int16, committed bool) proto.ErrorCode {
	t.Helper()
	got := proto.ErrorCode(-100)
	f.C.CompleteTransaction(metadata.TopicPartition{Topic: Topic, Partition: 0}, pid, epoch, 3, committed, false, func(err proto.ErrorCode) { got = err })
	if got != -100 {
		return got // refused at once
	}
	f.Commit()
	return got
}

// A transaction's offsets are pending until its commit marker: a plain
// OffsetFetch does not see them, a stable one is told UNSTABLE_OFFSET_COMMIT,
// and after the marker both see them. An abort marker drops them.
func TestTxnOffsetsCommitAtTheMarkerAndDropAtTheAbort(t *testing.T) {
	for _, committed := range []bool{true, false} {
		f := loaded(t)
		if err := txnCommit(t, f, txnCommitReq("", -1, 7, 1, 42)); err != proto.None {
			t.Fatalf("TxnOffsetCommit: %v", err)
		}
		if b := f.Log(0).Batches[0]; !b.Transactional || b.ProducerID != 7 || b.ProducerEpoch != 1 {
			t.Fatalf("the offsets should be written in a transactional batch of producer 7 epoch 1, got %+v", b)
		}
		if p := fetched(t, f, false); p.CommittedOffset != -1 {
			t.Fatalf("before the marker a plain fetch sees %d, want -1", p.CommittedOffset)
		}
		if p := fetched(t, f, true); p.Error != proto.UnstableOffsetCommit {
			t.Fatalf("before the marker a stable fetch gets %v, want UNSTABLE_OFFSET_COMMIT", p.Error)
		}
		if err := complete(t, f, 7, 2, committed); err != proto.None {
			t.Fatalf("the marker: %v", err)
		}
		if b := f.Log(0).Batches[len(f.Log(0).Batches)-1]; !b.Control {
			t.Fatal("the marker should be appended to the offsets partition")
		}
		want := int64(-1)
		if committed {
			want = 42
		}
		for _, stable := range []bool{false, true} {
			if p := fetched(t, f, stable); p.Error != proto.None || p.CommittedOffset != want {
				t.Fatalf("committed=%v: after the marker a fetch (stable %v) gets %+v, want offset %d", committed, stable, p, want)
			}
		}
	}
}

// A plain commit written after the transaction's offsets wins over them at
// the commit marker (Kafka compares the records' offsets).
func TestALaterPlainCommitWinsOverTheTransactions(t *testing.T) {
	f := loaded(t)
	txnCommit(t, f, txnCommitReq("", -1, 7, 1, 42))
	n := len(f.Sent)
	f.Request(txnClient, commitReq("", -1, 50))
	f.Commit()
	if r := answer[*proto.OffsetCommitResponse](t, f.To(txnClient, n)); r.Partitions[0].Error != proto.None {
		t.Fatalf("commit: %+v", r)
	}
	complete(t, f, 7, 2, true)
	if p := fetched(t, f, true); p.CommittedOffset != 50 {
		t.Fatalf("got %d, want the later plain commit's 50", p.CommittedOffset)
	}
}

// A coordinator that loads the partition finds the transactions as the
// log has them: a committed one's offsets, an open one's pending.
func TestTxnOffsetsReloaded(t *testing.T) {
	f := loaded(t)
	txnCommit(t, f, txnCommitReq("", -1, 7, 1, 42))
	complete(t, f, 7, 2, true)
	txnCommit(t, f, txnCommitReq("", -1, 8, 1, 60))
	f.Lead(2)
	if p := fetched(t, f, false); p.CommittedOffset != 42 {
		t.Fatalf("after the reload the committed offset is %d, want 42", p.CommittedOffset)
	}
	if p := fetched(t, f, true); p.Error != proto.UnstableOffsetCommit {
		t.Fatalf("after the reload producer 8's offsets should still be pending: %+v", p)
	}
	complete(t, f, 8, 2, true)
	if p := fetched(t, f, true); p.CommittedOffset != 60 {
		t.Fatalf("after producer 8's commit marker: %+v, want 60", p)
	}
}

// KIP-447: a TxnOffsetCommit is fenced by the group's generation like an
// OffsetCommit; a member of the current generation commits even while the
// group completes a rebalance. A group that does not exist takes no
// generation.
func TestTxnOffsetCommitFencedByGeneration(t *testing.T) {
	f := loaded(t)
	if err := txnCommit(t, f, txnCommitReq("nobody", 3, 7, 1, 42)); err != proto.IllegalGeneration {
		t.Fatalf("a commit with a generation to a group that does not exist: %v, want ILLEGAL_GENERATION", err)
	}
	ids, gen := stableGroup(t, f, 2)
	if err := txnCommit(t, f, txnCommitReq(ids[1], gen-1, 7, 1, 42)); err != proto.IllegalGeneration {
		t.Fatalf("a stale generation's commit: %v, want ILLEGAL_GENERATION", err)
	}
	if err := txnCommit(t, f, txnCommitReq(ids[1], gen, 7, 1, 42)); err != proto.None {
		t.Fatalf("the current generation's commit: %v", err)
	}
}

// no-generation-fencing reaches TxnOffsetCommit too: with the bug a stale
// generation's transactional commit is taken.
func TestTxnOffsetCommitUnfencedWithTheBug(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Bugs.NoGenerationFencing = true
	f := newFake(t, cfg)
	f.Lead(1)
	ids, gen := stableGroup(t, f, 2)
	if err := txnCommit(t, f, txnCommitReq(ids[1], gen-1, 7, 1, 42)); err != proto.None {
		t.Fatalf("a stale generation's commit with no-generation-fencing: %v, want NONE", err)
	}
}

// The transaction coordinator's refusal to add the partition is the
// commit's answer (mapped as the coordinator runtime maps errors), and
// nothing is written.
func TestTxnOffsetCommitRefusedByTheTransactionCoordinator(t *testing.T) {
	for _, c := range []struct{ err, want proto.ErrorCode }{
		{proto.ProducerFenced, proto.ProducerFenced},
		{proto.InvalidProducerEpoch, proto.InvalidProducerEpoch},
		{proto.NotEnoughReplicas, proto.CoordinatorNotAvailable},
	} {
		f := loaded(t)
		n := len(f.Sent)
		f.Request(txnClient, txnCommitReq("", -1, 7, 1, 42))
		f.answerAddToTxn(c.err)
		r := answer[*proto.TxnOffsetCommitResponse](t, f.To(txnClient, n))
		if r.Partitions[0].Error != c.want || len(f.Log(0).Batches) != 0 {
			t.Fatalf("refused with %v: answered %v with %d batches written, want %v and none", c.err, r.Partitions[0].Error, len(f.Log(0).Batches), c.want)
		}
	}
}

// A marker the partition refuses (a fenced producer or coordinator epoch)
// leaves the transaction's offsets pending, and the refusal is the
// answer.
func TestARefusedMarkerLeavesTheOffsetsPending(t *testing.T) {
	f := loaded(t)
	txnCommit(t, f, txnCommitReq("", -1, 7, 1, 42))
	f.fencedMarkers = map[int64]proto.ErrorCode{7: proto.TransactionCoordinatorFenced}
	if err := complete(t, f, 7, 2, true); err != proto.TransactionCoordinatorFenced {
		t.Fatalf("the refused marker answered %v, want TRANSACTION_COORDINATOR_FENCED", err)
	}
	if p := fetched(t, f, true); p.Error != proto.UnstableOffsetCommit {
		t.Fatalf("after a refused marker the offsets should still be pending: %+v", p)
	}
}
