package broker_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"kafkasim/model/broker"
	"kafkasim/model/cluster"
	"kafkasim/model/metadata"
	"kafkasim/model/partlog"
	"kafkasim/model/proto"
	"kafkasim/model/record"
	"kafkasim/sim"
)

// txnClient is a client node that sends a script of requests, one a
// second from its start, and keeps the answers by correlation id.
type txnClient struct {
	env     sim.Env
	script  []txnSend
	answers map[uint64]sim.Message
}

type txnSend struct {
	to sim.NodeID
	m  sim.Message
}

type txnStep int

func (s txnStep) String() string { return fmt.Sprintf("txnStep %d", int(s)) }

func (c *txnClient) Start(env sim.Env) {
	c.env = env
	for i := range c.script {
		env.After(time.Duration(i+1)*time.Second, txnStep(i))
	}
}

func (c *txnClient) Fire(t sim.Timer) {
	s := c.script[t.(txnStep)]
	c.env.Send(s.to, s.m)
}

func (c *txnClient) Deliver(_ sim.NodeID, m sim.Message) {
	switch m := m.(type) {
	case *proto.ProduceResponse:
		// The broker reuses its answers: keep a copy.
		cp := *m
		cp.Partitions = slices.Clone(m.Partitions)
		c.answers[m.CorrelationID] = &cp
	case *proto.FetchResponse:
		cp := *m
		cp.Partitions = slices.Clone(m.Partitions)
		c.answers[m.CorrelationID] = &cp
	case *proto.ListOffsetsResponse:
		c.answers[m.CorrelationID] = m
	case *proto.WriteTxnMarkersResponse:
		c.answers[m.CorrelationID] = m
	}
}

// fakeTxnCoordinator answers AddPartitionsToTxn with what the test says
// (by transactional id), and remembers what it was asked; with busyAsks,
// the first asks are CONCURRENT_TRANSACTIONS (the producer's previous
// transaction still ending), and askedAt notes when each came.
type fakeTxnCoordinator struct {
	topics   *broker.InternalTopics
	answers  map[string]proto.ErrorCode
	asked    *[]proto.AddPartitionsToTxnRequest
	busyAsks int
	now      func() time.Duration
	askedAt  *[]time.Duration
}

func (f *fakeTxnCoordinator) OnBecomeLeader(metadata.TopicPartition, int32) {}
func (f *fakeTxnCoordinator) OnResign(metadata.TopicPartition, int32)       {}
func (f *fakeTxnCoordinator) Handles(m sim.Message) bool {
	_, ok := m.(*proto.AddPartitionsToTxnRequest)
	return ok
}
func (f *fakeTxnCoordinator) HandleRequest(from sim.NodeID, m sim.Message) {
	r := m.(*proto.AddPartitionsToTxnRequest)
	*f.asked = append(*f.asked, *r)
	err := f.answers[r.TransactionalID]
	if f.askedAt != nil {
		*f.askedAt = append(*f.askedAt, f.now())
	}
	if f.busyAsks > 0 {
		f.busyAsks--
		err = proto.ConcurrentTransactions
	}
	resp := &proto.AddPartitionsToTxnResponse{CorrelationID: r.CorrelationID}
	for _, tp := range r.Partitions {
		resp.Partitions = append(resp.Partitions, proto.TxnPartitionResult{TopicPartition: tp, Error: err})
	}
	f.topics.Send(from, resp)
}

// fakeGroupCompleter stands in for the group coordinator on
// __consumer_offsets: it writes the markers it is handed and records them.
type fakeGroupCompleter struct {
	topics *broker.InternalTopics
	heard  *[]string
}

