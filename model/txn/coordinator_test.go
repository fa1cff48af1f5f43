package txn

import (
	"testing"
	"time"

	"kafkasim/model/metadata"
	"kafkasim/model/proto"
	"kafkasim/sim"
)

// started leads partition 0 in epoch 3, with a producer-id block from
// 1000, and gives "tx" its first epoch.
func started(t *testing.T) (*fakeTopics, *proto.InitProducerIDResponse) {
	f := newFake(t)
	f.Lead(3)
	req := &proto.InitProducerIDRequest{TransactionalID: "tx", TransactionTimeout: time.Minute, ProducerID: -1, ProducerEpoch: -1}
	out := f.Request(client, req)
	if r := out[0].(*proto.InitProducerIDResponse); r.Error != proto.CoordinatorLoadInProgress {
		t.Fatalf("before any producer-id block: %s, want COORDINATOR_LOAD_IN_PROGRESS", r.Error)
	}
	f.grantBlock(1000)
	r := f.initPID("tx", time.Minute)
	if r.Error != proto.None || r.ProducerID != 1000 || r.ProducerEpoch != 0 {
		t.Fatalf("InitProducerId: %+v", r)
	}
	return f, r
}

// addPartitions has a partition leader add partitions for (pid, epoch)
// and returns the committed answer.
func (f *fakeTopics) addPartitions(pid int64, epoch int16, tps ...proto.TopicPartition) proto.ErrorCode {
	f.T.Helper()
	out := f.Request(brokerA, &proto.AddPartitionsToTxnRequest{TransactionalID: "tx", ProducerID: pid, ProducerEpoch: epoch, Partitions: tps})
	if len(out) == 0 {
		n := len(f.Sent)
		f.Commit()
		out = f.To(brokerA, n)
	}
	return out[0].(*proto.AddPartitionsToTxnResponse).Error
}

// EndTxn: PrepareCommit written (answered only once committed, with the
// epoch bumped), markers to each leader, one request per broker carrying
// the coordinator epoch, a NOT_LEADER partition sent again to its new
// leader, a deleted partition dropped, then CompleteCommit; retries
// answered as Kafka's transaction version 2 does.
func TestEndTxnMarkersComplete(t *testing.T) {
	f, init := started(t)
	pid := init.ProducerID
	f.leaders[tp("a", 0)], f.leaders[tp("a", 1)], f.leaders[tp("b", 0)], f.leaders[tp("gone", 0)] = brokerA, brokerA, brokerB, brokerB
	if err := f.addPartitions(pid, 0, tp("a", 0), tp("b", 0)); err != proto.None {
		t.Fatalf("AddPartitionsToTxn: %s", err)
	}
	f.Clock += time.Second
	if err := f.addPartitions(pid, 0, tp("a", 1), tp("gone", 0)); err != proto.None {
		t.Fatalf("AddPartitionsToTxn: %s", err)
	}
	if d := f.describe("tx"); d.State != "Ongoing" || len(d.Partitions) != 4 || d.StartTime != 0 {
		t.Fatalf("after AddPartitionsToTxn: %+v", d)
	}
	if err := f.addPartitions(pid, 1, tp("a", 0)); err != proto.ProducerFenced {
		t.Fatalf("AddPartitionsToTxn with a newer epoch: %s, want PRODUCER_FENCED", err)
	}
	end := &proto.EndTxnRequest{TransactionalID: "tx", ProducerID: pid, ProducerEpoch: 0, Committed: true}
	if out := f.Request(client, end); len(out) != 0 {
		t.Fatalf("EndTxn answered before PrepareCommit was committed: %+v", out[0])
	}
	if out := f.Request(client, end); out[0].(*proto.EndTxnResponse).Error != proto.ConcurrentTransactions {
		t.Fatalf("EndTxn while PrepareCommit is written: %+v", out[0])
	}
	n := len(f.Sent)
	f.Commit()
	if r := f.To(client, n)[0].(*proto.EndTxnResponse); r.Error != proto.None || r.ProducerID != pid || r.ProducerEpoch != 1 {
		t.Fatalf("EndTxn: %+v, want NONE with epoch 1", r)
	}
	if out := f.Request(client, end); out[0].(*proto.EndTxnResponse).Error != proto.ConcurrentTransactions {
		t.Fatalf("a retry while the markers are written: %+v", out[0])
	}
	delete(f.leaders, tp("gone", 0)) // its topic deleted before the markers
	n = len(f.Sent)
	f.Advance(0)
	reqs := f.markerRequests(n)
	if len(reqs) != 2 || reqs[brokerA] == nil || reqs[brokerB] == nil {
		t.Fatalf("marker requests: %+v", reqs)
	}
	mk := reqs[brokerA].Markers[0]
	if mk.ProducerID != pid || mk.ProducerEpoch != 1 || !mk.Committed || mk.CoordinatorEpoch != 3 || len(mk.Partitions) != 2 {
		t.Fatalf("marker to A: %+v", mk)
	}
	f.ackMarkers(brokerB, reqs[brokerB], allNone)
	// a-1's leader moved to B.
	f.leaders[tp("a", 1)] = brokerB
	f.ackMarkers(brokerA, reqs[brokerA], func(p proto.TopicPartition) proto.ErrorCode {
		if p == tp("a", 1) {
			return proto.NotLeaderOrFollower
		}
		return proto.None
	})
	if d := f.describe("tx"); d.State != "PrepareCommit" {
		t.Fatalf("with a marker missing: %+v", d)
	}
	n = len(f.Sent)
	f.Advance(f.C.cfg.RetryBackoff)
	reqs = f.markerRequests(n)
	if len(reqs) != 1 || reqs[brokerB] == nil || reqs[brokerB].Markers[0].Partitions[0] != tp("a", 1) {
		t.Fatalf("the retried marker: %+v", reqs)
	}
	f.ackMarkers(brokerB, reqs[brokerB], allNone)
	f.Commit() // CompleteCommit
	if d := f.describe("tx"); d.State != "CompleteCommit" || d.ProducerEpoch != 1 || len(d.Partitions) != 0 {
		t.Fatalf("after the markers: %+v", d)
	}
	// TV2 retries: the old epoch is a retry of the bump (NONE with the
	// current epoch); an abort retry is INVALID_TXN_STATE; a commit with
	// the current epoch and nothing open is INVALID_TXN_STATE.
	if r := f.Request(client, end)[0].(*proto.EndTxnResponse); r.Error != proto.None || r.ProducerEpoch != 1 {
		t.Fatalf("EndTxn retry after completion: %+v", r)
	}
	abortRetry := &proto.EndTxnRequest{TransactionalID: "tx", ProducerID: pid, ProducerEpoch: 0}
	if r := f.Request(client, abortRetry)[0].(*proto.EndTxnResponse); r.Error != proto.InvalidTxnState {
		t.Fatalf("an abort retry after a commit: %+v", r)
	}
	again := &proto.EndTxnRequest{TransactionalID: "tx", ProducerID: pid, ProducerEpoch: 1, Committed: true}
	if r := f.Request(client, again)[0].(*proto.EndTxnResponse); r.Error != proto.InvalidTxnState {
		t.Fatalf("a commit with nothing open: %+v", r)
	}
	stale := &proto.EndTxnRequest{TransactionalID: "tx", ProducerID: pid, ProducerEpoch: 5, Committed: true}
	if r := f.Request(client, stale)[0].(*proto.EndTxnResponse); r.Error != proto.ProducerFenced {
		t.Fatalf("an unknown epoch: %+v", r)
	}
}

