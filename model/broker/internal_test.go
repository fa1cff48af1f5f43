package broker_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"kafkasim/model/broker"
	"kafkasim/model/cluster"
	"kafkasim/model/metadata"
	"kafkasim/model/proto"
	"kafkasim/model/record"
	"kafkasim/sim"
)

var offsetsTP = metadata.TopicPartition{Topic: "__consumer_offsets", Partition: 0}

// coordinatorHarness runs a fake coordinator on every broker of a cluster
// (one controller, brokers 1..3, __consumer_offsets-0 on all three led by
// broker 1, min.insync.replicas 2, unless newCoordinatorHarnessOn says
// otherwise) and checks what it is told against the god view.
type coordinatorHarness struct {
	t       *testing.T
	c       *cluster.Cluster
	acks    int16
	timeout time.Duration
	minISR  int
	// appending is set while a coordinator's Append runs: the broker must
	// not tell it of an append then.
	appending bool
	// fakes are the coordinators built, in the order the brokers started.
	fakes []*fakeCoordinator
	// committed are the records coordinators were told were committed, by
	// offset.
	committed map[int64]string
	// timeoutsBelowMinISR counts the writes that timed out while their
	// leader's ISR was below min ISR.
	timeoutsBelowMinISR int
}

func newCoordinatorHarness(t *testing.T, seed uint64, acks int16, timeout time.Duration) *coordinatorHarness {
	t.Helper()
	return newCoordinatorHarnessOn(t, seed, acks, timeout, []int32{1, 2, 3}, 2)
}

// newCoordinatorHarnessOn places __consumer_offsets-0 on replicas (the
// first leads) with min.insync.replicas minISR.
func newCoordinatorHarnessOn(t *testing.T, seed uint64, acks int16, timeout time.Duration, replicas []int32, minISR int) *coordinatorHarness {
	t.Helper()
	h := &coordinatorHarness{t: t, acks: acks, timeout: timeout, minISR: minISR, committed: map[int64]string{}}
	cfg := cluster.DefaultConfig(seed)
	cfg.Controllers, cfg.Brokers = 1, 3
	cfg.Topics = []cluster.TopicSpec{{Name: offsetsTP.Topic, Partitions: 1, ReplicationFactor: len(replicas), MinInsyncReplicas: minISR,
		Assignment: [][]int32{replicas}, Configs: map[string]string{"cleanup.policy": "compact"}}}
	cfg.Data.Coordinators = []broker.CoordinatorSpec{{Topic: offsetsTP.Topic, New: func(topics *broker.InternalTopics) broker.Coordinator {
		f := &fakeCoordinator{h: h, broker: topics.BrokerID(), topics: topics}
		h.fakes = append(h.fakes, f)
		return f
	}}}
	c, err := cluster.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.c = c
	return h
}

// of returns the coordinators broker b ran, one per start.
func (h *coordinatorHarness) of(b int32) []*fakeCoordinator {
	var out []*fakeCoordinator
	for _, f := range h.fakes {
		if f.broker == b {
			out = append(out, f)
		}
	}
	return out
}

func (h *coordinatorHarness) run(until time.Duration) {
	h.c.World.Start()
	h.c.World.RunUntil(until)
	for _, v := range h.c.Audit.Violations() {
		h.t.Errorf("the audit found a violation: %+v", v)
	}
}

// fakeCoordinator stands in for a group coordinator: when its broker
// becomes leader it loads the partition, then writes one record after
// another, each once the previous one is done (a follow-up write, as the
// next request would make), until it is told it resigned or an append
// fails at once.
type fakeCoordinator struct {
	h       *coordinatorHarness
	broker  int32
	topics  *broker.InternalTopics
	leading bool
	epoch   int32
	written int
	// doneSteps are the world's steps at which it heard of its appends.
	doneSteps []uint64
	// events is what it was told, in order: "leader 3", "load 120",
	// "committed", "failed NOT_LEADER_OR_FOLLOWER", "refused
	// NOT_ENOUGH_REPLICAS", "resign 4".
	events []string
}

func (f *fakeCoordinator) OnBecomeLeader(tp metadata.TopicPartition, leaderEpoch int32) {
	f.events = append(f.events, fmt.Sprintf("leader %d", leaderEpoch))
	f.leading, f.epoch = true, leaderEpoch
	f.load(tp)
	f.write(tp)
}