func (f *fakeGroupCompleter) OnBecomeLeader(metadata.TopicPartition, int32) {}
func (f *fakeGroupCompleter) OnResign(metadata.TopicPartition, int32)       {}
func (f *fakeGroupCompleter) CompleteTransaction(tp metadata.TopicPartition, pid int64, epoch int16, coordEpoch int32, committed, noEpochBump bool, done func(proto.ErrorCode)) {
	res := f.topics.AppendMarker(tp, pid, epoch, coordEpoch, committed, noEpochBump, 0, func(r broker.AppendResult) {
		*f.heard = append(*f.heard, fmt.Sprintf("%s pid %d committed %v at %d", tp, pid, committed, r.BaseOffset))
		done(r.Error)
	})
	if res.Error != proto.None {
		done(res.Error)
	}
}

// A transactional produce's first batch on a partition waits for the
// coordinator's word (AddPartitionsToTxn); the next does not; the
// coordinator's refusal answers the produce, mapped as Kafka does; the
// markers land on the partition leaders, fenced when stale, and the group
// coordinator hears of its partition's; read_committed reads stop at the
// LSO and carry the aborted list.
func TestTransactionsOnThePartitionLeader(t *testing.T) {
	var asked []proto.AddPartitionsToTxnRequest
	var heard []string
	cfg := cluster.DefaultConfig(1)
	cfg.Controllers, cfg.Brokers = 1, 3
	cfg.Topics = []cluster.TopicSpec{
		{Name: "t", Partitions: 1, ReplicationFactor: 3, MinInsyncReplicas: 2, Assignment: [][]int32{{1, 2, 3}}},
		{Name: broker.TransactionStateTopic, Partitions: 1, ReplicationFactor: 3, Assignment: [][]int32{{2, 3, 1}}},
		{Name: "__consumer_offsets", Partitions: 1, ReplicationFactor: 3, Assignment: [][]int32{{1, 2, 3}}},
	}
	answers := map[string]proto.ErrorCode{"tx": proto.None, "fenced": proto.ProducerFenced,
		"moved": proto.NotCoordinator, "busy": proto.ConcurrentTransactions}
	cfg.Data.Coordinators = []broker.CoordinatorSpec{
		{Topic: broker.TransactionStateTopic, New: func(topics *broker.InternalTopics) broker.Coordinator {
			return &fakeTxnCoordinator{topics: topics, answers: answers, asked: &asked}
		}},
		{Topic: "__consumer_offsets", New: func(topics *broker.InternalTopics) broker.Coordinator {
			return &fakeGroupCompleter{topics: topics, heard: &heard}
		}},
	}
	c, err := cluster.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	leader := c.BrokerNode(1)
	tp := proto.TopicPartition{Topic: "t", Partition: 0}
	offsetsTP := proto.TopicPartition{Topic: "__consumer_offsets", Partition: 0}
	txnBatch := func(pid int64, epoch int16, seq int32) *record.Batch {
		return record.New([]record.Record{{Key: "k", HasKey: true, Value: fmt.Sprint(seq)}},
			record.Producer{ID: pid, Epoch: epoch, BaseSequence: seq}, true, record.CompressionNone)
	}
	produce := func(corr uint64, txnID string, b *record.Batch) txnSend {
		return txnSend{leader, &proto.ProduceRequest{CorrelationID: corr, TransactionalID: txnID, Acks: proto.AcksAll,
			Timeout: 10 * time.Second, Partitions: []proto.ProducePartition{{TopicPartition: tp, Batch: b}}}}
	}
	fetch := func(corr uint64, iso proto.IsolationLevel) txnSend {
		return txnSend{leader, &proto.FetchRequest{CorrelationID: corr, ReplicaID: -1, BrokerEpoch: -1, Isolation: iso,
			Partitions: []proto.FetchPartition{{TopicPartition: tp, FetchOffset: 0, CurrentLeaderEpoch: -1, LastFetchedEpoch: -1, MaxBytes: 1 << 20}}}}
	}
	latest := func(corr uint64, committed bool) txnSend {
		return txnSend{leader, &proto.ListOffsetsRequest{CorrelationID: corr, ReadCommitted: committed,
			Partitions: []proto.ListOffsetsPartition{{TopicPartition: tp, Timestamp: proto.ListLatest, CurrentLeaderEpoch: -1}}}}
	}
	markers := func(corr uint64, epoch int16, coordinatorEpoch int32, tps ...proto.TopicPartition) txnSend {
		return txnSend{leader, &proto.WriteTxnMarkersRequest{CorrelationID: corr, Markers: []proto.TxnMarker{
			{ProducerID: 1000, ProducerEpoch: epoch, Committed: false, CoordinatorEpoch: coordinatorEpoch, Partitions: tps}}}}
	}
	client := &txnClient{answers: map[uint64]sim.Message{}}
	client.script = []txnSend{
		{}, {}, {}, {}, // let the cluster settle: steps 0-3 send nothing
		produce(10, "tx", txnBatch(1000, 0, 0)), // 0: verified first
		produce(11, "tx", txnBatch(1000, 0, 1)), // 1: in the transaction already
		produce(12, "", record.New([]record.Record{{Key: "k", HasKey: true, Value: "plain"}}, record.Producer{ID: record.NoProducer}, false, record.CompressionNone)), // 2
		fetch(13, proto.ReadCommitted),
		fetch(14, proto.ReadUncommitted),
		latest(15, true),
		latest(16, false),
		markers(17, 1, 0, tp, offsetsTP), // abort: 3 on t
		fetch(18, proto.ReadCommitted),
		markers(19, 0, 0, tp),  // an older epoch
		markers(20, 2, -1, tp), // an older coordinator
		markers(21, 1, 0, tp),  // a retry of the marker: written again, at 4
		produce(22, "fenced", txnBatch(2000, 0, 0)),
		produce(23, "moved", txnBatch(3000, 0, 0)),
		produce(24, "busy", txnBatch(4000, 0, 0)),
		latest(25, true),
	}
	for i := range client.script[:4] {
		client.script[i] = txnSend{leader, &proto.MetadataRequest{CorrelationID: uint64(100 + i), Topics: []string{}}}
	}
	c.World.AddNode(sim.NodeSpec{Name: "client", Role: "producer", New: func() sim.Node { return client }})
	c.World.Start()
	c.World.RunUntil(time.Duration(len(client.script)+3) * time.Second)

	producedAt := func(corr uint64) (int64, proto.ErrorCode) {
		t.Helper()
		r, ok := client.answers[corr].(*proto.ProduceResponse)
		if !ok {
			t.Fatalf("produce %d: no answer", corr)
		}
		return r.Partitions[0].BaseOffset, r.Partitions[0].Error
	}
	for corr, want := range map[uint64]struct {
		base int64
		err  proto.ErrorCode
	}{10: {0, proto.None}, 11: {1, proto.None}, 12: {2, proto.None},
		22: {-1, proto.InvalidProducerEpoch}, 23: {-1, proto.NotEnoughReplicas}, 24: {-1, proto.ConcurrentTransactions}} {
		if base, err := producedAt(corr); base != want.base || err != want.err {
			t.Errorf("produce %d: at %d %v, want %d %v", corr, base, err, want.base, want.err)
		}
	}
	var txns []string
	for _, r := range asked {
		txns = append(txns, fmt.Sprintf("%s %d/%d %v verify %v", r.TransactionalID, r.ProducerID, r.ProducerEpoch, r.Partitions, r.VerifyOnly))
	}
	// The leader asks again on CONCURRENT_TRANSACTIONS until
	// add.partitions.to.txn.retry.backoff.max.ms has passed
	// (TestLeaderAsksAgainOnConcurrentTransactions), then answers it.
	busy := slices.Index(txns, "busy 4000/0 [t-0] verify false")
	if want := []string{"tx 1000/0 [t-0] verify false", "fenced 2000/0 [t-0] verify false",
		"moved 3000/0 [t-0] verify false"}; busy != len(want) || !slices.Equal(txns[:busy], want) || len(txns)-busy < 2 ||
		slices.ContainsFunc(txns[busy:], func(s string) bool { return s != txns[busy] }) {
		t.Errorf("the coordinator was asked %q, want %q then busy's asked again", txns, want)
	}

	fetched := func(corr uint64) proto.FetchPartitionResponse {
		t.Helper()
		r, ok := client.answers[corr].(*proto.FetchResponse)
		if !ok {
			t.Fatalf("fetch %d: no answer", corr)
		}
		return r.Partitions[0]
	}
	offsets := func(p proto.FetchPartitionResponse) []int64 {
		var out []int64
		for _, b := range p.Batches {
			out = append(out, b.BaseOffset)
		}
		return out
	}
	if p := fetched(13); len(p.Batches) != 0 || p.LastStableOffset != 0 || p.HighWatermark != 3 {
		t.Errorf("read_committed with the transaction open: %v, LSO %d, HW %d", offsets(p), p.LastStableOffset, p.HighWatermark)
	}
	if p := fetched(14); !slices.Equal(offsets(p), []int64{0, 1, 2}) || p.LastStableOffset != 0 || p.AbortedTransactions != nil {
		t.Errorf("read_uncommitted: %v, LSO %d, aborted %v", offsets(p), p.LastStableOffset, p.AbortedTransactions)
	}
	listed := func(corr uint64) int64 {
		t.Helper()
		r, ok := client.answers[corr].(*proto.ListOffsetsResponse)
		if !ok {
			t.Fatalf("list offsets %d: no answer", corr)
		}
		return r.Partitions[0].Offset
	}
	if got, got2 := listed(15), listed(16); got != 0 || got2 != 3 {
		t.Errorf("latest: read_committed %d, read_uncommitted %d; want 0 and 3", got, got2)
	}
	markerErrs := func(corr uint64) []proto.ErrorCode {
		t.Helper()
		r, ok := client.answers[corr].(*proto.WriteTxnMarkersResponse)
		if !ok {
			t.Fatalf("markers %d: no answer", corr)
		}
		var out []proto.ErrorCode
		for _, p := range r.Markers[0].Partitions {
			out = append(out, p.Error)
		}
		return out
	}
	for corr, want := range map[uint64][]proto.ErrorCode{17: {proto.None, proto.None}, 19: {proto.InvalidProducerEpoch},
		20: {proto.TransactionCoordinatorFenced}, 21: {proto.None}} {
		if got := markerErrs(corr); !slices.Equal(got, want) {
			t.Errorf("markers %d: %v, want %v", corr, got, want)
		}
	}
	p := fetched(18)
	if !slices.Equal(offsets(p), []int64{0, 1, 2, 3}) || p.LastStableOffset != 4 ||
		!slices.Equal(p.AbortedTransactions, []proto.AbortedTransaction{{ProducerID: 1000, FirstOffset: 0}}) {
		t.Errorf("read_committed after the abort: %v, LSO %d, aborted %v", offsets(p), p.LastStableOffset, p.AbortedTransactions)
	}
	if !p.Batches[3].IsAbort() {
		t.Errorf("offset 3 is no abort marker: %+v", p.Batches[3])
	}
	if got := listed(25); got != 5 {
		t.Errorf("read_committed latest at the end: %d, want 5 (the retried marker at 4)", got)
	}
	// The followers copied the markers: the same index, the same LSO, for
	// whichever of them leads next.
	for b := int32(1); b <= 3; b++ {
		l := c.Broker(b).PartitionLog(metadata.TopicPartition{Topic: "t", Partition: 0})
		if got := l.AbortedTransactions(); !slices.Equal(got, []partlog.AbortedTxn{{ProducerID: 1000, FirstOffset: 0, LastOffset: 3, LastStableOffset: 4}}) {
			t.Errorf("broker %d: aborted %v", b, got)
		}
		if got := l.LastStableOffset(l.LEO()); got != 5 {
			t.Errorf("broker %d: LSO %d, want 5", b, got)
		}
	}
	// Only the first marker named __consumer_offsets.
	if want := []string{"__consumer_offsets-0 pid 1000 committed false at 0"}; !slices.Equal(heard, want) {
		t.Errorf("the group coordinator heard %q, want %q", heard, want)
	}
	for _, v := range c.Audit.Violations() {
		t.Errorf("the audit found a violation: %+v", v)
	}
}