// InitProducerId for an id whose previous instance has a transaction
// open: the epoch is bumped to fence it (PrepareEpochFence), the
// transaction aborted with transaction version 2's second bump, the new
// instance told CONCURRENT_TRANSACTIONS until the abort is complete, and
// then given the next epoch. The old instance is PRODUCER_FENCED.
func TestInitProducerIDFencesAndAborts(t *testing.T) {
	f, init := started(t)
	pid := init.ProducerID
	f.leaders[tp("a", 0)] = brokerA
	if err := f.addPartitions(pid, 0, tp("a", 0)); err != proto.None {
		t.Fatalf("AddPartitionsToTxn: %s", err)
	}
	req := &proto.InitProducerIDRequest{TransactionalID: "tx", TransactionTimeout: time.Minute, ProducerID: -1, ProducerEpoch: -1}
	if out := f.Request(client, req); len(out) != 0 {
		t.Fatalf("answered before the fencing abort was written: %+v", out[0])
	}
	if out := f.Request(client, req); out[0].(*proto.InitProducerIDResponse).Error != proto.ConcurrentTransactions {
		t.Fatalf("while the abort is written: %+v", out[0])
	}
	n := len(f.Sent)
	f.Commit() // PrepareAbort
	if r := f.To(client, n)[0].(*proto.InitProducerIDResponse); r.Error != proto.ConcurrentTransactions {
		t.Fatalf("once PrepareAbort is written: %+v", r)
	}
	if d := f.describe("tx"); d.State != "PrepareAbort" || d.ProducerEpoch != 1 {
		t.Fatalf("the fencing abort: %+v, want PrepareAbort at epoch 1 (the fence's bump only: KAFKA-19367)", d)
	}
	old := &proto.EndTxnRequest{TransactionalID: "tx", ProducerID: pid, ProducerEpoch: 0, Committed: true}
	if r := f.Request(client, old)[0].(*proto.EndTxnResponse); r.Error != proto.ConcurrentTransactions {
		t.Fatalf("the fenced instance's commit while the abort is written: %+v, want CONCURRENT_TRANSACTIONS (KAFKA-18464: the pending Complete* first)", r)
	}
	n = len(f.Sent)
	f.Advance(0)
	reqs := f.markerRequests(n)
	mk := reqs[brokerA].Markers[0]
	if mk.Committed || mk.ProducerEpoch != 1 || mk.CoordinatorEpoch != 3 {
		t.Fatalf("the abort marker: %+v, want an abort at epoch 1", mk)
	}
	f.ackMarkers(brokerA, reqs[brokerA], allNone)
	f.Commit() // CompleteAbort
	r := f.initPID("tx", time.Minute)
	if r.Error != proto.None || r.ProducerID != pid || r.ProducerEpoch != 2 {
		t.Fatalf("InitProducerId after the abort: %+v, want epoch 2", r)
	}
	if err := f.addPartitions(pid, 1, tp("a", 0)); err != proto.ProducerFenced {
		t.Fatalf("the fenced epoch adds a partition: %s", err)
	}
	// KIP-360: the current instance re-initialises with its own id and
	// epoch (an epoch bump); a stale epoch is fenced.
	kip360 := &proto.InitProducerIDRequest{TransactionalID: "tx", TransactionTimeout: time.Minute, ProducerID: pid, ProducerEpoch: 2}
	f.Request(client, kip360)
	n = len(f.Sent)
	f.Commit()
	if r := f.To(client, n)[0].(*proto.InitProducerIDResponse); r.Error != proto.None || r.ProducerEpoch != 3 {
		t.Fatalf("KIP-360 re-init: %+v", r)
	}
	kip360.ProducerEpoch = 1
	if r := f.Request(client, kip360)[0].(*proto.InitProducerIDResponse); r.Error != proto.ProducerFenced {
		t.Fatalf("KIP-360 with a stale epoch: %+v", r)
	}
}