func (f *fakeCoordinator) OnResign(tp metadata.TopicPartition, leaderEpoch int32) {
	f.events = append(f.events, fmt.Sprintf("resign %d", leaderEpoch))
	f.leading = false
}

// load reads the partition from its log start to its log end, as Kafka's
// loader does, and checks that every record a coordinator was told was
// committed is there.
func (f *fakeCoordinator) load(tp metadata.TopicPartition) {
	t := f.h.t
	loaded := map[int64]string{}
	from := int64(0)
	for {
		r := f.topics.Read(tp, from, math.MaxInt64, 0, broker.IsolationLogEnd)
		if r.Error == proto.OffsetOutOfRange && from < r.LogStartOffset {
			from = r.LogStartOffset
			continue
		}
		if r.Error != proto.None {
			t.Errorf("broker %d: loading %s from %d: %v", f.broker, tp, from, r.Error)
			return
		}
		if r.LeaderEpoch != f.epoch {
			t.Errorf("broker %d: loading in epoch %d read epoch %d", f.broker, f.epoch, r.LeaderEpoch)
		}
		if len(r.Batches) == 0 {
			if from != r.LogEndOffset {
				t.Errorf("broker %d: the load stopped at %d, short of the log end %d", f.broker, from, r.LogEndOffset)
			}
			break
		}
		for _, b := range r.Batches {
			b.EachRecord(func(_ int, offset int64, _ []byte, _ bool, value []byte) { loaded[offset] = string(value) })
			from = b.NextOffset()
		}
	}
	for off, v := range f.h.committed { // kafkasim:orderless: each offset checked on its own
		if loaded[off] != v {
			t.Errorf("broker %d, leader in epoch %d: the load has %q at offset %d, where %q was committed", f.broker, f.epoch, loaded[off], off, v)
		}
	}
	f.events = append(f.events, fmt.Sprintf("load %d", len(loaded)))
}

func (f *fakeCoordinator) write(tp metadata.TopicPartition) {
	if !f.leading || f.written >= 2000 {
		return
	}
	f.written++
	v := fmt.Sprintf("broker %d epoch %d write %d", f.broker, f.epoch, f.written)
	b := record.New([]record.Record{{Key: v, Value: v, HasKey: true}}, record.Producer{ID: record.NoProducer}, false, record.CompressionNone)
	f.h.appending = true
	res := f.topics.Append(tp, b, f.h.acks, f.h.timeout, func(r broker.AppendResult) { f.done(tp, v, r) })
	f.h.appending = false
	if res.Error != proto.None {
		f.events = append(f.events, "refused "+res.Error.String())
		f.checkRefusal(tp, res.Error)
	}
}

// done checks what the broker says of an append against its replicas: a
// commit is on every member of the leader's ISR, which has at least min ISR
// members.
func (f *fakeCoordinator) done(tp metadata.TopicPartition, v string, r broker.AppendResult) {
	t := f.h.t
	if f.h.appending {
		t.Errorf("broker %d: told of an append (%v) inside Append", f.broker, r.Error)
	}
	f.doneSteps = append(f.doneSteps, f.h.c.World.Steps())
	if r.Error != proto.None {
		f.events = append(f.events, "failed "+r.Error.String())
		if r.Error == proto.RequestTimedOut {
			if len(f.h.c.Broker(f.broker).Partition(tp).ISR()) < f.h.minISR {
				f.h.timeoutsBelowMinISR++
			}
			f.write(tp)
		}
		return
	}
	f.events = append(f.events, "committed")
	leader := f.h.c.Broker(f.broker).Partition(tp)
	if !leader.IsLeader() || leader.HighWatermark() <= r.LastOffset {
		t.Errorf("broker %d: %q at %d committed, but leader=%v with high watermark %d", f.broker, v, r.LastOffset, leader.IsLeader(), leader.HighWatermark())
	}
	if isr := leader.ISR(); len(isr) < f.h.minISR {
		t.Errorf("broker %d: %q committed with ISR %v, below min ISR %d", f.broker, v, isr, f.h.minISR)
	}
	for _, m := range leader.ISR() {
		if replica := f.h.c.Broker(m).Partition(tp); replica == nil || replica.Log().LEO() <= r.LastOffset {
			t.Errorf("broker %d: %q at %d committed, but ISR member %d does not have it", f.broker, v, r.LastOffset, m)
		}
	}
	f.h.committed[r.LastOffset] = v
	f.write(tp)
}