// produceFirstBatch has a client, once the cluster has settled (four
// metadata requests a second apart), send producer 1000's first
// transactional batch to t-0 on broker 1, runs the world until until, and
// returns the answer, or nil.
func produceFirstBatch(c *cluster.Cluster, timeout, until time.Duration) *proto.ProduceResponse {
	leader := c.BrokerNode(1)
	b := record.New([]record.Record{{Key: "k", HasKey: true}}, record.Producer{ID: 1000, BaseSequence: 0}, true, record.CompressionNone)
	client := &txnClient{answers: map[uint64]sim.Message{}}
	for i := range 4 {
		client.script = append(client.script, txnSend{leader, &proto.MetadataRequest{CorrelationID: uint64(i + 1), Topics: []string{}}})
	}
	client.script = append(client.script, txnSend{leader, &proto.ProduceRequest{CorrelationID: 10, TransactionalID: "tx", Acks: proto.AcksAll,
		Timeout: timeout, Partitions: []proto.ProducePartition{{TopicPartition: proto.TopicPartition{Topic: "t", Partition: 0}, Batch: b}}}})
	c.World.AddNode(sim.NodeSpec{Name: "client", Role: "producer", New: func() sim.Node { return client }})
	c.World.Start()
	c.World.RunUntil(until)
	r, _ := client.answers[10].(*proto.ProduceResponse)
	return r
}