// A transaction open longer than transaction.timeout.ms is aborted at the
// next check (every 10 s): fenced and aborted, markers, CompleteAbort.
func TestTimedOutTransactionAborted(t *testing.T) {
	f, init := started(t)
	f.leaders[tp("a", 0)] = brokerA
	if err := f.addPartitions(init.ProducerID, 0, tp("a", 0)); err != proto.None {
		t.Fatalf("AddPartitionsToTxn: %s", err)
	}
	f.Advance(9 * time.Second) // the first check: not yet a minute old
	if d := f.describe("tx"); d.State != "Ongoing" {
		t.Fatalf("before the timeout: %+v", d)
	}
	f.Advance(61 * time.Second)
	if d := f.describe("tx"); d.State != "Ongoing" {
		t.Fatalf("the abort is answered once written: %+v", d)
	}
	f.Commit()
	n := len(f.Sent)
	f.Advance(0)
	reqs := f.markerRequests(n)
	if reqs[brokerA] == nil || reqs[brokerA].Markers[0].Committed || reqs[brokerA].Markers[0].ProducerEpoch != 1 {
		t.Fatalf("the timeout's abort marker: %+v, want an abort at epoch 1 (the fence's bump only: KAFKA-19367)", reqs)
	}
	f.ackMarkers(brokerA, reqs[brokerA], allNone)
	f.Commit()
	if d := f.describe("tx"); d.State != "CompleteAbort" || d.ProducerEpoch != 1 {
		t.Fatalf("after the timeout: %+v", d)
	}
	// The timed-out producer's abort is a retry of the coordinator's: it
	// learns the bumped epoch and goes on.
	abort := &proto.EndTxnRequest{TransactionalID: "tx", ProducerID: init.ProducerID, ProducerEpoch: 0}
	if r := f.Request(client, abort)[0].(*proto.EndTxnResponse); r.Error != proto.None || r.ProducerEpoch != 1 {
		t.Fatalf("the timed-out producer aborts: %+v, want NONE at epoch 1", r)
	}
	end := &proto.EndTxnRequest{TransactionalID: "tx", ProducerID: init.ProducerID, ProducerEpoch: 0, Committed: true}
	if r := f.Request(client, end)[0].(*proto.EndTxnResponse); r.Error != proto.ProducerFenced {
		t.Fatalf("the timed-out producer commits: %+v, want PRODUCER_FENCED (KAFKA-20785)", r)
	}
}

// A coordinator that takes over a partition whose log ends in
// PrepareCommit answers COORDINATOR_LOAD_IN_PROGRESS while it loads, then
// sends the markers again with its own coordinator epoch and writes
// CompleteCommit.
func TestReloadResendsPendingMarkers(t *testing.T) {
	f, init := started(t)
	f.leaders[tp("a", 0)] = brokerA
	if err := f.addPartitions(init.ProducerID, 0, tp("a", 0)); err != proto.None {
		t.Fatalf("AddPartitionsToTxn: %s", err)
	}
	f.Request(client, &proto.EndTxnRequest{TransactionalID: "tx", ProducerID: init.ProducerID, ProducerEpoch: 0, Committed: true})
	f.Commit()
	// The leadership moves away before any marker is answered, and back
	// in epoch 5.
	f.C.OnResign(metadata.TopicPartition{Topic: Topic, Partition: 0}, 4)
	if out := f.Request(client, &proto.EndTxnRequest{TransactionalID: "tx", ProducerID: init.ProducerID, ProducerEpoch: 0, Committed: true}); out[0].(*proto.EndTxnResponse).Error != proto.NotCoordinator {
		t.Fatalf("a retry after the resignation: %+v", out[0])
	}
	if d := f.describe("tx"); d.Error != proto.NotCoordinator {
		t.Fatalf("after the resignation: %+v", d)
	}
	f.Log(0).Epoch = 5
	f.C.OnBecomeLeader(metadata.TopicPartition{Topic: Topic, Partition: 0}, 5)
	if d := f.describe("tx"); d.Error != proto.CoordinatorLoadInProgress {
		t.Fatalf("while loading: %+v", d)
	}
	n := len(f.Sent)
	f.Advance(0)
	reqs := f.markerRequests(n)
	if reqs[brokerA] == nil {
		t.Fatalf("no marker sent after the load: %+v", f.Sent[n:])
	}
	mk := reqs[brokerA].Markers[0]
	if mk.CoordinatorEpoch != 5 || !mk.Committed || mk.ProducerEpoch != 1 {
		t.Fatalf("the resent marker: %+v", mk)
	}
	if d := f.describe("tx"); d.State != "PrepareCommit" || d.ProducerEpoch != 1 {
		t.Fatalf("loaded: %+v", d)
	}
	f.ackMarkers(brokerA, reqs[brokerA], allNone)
	f.Commit()
	if d := f.describe("tx"); d.State != "CompleteCommit" {
		t.Fatalf("after the resent markers: %+v", d)
	}
}