// checkRefusal: an append refused NOT_ENOUGH_REPLICAS asked for acks=all
// while the leader's ISR was below min ISR.
func (f *fakeCoordinator) checkRefusal(tp metadata.TopicPartition, err proto.ErrorCode) {
	isr := f.h.c.Broker(f.broker).Partition(tp).ISR()
	if err != proto.NotEnoughReplicas || f.h.acks != proto.AcksAll || len(isr) >= f.h.minISR {
		f.h.t.Errorf("broker %d: append with acks=%d refused %v with ISR %v", f.broker, f.h.acks, err, isr)
	}
}

func (f *fakeCoordinator) count(event string) int {
	n := 0
	for _, e := range f.events {
		if e == event {
			n++
		}
	}
	return n
}

// epochOf parses "leader 3" or "resign 4".
func epochOf(t *testing.T, event string) int32 {
	var e int32
	if _, err := fmt.Sscanf(event[strings.IndexByte(event, ' ')+1:], "%d", &e); err != nil {
		t.Fatalf("event %q: %v", event, err)
	}
	return e
}

// Broker 1 leads, and its coordinator's writes (acks=1 and a wait for the
// high watermark, as Kafka 4's group coordinator writes) commit once both
// followers have them. Broker 1 then shuts down: leadership moves, the
// write it was waiting on fails NOT_LEADER_OR_FOLLOWER, then it is told it
// resigned, in the new epoch; the new leader's coordinator loads every
// committed record and writes on.
func TestCoordinatorWritesCommitAndTheNextLeaderLoadsThem(t *testing.T) {
	h := newCoordinatorHarness(t, 3, proto.AcksLeader, 0)
	if err := h.c.World.ScheduleFault(6*time.Second, sim.Fault{Kind: sim.FaultShutdown, Target: "broker-1", For: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}
	h.run(15 * time.Second)

	first := h.of(1)
	if len(first) != 2 {
		t.Fatalf("broker 1 built %d coordinators, want one per start (2)", len(first))
	}
	f := first[0]
	t.Logf("broker 1: %d events, %d commits, last %v", len(f.events), f.count("committed"), f.events[max(0, len(f.events)-3):])
	if len(f.events) < 3 || !strings.HasPrefix(f.events[0], "leader ") || f.events[1] != "load 0" || f.count("committed") < 50 {
		t.Fatalf("broker 1 should lead, load an empty log and commit writes: %v...", f.events[:min(len(f.events), 5)])
	}
	last := f.events[len(f.events)-1]
	if !strings.HasPrefix(last, "resign ") || epochOf(t, last) <= epochOf(t, f.events[0]) {
		t.Fatalf("broker 1's coordinator should end told it resigned, in a newer epoch: %v", f.events[len(f.events)-3:])
	}
	for _, e := range f.events[2 : len(f.events)-1] {
		if e != "committed" && e != "failed NOT_LEADER_OR_FOLLOWER" {
			t.Fatalf("broker 1's writes should commit, the last fail NOT_LEADER_OR_FOLLOWER: got %q", e)
		}
	}
	if f.count("failed NOT_LEADER_OR_FOLLOWER") > 1 || (f.count("failed NOT_LEADER_OR_FOLLOWER") == 1 && f.events[len(f.events)-2] != "failed NOT_LEADER_OR_FOLLOWER") {
		t.Fatalf("only the write in flight fails, before the resignation: %v", f.events[len(f.events)-3:])
	}
	if len(first[1].events) != 0 {
		t.Fatalf("restarted broker 1 no longer leads: its coordinator heard %v", first[1].events)
	}
	var next *fakeCoordinator
	for _, b := range []int32{2, 3} {
		if fs := h.of(b); len(fs) == 1 && len(fs[0].events) > 0 {
			next = fs[0]
		}
	}
	if next == nil {
		t.Fatal("neither broker 2 nor 3 became leader")
	}
	if next.events[0] != fmt.Sprintf("leader %d", epochOf(t, last)) || next.count("committed") < 50 {
		t.Fatalf("broker %d should lead in epoch %s and commit: %v", next.broker, last, next.events[:min(len(next.events), 3)])
	}
	if loaded := epochOf(t, next.events[1]); loaded < int32(f.count("committed")) {
		t.Fatalf("broker %d loaded %d records, fewer than broker 1 committed (%d)", next.broker, loaded, f.count("committed"))
	}
}

// Broker 1 is cut off from everyone: its coordinator's write waits (its
// followers cannot fetch it), the controller fences it and elects another
// leader; once the cut heals, broker 1 learns it, the waiting write fails
// NOT_LEADER_OR_FOLLOWER and then its coordinator hears it resigned.
func TestCoordinatorWriteFailsWhenLeadershipIsLost(t *testing.T) {
	h := newCoordinatorHarness(t, 5, proto.AcksLeader, 0)
	if err := h.c.World.ScheduleFault(5*time.Second, sim.Fault{Kind: sim.FaultPartition, Groups: [][]string{{"broker-1"}, {"rest"}}, For: 15 * time.Second}); err != nil {
		t.Fatal(err)
	}
	h.run(30 * time.Second)
	f := h.of(1)[0]
	n := len(f.events)
	if n < 4 || f.count("committed") < 50 {
		t.Fatalf("broker 1 should lead and commit: %v...", f.events[:min(n, 5)])
	}
	if f.events[n-2] != "failed NOT_LEADER_OR_FOLLOWER" || !strings.HasPrefix(f.events[n-1], "resign ") || f.count("failed NOT_LEADER_OR_FOLLOWER") != 1 {
		t.Fatalf("the waiting write fails NOT_LEADER_OR_FOLLOWER, then the coordinator resigns: %v", f.events[n-3:])
	}
	if v := h.c.Broker(1).Partition(offsetsTP); v.IsLeader() || v.LeaderEpoch() != epochOf(t, f.events[n-1]) {
		t.Fatalf("broker 1 resigned in epoch %s but its replica says leader=%v epoch %d", f.events[n-1], v.IsLeader(), v.LeaderEpoch())
	}
}

// Broker 1 is cut off from its followers, not from the controller: they
// stop fetching, and after replica.lag.time.max.ms it shrinks the ISR to
// itself, below min ISR 2. Its coordinator's writes time out after 2 s
// meanwhile. With acks=all (the transaction coordinator's) the first write
// once the ISR has shrunk is refused NOT_ENOUGH_REPLICAS; with acks=1 (the
// group coordinator's) it is appended but not committed until the followers
// are back in the ISR (the high watermark stands still below min ISR).
func TestCoordinatorWritesBelowMinISR(t *testing.T) {
	for _, acks := range []int16{proto.AcksAll, proto.AcksLeader} {
		t.Run(fmt.Sprintf("acks=%d", acks), func(t *testing.T) {
			h := newCoordinatorHarness(t, 7, acks, 2*time.Second)
			cut := sim.Fault{Kind: sim.FaultPartition, Groups: [][]string{{"broker-1"}, {"broker-2", "broker-3"}}, For: 45 * time.Second}
			if err := h.c.World.ScheduleFault(5*time.Second, cut); err != nil {
				t.Fatal(err)
			}
			h.run(70 * time.Second)
			f := h.of(1)[0]
			refused := slices.Index(f.events, "refused NOT_ENOUGH_REPLICAS")
			timedOut := slices.Index(f.events, "failed REQUEST_TIMED_OUT")
			if timedOut < 0 || h.timeoutsBelowMinISR == 0 && acks == proto.AcksLeader {
				t.Fatalf("writes should time out while the followers are cut off, some below min ISR: %d events, %d timeouts below min ISR", len(f.events), h.timeoutsBelowMinISR)
			}
			if acks == proto.AcksAll {
				if refused < 0 || refused != len(f.events)-1 {
					t.Fatalf("an acks=all write below min ISR should be refused NOT_ENOUGH_REPLICAS (and the writes stop): %v", f.events[max(0, len(f.events)-3):])
				}
				return
			}
			if refused >= 0 {
				t.Fatal("an acks=1 write was refused NOT_ENOUGH_REPLICAS")
			}
			if !slices.Contains(f.events[timedOut:], "committed") {
				t.Fatalf("writes should commit again once the followers are back: %v", f.events[max(0, len(f.events)-3):])
			}
			if isr := h.c.Broker(1).Partition(offsetsTP).ISR(); len(isr) != 3 {
				t.Fatalf("the followers should be back in the ISR: %v", isr)
			}
		})
	}
}

// With one replica an append is committed as it is made. The coordinator
// still hears of it in an event of its own, never inside Append, and so
// hears of the append it makes on hearing that one in the next event: each
// append's news comes after the broker finished what committed it, and a
// coordinator that appends on every answer cannot spin inside one event.
func TestCoordinatorHearsOfEachAppendInAnEventOfItsOwn(t *testing.T) {
	h := newCoordinatorHarnessOn(t, 3, proto.AcksLeader, 0, []int32{1}, 1)
	h.run(5 * time.Second)
	f := h.of(1)[0]
	if f.count("committed") < 100 {
		t.Fatalf("broker 1 should lead and commit its writes: %v...", f.events[:min(len(f.events), 5)])
	}
	for i := 1; i < len(f.doneSteps); i++ {
		if f.doneSteps[i] == f.doneSteps[i-1] {
			t.Fatalf("appends %d and %d were told in one event (step %d)", i-1, i, f.doneSteps[i])
		}
	}
}

// What the internal-topic API refuses, at once and with the reason: a read
// or an append on a replica that does not lead, a read from outside the
// log (with the log's ends, so that a loader can start again from its
// start), an append with acks other than 1 or all. A refused append's
// callback is never called.
func TestInternalTopicsRefuseWhatTheyCannotDo(t *testing.T) {
	h := newCoordinatorHarness(t, 3, proto.AcksLeader, 0)
	h.run(3 * time.Second)
	leader, follower := h.of(1)[0], h.of(2)[0]
	if !leader.leading || follower.leading {
		t.Fatalf("broker 1 should lead, broker 2 follow: %v, %v", leader.events[:min(len(leader.events), 3)], follower.events)
	}
	view := h.c.Broker(1).Partition(offsetsTP)
	never := func(r broker.AppendResult) { t.Errorf("a refused append was told %+v", r) }
	b := record.New([]record.Record{{Key: "k", Value: "v", HasKey: true}}, record.Producer{ID: record.NoProducer}, false, record.CompressionNone)

	if r := follower.topics.Read(offsetsTP, 0, math.MaxInt64, 0, broker.IsolationLogEnd); r.Error != proto.NotLeaderOrFollower || r.Batches != nil || r.LogEndOffset != -1 || r.LeaderEpoch != -1 {
		t.Errorf("a read on a follower: %+v, want NOT_LEADER_OR_FOLLOWER and no ends", r)
	}
	if r := follower.topics.Append(offsetsTP, b, proto.AcksLeader, 0, never); r.Error != proto.NotLeaderOrFollower || r.BaseOffset != -1 || r.LastOffset != -1 {
		t.Errorf("an append on a follower: %+v, want NOT_LEADER_OR_FOLLOWER at -1", r)
	}
	r := leader.topics.Read(offsetsTP, view.Log().LEO()+1, math.MaxInt64, 0, broker.IsolationLogEnd)
	if r.Error != proto.OffsetOutOfRange || r.Batches != nil || r.LogEndOffset != view.Log().LEO() || r.LogStartOffset != view.Log().LogStartOffset() ||
		r.HighWatermark != view.HighWatermark() || r.LeaderEpoch != view.LeaderEpoch() {
		t.Errorf("a read past the log end: %+v, want OFFSET_OUT_OF_RANGE with the log's ends (%d..%d, high watermark %d, epoch %d)",
			r, view.Log().LogStartOffset(), view.Log().LEO(), view.HighWatermark(), view.LeaderEpoch())
	}
	if r := leader.topics.Read(offsetsTP, view.HighWatermark(), math.MaxInt64, 0, broker.IsolationHighWatermark); r.Error != proto.None || len(r.Batches) != 0 {
		t.Errorf("a read from the high watermark, bounded by it: %+v, want nothing", r)
	}
	if r := leader.topics.Append(offsetsTP, b, proto.AcksNone, 0, never); r.Error != proto.InvalidRequiredAcks {
		t.Errorf("an append with acks=0: %+v, want INVALID_REQUIRED_ACKS", r)
	}
	h.c.World.RunFor(time.Second) // a callback due would be told by now

	// Another topic's partition is not the coordinator's to write: its
	// appends would not fail when the coordinator resigns.
	func() {
		defer func() {
			if p := recover(); p == nil || !strings.Contains(fmt.Sprint(p), "appended to orders-0") {
				t.Errorf("an append to another topic: recovered %v, want a panic naming it", p)
			}
		}()
		leader.topics.Append(metadata.TopicPartition{Topic: "orders", Partition: 0}, b, proto.AcksLeader, 0, never)
	}()
}