// silentTxnCoordinator takes AddPartitionsToTxn and never answers.
type silentTxnCoordinator struct{ asked *int }

func (f *silentTxnCoordinator) OnBecomeLeader(metadata.TopicPartition, int32) {}
func (f *silentTxnCoordinator) OnResign(metadata.TopicPartition, int32)       {}
func (f *silentTxnCoordinator) Handles(m sim.Message) bool {
	_, ok := m.(*proto.AddPartitionsToTxnRequest)
	return ok
}
func (f *silentTxnCoordinator) HandleRequest(sim.NodeID, sim.Message) { *f.asked++ }

// Without a coordinator to ask (no __transaction_state), or one that never
// answers (request.timeout.ms), a transaction's first batch is answered
// NOT_ENOUGH_REPLICAS, which the producer retries, and nothing is
// appended.
func TestTransactionVerificationWithoutACoordinator(t *testing.T) {
	for _, withTopic := range []bool{false, true} {
		asked := 0
		cfg := cluster.DefaultConfig(1)
		cfg.Controllers, cfg.Brokers = 1, 3
		cfg.Topics = []cluster.TopicSpec{{Name: "t", Partitions: 1, ReplicationFactor: 3, Assignment: [][]int32{{1, 2, 3}}}}
		if withTopic {
			cfg.Topics = append(cfg.Topics, cluster.TopicSpec{Name: broker.TransactionStateTopic, Partitions: 3, ReplicationFactor: 3})
			cfg.Data.Coordinators = []broker.CoordinatorSpec{{Topic: broker.TransactionStateTopic, New: func(*broker.InternalTopics) broker.Coordinator {
				return &silentTxnCoordinator{asked: &asked}
			}}}
		}
		c, err := cluster.Build(cfg)
		if err != nil {
			t.Fatal(err)
		}
		r := produceFirstBatch(c, time.Minute, 40*time.Second)
		if r == nil {
			t.Fatalf("with __transaction_state %v: no answer", withTopic)
		}
		if p := r.Partitions[0]; p.Error != proto.NotEnoughReplicas || p.BaseOffset != -1 {
			t.Errorf("with __transaction_state %v: %v at %d, want NOT_ENOUGH_REPLICAS", withTopic, p.Error, p.BaseOffset)
		}
		if withTopic != (asked == 1) {
			t.Errorf("with __transaction_state %v: the coordinator was asked %d times", withTopic, asked)
		}
		if leo := c.Broker(1).PartitionLog(metadata.TopicPartition{Topic: "t", Partition: 0}).LEO(); leo != 0 {
			t.Errorf("with __transaction_state %v: the log ends at %d, want nothing appended", withTopic, leo)
		}
	}
}