// FindCoordinator for a transactional id creates __transaction_state
// with its configs first; InitProducerId needs a valid timeout.
func TestFindCoordinatorCreatesTopic(t *testing.T) {
	f := newFake(t)
	f.NumPartitions = 0
	out := f.Request(client, &proto.FindCoordinatorRequest{Key: "tx", KeyType: proto.CoordinatorKeyTransaction})
	if r := out[0].(*proto.FindCoordinatorResponse); r.Error != proto.CoordinatorNotAvailable {
		t.Fatalf("before the topic exists: %+v", r)
	}
	if len(f.Created) != 1 || f.Created[0].Name != Topic || f.Created[0].NumPartitions != 1 || f.Created[0].MinInsyncReplicas != 2 ||
		f.Created[0].Configs["cleanup.policy"] != "compact" {
		t.Fatalf("created %+v", f.Created)
	}
	f.NumPartitions = 1
	if r := f.Request(client, &proto.FindCoordinatorRequest{Key: "tx", KeyType: proto.CoordinatorKeyTransaction})[0].(*proto.FindCoordinatorResponse); r.Error != proto.None || r.Node != 10 {
		t.Fatalf("FindCoordinator: %+v", r)
	}
	if f.C.Handles(&proto.FindCoordinatorRequest{KeyType: proto.CoordinatorKeyGroup}) || f.C.Handles(&proto.InitProducerIDRequest{}) {
		t.Fatal("the transaction coordinator takes a group's FindCoordinator or an idempotent InitProducerId")
	}
	f.Lead(1)
	r := f.Request(client, &proto.InitProducerIDRequest{TransactionalID: "tx", TransactionTimeout: time.Hour, ProducerID: -1, ProducerEpoch: -1})
	if r[0].(*proto.InitProducerIDResponse).Error != proto.InvalidTransactionTimeout {
		t.Fatalf("a timeout above transaction.max.timeout.ms: %+v", r[0])
	}
}

// A failed write of the fence keeps its epoch for the next fence
// (hasFailedEpochFence), and min ISR failures answer
// COORDINATOR_NOT_AVAILABLE.
func TestAppendFailures(t *testing.T) {
	f, init := started(t)
	f.leaders[tp("a", 0)] = brokerA
	f.AppendErr = proto.NotEnoughReplicas
	out := f.Request(brokerA, &proto.AddPartitionsToTxnRequest{TransactionalID: "tx", ProducerID: init.ProducerID, ProducerEpoch: 0, Partitions: []proto.TopicPartition{tp("a", 0)}})
	if r := out[0].(*proto.AddPartitionsToTxnResponse); r.Error != proto.CoordinatorNotAvailable {
		t.Fatalf("below min ISR: %+v", r)
	}
	f.AppendErr = proto.None
	if err := f.addPartitions(init.ProducerID, 0, tp("a", 0)); err != proto.None {
		t.Fatalf("AddPartitionsToTxn: %s", err)
	}
	req := &proto.InitProducerIDRequest{TransactionalID: "tx", TransactionTimeout: time.Minute, ProducerID: -1, ProducerEpoch: -1}
	f.Request(client, req)
	n := len(f.Sent)
	f.FailAppends(proto.RequestTimedOut)
	if r := f.To(client, n)[0].(*proto.InitProducerIDResponse); r.Error != proto.CoordinatorNotAvailable {
		t.Fatalf("the fence's write timed out: %+v", r)
	}
	f.Request(client, req)
	f.Commit()
	if d := f.describe("tx"); d.State != "PrepareAbort" || d.ProducerEpoch != 1 {
		t.Fatalf("the second fence: %+v, want epoch 1 (the failed fence's 1 kept, and no bump of the abort: KAFKA-19367)", d)
	}
}

// Transaction version 2's bump at the last epoch: EndTxn allocates the
// next producer id, answers it at epoch 0, writes the markers with the
// old id at Short.MAX_VALUE, and a retry of the old id's EndTxn is told
// NONE with the new id.
func TestEpochOverflowRotatesProducerID(t *testing.T) {
	f, init := started(t)
	pid := init.ProducerID
	f.leaders[tp("a", 0)] = brokerA
	f.C.parts[0].txns["tx"].producerEpoch = 32766
	if err := f.addPartitions(pid, 32766, tp("a", 0)); err != proto.None {
		t.Fatalf("AddPartitionsToTxn: %s", err)
	}
	end := &proto.EndTxnRequest{TransactionalID: "tx", ProducerID: pid, ProducerEpoch: 32766, Committed: true}
	f.Request(client, end)
	n := len(f.Sent)
	f.Commit()
	if r := f.To(client, n)[0].(*proto.EndTxnResponse); r.Error != proto.None || r.ProducerID != pid+1 || r.ProducerEpoch != 0 {
		t.Fatalf("EndTxn at the last epoch: %+v, want the next producer id at epoch 0", r)
	}
	n = len(f.Sent)
	f.Advance(0)
	reqs := f.markerRequests(n)
	if mk := reqs[brokerA].Markers[0]; mk.ProducerID != pid || mk.ProducerEpoch != 32767 {
		t.Fatalf("the marker: %+v", mk)
	}
	f.ackMarkers(brokerA, reqs[brokerA], allNone)
	f.Commit()
	if d := f.describe("tx"); d.State != "CompleteCommit" || d.ProducerID != pid+1 || d.ProducerEpoch != 0 {
		t.Fatalf("after the markers: %+v", d)
	}
	if r := f.Request(client, end)[0].(*proto.EndTxnResponse); r.Error != proto.None || r.ProducerID != pid+1 || r.ProducerEpoch != 0 {
		t.Fatalf("the old id's retry: %+v", r)
	}
}

// InitProducerId at an exhausted epoch rotates to a new producer id at
// epoch 0 (prepareProducerIdRotation).
func TestInitProducerIDRotatesAtExhaustedEpoch(t *testing.T) {
	f, init := started(t)
	f.C.parts[0].txns["tx"].producerEpoch = 32766
	r := f.initPID("tx", time.Minute)
	if r.Error != proto.None || r.ProducerID == init.ProducerID || r.ProducerEpoch != 0 {
		t.Fatalf("InitProducerId at epoch 32766: %+v, want a new producer id at epoch 0", r)
	}
	if d := f.describe("tx"); d.State != "Empty" || d.ProducerID != r.ProducerID {
		t.Fatalf("after the rotation: %+v", d)
	}
}

// A marker whose leader is unknown waits in the retry queue; one whose
// request is lost to a disconnection is sent again; verification answers
// TRANSACTION_ABORTABLE for a partition not in the transaction; an
// unknown id is TRANSACTIONAL_ID_NOT_FOUND.
func TestMarkersRetriedAndVerification(t *testing.T) {
	f, init := started(t)
	pid := init.ProducerID
	f.leaders[tp("a", 0)], f.leaders[tp("b", 0)], f.leaders[tp("c", 0)] = brokerA, sim.NoNode, brokerA
	if err := f.addPartitions(pid, 0, tp("a", 0), tp("b", 0)); err != proto.None {
		t.Fatalf("AddPartitionsToTxn: %s", err)
	}
	verify := &proto.AddPartitionsToTxnRequest{TransactionalID: "tx", ProducerID: pid, ProducerEpoch: 0, VerifyOnly: true,
		Partitions: []proto.TopicPartition{tp("a", 0), tp("c", 0)}}
	v := f.Request(brokerA, verify)[0].(*proto.AddPartitionsToTxnResponse)
	if v.Error != proto.None || v.Partitions[0].Error != proto.None || v.Partitions[1].Error != proto.TransactionAbortable {
		t.Fatalf("verification: %+v", v)
	}
	if d := f.describe("nope"); d.Error != proto.TransactionalIDNotFound {
		t.Fatalf("an unknown id: %+v", d)
	}
	f.Request(client, &proto.EndTxnRequest{TransactionalID: "tx", ProducerID: pid, ProducerEpoch: 0})
	f.Commit()
	n := len(f.Sent)
	f.Advance(0)
	reqs := f.markerRequests(n)
	if len(reqs) != 1 || reqs[brokerA] == nil {
		t.Fatalf("markers with b-0's leader unknown: %+v", reqs)
	}
	// A's connection is reset: its request is sent again; b-0 gets a
	// leader.
	f.C.OnDisconnected(brokerA)
	f.leaders[tp("b", 0)] = brokerB
	n = len(f.Sent)
	f.Advance(f.C.cfg.RetryBackoff)
	reqs = f.markerRequests(n)
	if len(reqs) != 2 || reqs[brokerA] == nil || reqs[brokerB] == nil {
		t.Fatalf("markers sent again: %+v", reqs)
	}
	f.ackMarkers(brokerA, reqs[brokerA], allNone)
	f.ackMarkers(brokerB, reqs[brokerB], allNone)
	f.Commit()
	if d := f.describe("tx"); d.State != "CompleteAbort" || d.ProducerEpoch != 1 {
		t.Fatalf("after the markers: %+v", d)
	}
}