// A leader whose verification meets CONCURRENT_TRANSACTIONS asks the
// coordinator again itself, add.partitions.to.txn.retry.backoff.ms apart,
// for add.partitions.to.txn.retry.backoff.max.ms since its first ask
// (ReplicaManager's maybeRetryOnConcurrentTransactions, transaction version
// 2): a coordinator free again within the window has the batch appended
// with the producer never hearing the error; past it, or with the window
// 0, the produce answers CONCURRENT_TRANSACTIONS.
func TestLeaderAsksAgainOnConcurrentTransactions(t *testing.T) {
	for _, tc := range []struct {
		name      string
		busyAsks  int
		window    time.Duration
		wantAsks  int
		wantError proto.ErrorCode
	}{
		{"free on the third ask", 2, 100 * time.Millisecond, 3, proto.None},
		{"busy past the window", 1000, 100 * time.Millisecond, -1, proto.ConcurrentTransactions},
		{"no window", 2, 0, 1, proto.ConcurrentTransactions},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked []time.Duration
			var requests []proto.AddPartitionsToTxnRequest
			cfg := cluster.DefaultConfig(1)
			cfg.Controllers, cfg.Brokers = 1, 3
			cfg.Data.AddPartitionsRetryBackoffMax = tc.window
			cfg.Topics = []cluster.TopicSpec{
				{Name: "t", Partitions: 1, ReplicationFactor: 3, Assignment: [][]int32{{1, 2, 3}}},
				{Name: broker.TransactionStateTopic, Partitions: 1, ReplicationFactor: 3, Assignment: [][]int32{{2, 3, 1}}},
			}
			var c *cluster.Cluster
			cfg.Data.Coordinators = []broker.CoordinatorSpec{{Topic: broker.TransactionStateTopic, New: func(topics *broker.InternalTopics) broker.Coordinator {
				return &fakeTxnCoordinator{topics: topics, answers: map[string]proto.ErrorCode{}, asked: &requests, busyAsks: tc.busyAsks,
					now: func() time.Duration { return c.World.Now() }, askedAt: &asked}
			}}}
			c, err := cluster.Build(cfg)
			if err != nil {
				t.Fatal(err)
			}
			r := produceFirstBatch(c, 10*time.Second, 8*time.Second)
			if r == nil {
				t.Fatalf("no answer to the produce; asked at %v", asked)
			}
			if p := r.Partitions[0]; p.Error != tc.wantError {
				t.Errorf("the produce was answered %v at %d, want %v", p.Error, p.BaseOffset, tc.wantError)
			}
			if tc.wantAsks >= 0 && len(asked) != tc.wantAsks {
				t.Errorf("the coordinator was asked %d times (%v), want %d", len(asked), asked, tc.wantAsks)
			}
			if len(asked) == 0 {
				t.Fatal("the coordinator was never asked")
			}
			for i := 1; i < len(asked); i++ {
				if gap := asked[i] - asked[i-1]; gap < 20*time.Millisecond {
					t.Errorf("ask %d came %v after the one before, want at least add.partitions.to.txn.retry.backoff.ms (20ms)", i, gap)
				}
				// An ask is made only while the window since the first is open.
				if asked[i-1]-asked[0] >= tc.window {
					t.Errorf("ask %d came after the window: asked at %v", i, asked)
				}
			}
			if tc.wantError == proto.ConcurrentTransactions && tc.window > 0 && asked[len(asked)-1]-asked[0] < tc.window-30*time.Millisecond {
				t.Errorf("the leader gave up at %v after its first ask, before the %v window", asked[len(asked)-1]-asked[0], tc.window)
			}
		})
	}
}