// A partition the coordinator's broker has no metadata for (a topic
// created after its metadata, fuzz seed 25453: a broker behind on metadata
// after a slow network) fails the whole AddPartitionsToTxn before the
// coordinator sees it, as KafkaApis.handleAddPartitionsToTxnRequest does:
// UNKNOWN_TOPIC_OR_PARTITION for it, OPERATION_NOT_ATTEMPTED for the
// rest, nothing added. Added, its marker would be dropped as a deleted
// partition's and the transaction completed without deciding its records.
func TestAddPartitionsUnknownToMetadata(t *testing.T) {
	f, init := started(t)
	pid := init.ProducerID
	f.leaders[tp("a", 0)] = brokerA
	for _, verifyOnly := range []bool{false, true} {
		req := &proto.AddPartitionsToTxnRequest{TransactionalID: "tx", ProducerID: pid, ProducerEpoch: 0, VerifyOnly: verifyOnly,
			Partitions: []proto.TopicPartition{tp("a", 0), tp("new", 0)}}
		out := f.Request(brokerA, req)
		if len(out) != 1 {
			t.Fatalf("verifyOnly=%v: %d answers before any append, want 1", verifyOnly, len(out))
		}
		r := out[0].(*proto.AddPartitionsToTxnResponse)
		if r.Error != proto.None || len(r.Partitions) != 2 || r.Partitions[0].Error != proto.OperationNotAttempted ||
			r.Partitions[1].Error != proto.UnknownTopicOrPartition {
			t.Fatalf("verifyOnly=%v with new-0 unknown: %+v, want OPERATION_NOT_ATTEMPTED and UNKNOWN_TOPIC_OR_PARTITION", verifyOnly, r.Partitions)
		}
	}
	if d := f.describe("tx"); d.State != "Empty" || len(d.Partitions) != 0 {
		t.Fatalf("after the refused request: %+v, want nothing added", d)
	}
	// The broker's metadata catches up: the retry adds both.
	f.leaders[tp("new", 0)] = brokerB
	if err := f.addPartitions(pid, 0, tp("a", 0), tp("new", 0)); err != proto.None {
		t.Fatalf("AddPartitionsToTxn once new-0 is known: %s", err)
	}
	if d := f.describe("tx"); d.State != "Ongoing" || len(d.Partitions) != 2 {
		t.Fatalf("after AddPartitionsToTxn: %+v", d)
	}
}

// Two partitions of one transaction on one broker, both markers answered
// in one WriteTxnMarkers response: Complete* is written once (Kafka takes
// the transaction out of transactionsWithPendingMarkers before writing it),
// and the next transaction begins after it (a second write of the same
// Complete* failed the coordinator: fuzzing with a nemesis found it).
func TestOneCompletionForMarkersAnsweredTogether(t *testing.T) {
	f, init := started(t)
	pid := init.ProducerID
	f.leaders[tp("a", 0)], f.leaders[tp("a", 1)] = brokerA, brokerA
	if err := f.addPartitions(pid, 0, tp("a", 0), tp("a", 1)); err != proto.None {
		t.Fatalf("AddPartitionsToTxn: %s", err)
	}
	f.Request(client, &proto.EndTxnRequest{TransactionalID: "tx", ProducerID: pid, ProducerEpoch: 0, Committed: true})
	f.Commit()
	n := len(f.Sent)
	f.Advance(0)
	reqs := f.markerRequests(n)
	if len(reqs) != 1 || len(reqs[brokerA].Markers[0].Partitions) != 2 {
		t.Fatalf("marker requests: %+v, want one to A with both partitions", reqs)
	}
	before := len(f.Log(0).Batches)
	f.ackMarkers(brokerA, reqs[brokerA], allNone)
	if got := len(f.Log(0).Batches) - before; got != 1 {
		t.Fatalf("%d writes after the markers, want one CompleteCommit", got)
	}
	f.Commit()
	if d := f.describe("tx"); d.State != "CompleteCommit" || d.ProducerEpoch != 1 {
		t.Fatalf("after the markers: %+v", d)
	}
	if err := f.addPartitions(pid, 1, tp("a", 0)); err != proto.None {
		t.Fatalf("the next transaction: %s", err)
	}
	f.Commit()
	if d := f.describe("tx"); d.State != "Ongoing" {
		t.Fatalf("the next transaction: %+v", d)
	}
}

// A load reads __transaction_state to the log end, as Kafka's
// TransactionStateManager.loadTransactionMetadata does (FetchIsolation.LOG_END),
// so a PrepareCommit the previous leader wrote but never committed (at or
// above the high watermark) is acted on: its markers go out at once. This
// is the step that lets a transaction tear in Kafka too: should this leader
// fail before its followers copy that record, and a replica without it be
// elected, the next coordinator loads the transaction as Ongoing and aborts
// it where the commit markers were not yet written (a transactional
// producer under broker kills, pauses and cuts found it).
func TestLoadActsOnUncommittedPrepare(t *testing.T) {
	f, init := started(t)
	f.leaders[tp("a", 0)] = brokerA
	f.leaders[tp("b", 0)] = brokerB
	if err := f.addPartitions(init.ProducerID, 0, tp("a", 0), tp("b", 0)); err != proto.None {
		t.Fatalf("AddPartitionsToTxn: %s", err)
	}
	f.Request(client, &proto.EndTxnRequest{TransactionalID: "tx", ProducerID: init.ProducerID, ProducerEpoch: 0, Committed: true})
	// The PrepareCommit is in the log, not committed, when the leadership
	// moves (the new leader copied it; the high watermark is below it).
	l := f.Log(0)
	prepare := l.Batches[len(l.Batches)-1]
	if prepare.BaseOffset < l.HW {
		t.Fatalf("the PrepareCommit at %d is below the high watermark %d", prepare.BaseOffset, l.HW)
	}
	l.Dones = nil // its append is never answered: the old leader is gone
	f.C.OnResign(metadata.TopicPartition{Topic: Topic, Partition: 0}, 3)
	f.Log(0).Epoch = 5
	f.C.OnBecomeLeader(metadata.TopicPartition{Topic: Topic, Partition: 0}, 5)
	n := len(f.Sent)
	f.Advance(0)
	if d := f.describe("tx"); d.State != "PrepareCommit" || d.ProducerEpoch != 1 {
		t.Fatalf("loaded: %+v", d)
	}
	reqs := f.markerRequests(n)
	for _, b := range []sim.NodeID{brokerA, brokerB} {
		if reqs[b] == nil {
			t.Fatalf("no commit marker sent to %v after loading an uncommitted PrepareCommit: %+v", b, f.Sent[n:])
		}
		if mk := reqs[b].Markers[0]; !mk.Committed || mk.CoordinatorEpoch != 5 || mk.ProducerEpoch != 1 {
			t.Fatalf("the marker to %v: %+v", b, mk)
		}
	}
	if l.HW > prepare.BaseOffset {
		t.Fatalf("the high watermark moved to %d", l.HW)
	}
}

// delayed-end-txn (KAFKA-17754): with transaction version 1's ends the
// epoch stays, so an EndTxn of the producer's last transaction that
// arrives late passes the epoch check of its next one and ends it, with
// markers the partitions check as version 1's; a retry of a completed end
// is NONE at the same epoch. With version 2 (the bug off) the end bumped
// the epoch and the late request is PRODUCER_FENCED.
func TestDelayedEndTxnEndsTheNextTransaction(t *testing.T) {
	for _, bug := range []bool{false, true} {
		t.Run(map[bool]string{false: "off", true: "on"}[bug], func(t *testing.T) {
			f, init := started(t)
			f.C.cfg.DelayedEndTxn = bug
			pid := init.ProducerID
			f.leaders[tp("a", 0)] = brokerA
			if err := f.addPartitions(pid, 0, tp("a", 0)); err != proto.None {
				t.Fatalf("AddPartitionsToTxn: %s", err)
			}
			late := &proto.EndTxnRequest{TransactionalID: "tx", ProducerID: pid, ProducerEpoch: 0, Committed: true}
			f.Request(client, late) // the retry of a request still on its way
			n := len(f.Sent)
			f.Commit()
			r := f.To(client, n)[0].(*proto.EndTxnResponse)
			next := int16(1)
			if bug {
				next = 0
			}
			if r.Error != proto.None || r.ProducerEpoch != next {
				t.Fatalf("EndTxn: %+v, want NONE with epoch %d", r, next)
			}
			n = len(f.Sent)
			f.Advance(0)
			reqs := f.markerRequests(n)
			if mk := reqs[brokerA].Markers[0]; mk.ProducerEpoch != next || mk.NoEpochBump != bug {
				t.Fatalf("marker: %+v", mk)
			}
			f.ackMarkers(brokerA, reqs[brokerA], allNone)
			f.Commit() // CompleteCommit
			if bug {
				if r := f.Request(client, late)[0].(*proto.EndTxnResponse); r.Error != proto.None || r.ProducerEpoch != 0 {
					t.Fatalf("a retry after completion: %+v, want NONE at epoch 0", r)
				}
			}
			// The next transaction, then the late request.
			if err := f.addPartitions(pid, next, tp("a", 0)); err != proto.None {
				t.Fatalf("the next transaction's AddPartitionsToTxn: %s", err)
			}
			out := f.Request(client, late)
			if !bug {
				if len(out) != 1 || out[0].(*proto.EndTxnResponse).Error != proto.ProducerFenced {
					t.Fatalf("the late EndTxn: %+v, want PRODUCER_FENCED", out)
				}
				if d := f.describe("tx"); d.State != "Ongoing" {
					t.Fatalf("after the late EndTxn: %+v", d)
				}
				return
			}
			f.Commit()
			if d := f.describe("tx"); d.State != "PrepareCommit" || d.ProducerEpoch != 0 {
				t.Fatalf("the late EndTxn did not end the next transaction: %+v", d)
			}
		})
	}
}

// KAFKA-18464 (TransactionCoordinator.endTransaction checks a pending
// transition before the epoch): a producer whose commit was answered goes
// on with the bumped epoch; its next transaction's send fails before any
// partition is added, and its abort reaches the coordinator while the
// commit's markers are still written (PrepareCommit, CompleteCommit
// pending). It is told CONCURRENT_TRANSACTIONS and retries, not fenced
// (PrepareCommit's epoch check takes only the retry's epoch, one below),
// and once the commit is complete the same abort is taken.
func TestEmptyAbortWhileMarkersPendingRetries(t *testing.T) {
	f, init := started(t)
	pid := init.ProducerID
	f.leaders[tp("a", 0)] = brokerA
	if err := f.addPartitions(pid, 0, tp("a", 0)); err != proto.None {
		t.Fatalf("AddPartitionsToTxn: %s", err)
	}
	n := len(f.Sent)
	f.Request(client, &proto.EndTxnRequest{TransactionalID: "tx", ProducerID: pid, ProducerEpoch: 0, Committed: true})
	f.Commit()
	if r := f.To(client, n)[0].(*proto.EndTxnResponse); r.Error != proto.None || r.ProducerEpoch != 1 {
		t.Fatalf("EndTxn commit: %+v, want NONE with epoch 1", r)
	}
	n = len(f.Sent)
	f.Advance(0)
	reqs := f.markerRequests(n)
	if reqs[brokerA] == nil {
		t.Fatalf("no marker request to A: %+v", reqs)
	}
	abort := &proto.EndTxnRequest{TransactionalID: "tx", ProducerID: pid, ProducerEpoch: 1}
	if r := f.Request(client, abort)[0].(*proto.EndTxnResponse); r.Error != proto.ConcurrentTransactions {
		t.Fatalf("an empty abort at the bumped epoch while the markers are written: %+v, want CONCURRENT_TRANSACTIONS (KAFKA-18464), not PRODUCER_FENCED", r)
	}
	f.ackMarkers(brokerA, reqs[brokerA], allNone)
	f.Commit() // CompleteCommit
	if d := f.describe("tx"); d.State != "CompleteCommit" || d.ProducerEpoch != 1 {
		t.Fatalf("after the markers: %+v", d)
	}
	n = len(f.Sent)
	if out := f.Request(client, abort); len(out) != 0 {
		t.Fatalf("the retried abort answered before PrepareAbort was committed: %+v", out[0])
	}
	f.Commit()
	if r := f.To(client, n)[0].(*proto.EndTxnResponse); r.Error != proto.None || r.ProducerEpoch != 2 {
		t.Fatalf("the retried abort: %+v, want NONE with epoch 2", r)
	}
}

// A partition that answers the abort markers INVALID_PRODUCER_EPOCH (its
// producer state is at an epoch the coordinator never reached: the
// records of __transaction_state that had it were lost) stops them for
// good, as Kafka's TransactionMarkerRequestCompletionHandler does
// (abortSending): the transaction stays PrepareAbort with CompleteAbort
// pending, no marker is sent again, the timeout abort passes it by
// (timedOutTransactions: Ongoing only), and the producer's abort and
// InitProducerId are CONCURRENT_TRANSACTIONS. The god view lists it as
// stalled. A coordinator that loads it again sends the markers once more.
func TestAbandonedMarkersLeavePrepareAbort(t *testing.T) {
	f, init := started(t)
	pid := init.ProducerID
	f.leaders[tp("a", 0)] = brokerA
	if err := f.addPartitions(pid, 0, tp("a", 0)); err != proto.None {
		t.Fatalf("AddPartitionsToTxn: %s", err)
	}
	abort := &proto.EndTxnRequest{TransactionalID: "tx", ProducerID: pid, ProducerEpoch: 0}
	f.Request(client, abort)
	n := len(f.Sent)
	f.Commit()
	if r := f.To(client, n); len(r) != 1 || r[0].(*proto.EndTxnResponse).Error != proto.None {
		t.Fatalf("the abort: %+v", r)
	}
	n = len(f.Sent)
	f.Advance(0)
	reqs := f.markerRequests(n)
	if reqs[brokerA] == nil || reqs[brokerA].Markers[0].ProducerEpoch != 1 {
		t.Fatalf("the abort markers: %+v", reqs)
	}
	f.ackMarkers(brokerA, reqs[brokerA], func(proto.TopicPartition) proto.ErrorCode { return proto.InvalidProducerEpoch })
	if got := f.C.StalledTransactions(); len(got) != 1 || got[0] != "tx" {
		t.Fatalf("stalled: %v, want [tx]", got)
	}
	n = len(f.Sent)
	f.Advance(5 * time.Minute) // retry backoffs, the timeout abort's checks
	if reqs := f.markerRequests(n); len(reqs) != 0 {
		t.Fatalf("markers sent again after INVALID_PRODUCER_EPOCH: %+v", reqs)
	}
	if d := f.describe("tx"); d.State != "PrepareAbort" || d.ProducerEpoch != 1 {
		t.Fatalf("after the markers were abandoned: %+v, want PrepareAbort at epoch 1", d)
	}
	// The producer went on at an epoch the coordinator lost (5): its
	// abort, its retry of the coordinator's, and a new instance's
	// InitProducerId are all told to retry.
	for _, epoch := range []int16{5, 0} {
		r := f.Request(client, &proto.EndTxnRequest{TransactionalID: "tx", ProducerID: pid, ProducerEpoch: epoch})
		if e := r[0].(*proto.EndTxnResponse).Error; e != proto.ConcurrentTransactions {
			t.Fatalf("an abort at epoch %d while the markers are abandoned: %s, want CONCURRENT_TRANSACTIONS", epoch, e)
		}
	}
	req := &proto.InitProducerIDRequest{TransactionalID: "tx", TransactionTimeout: time.Minute, ProducerID: -1, ProducerEpoch: -1}
	if r := f.Request(client, req)[0].(*proto.InitProducerIDResponse); r.Error != proto.ConcurrentTransactions {
		t.Fatalf("InitProducerId while the markers are abandoned: %+v, want CONCURRENT_TRANSACTIONS", r)
	}
	// A new coordinator epoch loads PrepareAbort and sends the markers
	// again, with its own epoch.
	n = len(f.Sent)
	f.Lead(4)
	if got := f.C.StalledTransactions(); len(got) != 0 {
		t.Fatalf("stalled after the reload: %v, want none", got)
	}
	reqs = f.markerRequests(n)
	if reqs[brokerA] == nil || reqs[brokerA].Markers[0].CoordinatorEpoch != 4 || reqs[brokerA].Markers[0].ProducerEpoch != 1 {
		t.Fatalf("the reloaded coordinator's markers: %+v", reqs)
	}
}
