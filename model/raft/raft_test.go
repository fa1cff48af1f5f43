package raft

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"kafkasim/model/proto"
	"kafkasim/model/storage"
	"kafkasim/sim"
)

type proposeTick struct{}

// voter is a test node: a bare replica that proposes an entry every interval
// while it leads.
type voter struct {
	cfg   Config
	every time.Duration
	env   sim.Env
	gate  *storage.Gate
	r     *Raft
	n     int
}

func (v *voter) Start(env sim.Env) {
	v.env = env
	v.gate = storage.NewGate(env)
	v.r = New(env, v.gate, v.cfg)
	v.gate.OnDurable = v.r.Durable
	v.r.Start()
	if v.every > 0 {
		env.After(v.every, proposeTick{})
	}
}

func (v *voter) Deliver(from sim.NodeID, m sim.Message) { v.r.Deliver(from, m) }

func (v *voter) Fire(t sim.Timer) {
	if v.gate.Fire(t) || v.r.Fire(t) {
		return
	}
	if _, ok := t.(proposeTick); ok {
		if v.r.IsLeader() {
			v.n++
			v.r.Propose([]byte(fmt.Sprintf("%s#%d", v.env.Name(), v.n)))
		}
		v.env.After(v.every, proposeTick{})
	}
}

type quorum struct {
	w      *sim.World
	ids    []sim.NodeID
	voters map[sim.NodeID]*voter
}

func newQuorum(seed uint64, n int, every time.Duration, setup func(w *sim.World, ids []sim.NodeID)) *quorum {
	w := sim.NewWorld(sim.DefaultOptions(sim.Seed(seed)))
	q := &quorum{w: w, voters: map[sim.NodeID]*voter{}}
	for i := range n {
		q.ids = append(q.ids, sim.NodeID(i))
	}
	for i := range n {
		id := sim.NodeID(i)
		cfg := DefaultConfig(q.ids)
		w.AddNode(sim.NodeSpec{Name: fmt.Sprintf("c%d", i), New: func() sim.Node {
			v := &voter{cfg: cfg, every: every}
			q.voters[id] = v
			return v
		}})
	}
	if setup != nil {
		setup(w, q.ids)
	}
	w.Start()
	return q
}

func (q *quorum) leader() *Raft {
	var best *Raft
	for _, id := range q.ids {
		if v := q.voters[id]; q.w.State(id) == sim.Running && v.r.IsLeader() && (best == nil || v.r.Epoch() > best.Epoch()) {
			best = v.r
		}
	}
	return best
}

func TestQuorumElectsAndCommits(t *testing.T) {
	for _, n := range []int{1, 3, 5} {
		q := newQuorum(uint64(n), n, 50*time.Millisecond, nil)
		q.w.RunUntil(10 * time.Second)
		l := q.leader()
		if l == nil {
			t.Fatalf("%d voters: no leader after 10s", n)
		}
		if l.HighWatermark() < 50 {
			t.Fatalf("%d voters: only %d entries committed in 10s", n, l.HighWatermark())
		}
		for _, id := range q.ids {
			r := q.voters[id].r
			if r.Leader() != q.ids[0]+sim.NodeID(0) && r.Leader() != l.id {
				t.Fatalf("%d voters: %d follows %d, leader is %d", n, id, r.Leader(), l.id)
			}
			for off := int64(0); off < r.HighWatermark(); off++ {
				if !r.Log().Entry(off).Same(l.Log().Entry(off)) {
					t.Fatalf("%d voters: entry %d differs between %d and the leader", n, off, id)
				}
			}
		}
	}
}

// TestPreVoteKeepsARejoiningVoterFromDisruptingTheLeader is KIP-996's point:
// a voter cut off for a long time keeps failing pre-votes, so its epoch does
// not run ahead, and when it rejoins the leader keeps its epoch.
func TestPreVoteKeepsARejoiningVoterFromDisruptingTheLeader(t *testing.T) {
	q := newQuorum(3, 3, 100*time.Millisecond, nil)
	q.w.RunUntil(5 * time.Second)
	l := q.leader()
	epoch := l.Epoch()
	var follower sim.NodeID
	for _, id := range q.ids {
		if id != l.id {
			follower = id
		}
	}
	cut := q.w.Partition([]sim.NodeID{follower}, []sim.NodeID{q.ids[0], q.ids[1], q.ids[2]})
	q.w.RunFor(20 * time.Second)
	if e := q.voters[follower].r.Epoch(); e != epoch {
		t.Fatalf("an isolated voter's epoch went from %d to %d: pre-votes should fail without bumping it", epoch, e)
	}
	q.w.Heal(cut)
	q.w.RunFor(5 * time.Second)
	if now := q.leader(); now == nil || now.id != l.id || now.Epoch() != epoch {
		t.Fatalf("the rejoining voter disrupted the leader (epoch %d, leader %v)", epoch, now)
	}
	if q.voters[follower].r.HighWatermark() != l.HighWatermark() && q.voters[follower].r.Log().EndOffset() < l.HighWatermark() {
		t.Fatal("the rejoined voter did not catch up")
	}
}

func TestCheckQuorumResignsACutOffLeader(t *testing.T) {
	q := newQuorum(4, 3, 0, nil)
	q.w.RunUntil(5 * time.Second)
	l := q.leader()
	q.w.Partition([]sim.NodeID{l.id}, q.ids)
	q.w.RunFor(4 * time.Second) // check quorum: 1.5 × fetch timeout = 3s
	if l.IsLeader() {
		t.Fatal("a leader cut off from every voter must resign within the check-quorum timeout")
	}
	if now := q.leader(); now == nil || now.Epoch() <= l.Epoch()-0 && now.id == l.id {
		t.Fatal("the majority should have elected a new leader")
	}
}

type idle struct{}

func (idle) Start(sim.Env)                   {}
func (idle) Deliver(sim.NodeID, sim.Message) {}
func (idle) Fire(sim.Timer)                  {}

func TestLogRecoveryCutsATornTail(t *testing.T) {
	w := sim.NewWorld(sim.DefaultOptions(1))
	w.AddNode(sim.NodeSpec{Name: "n", New: func() sim.Node { return idle{} }})
	w.Start()
	w.RunUntil(0)
	d := w.Disk(0)
	l, _ := OpenLog(d, "log")
	for i := range 5 {
		l.Append(Entry{Offset: int64(i), Epoch: 1, Data: []byte("durable")})
	}
	d.Fsync("log", nil)
	w.RunFor(time.Second)
	l.Append(Entry{Offset: 5, Epoch: 2, Data: []byte("0123456789abcdef")})
	if err := w.InjectFault(sim.Fault{Kind: sim.FaultDisk, Disk: sim.DiskTornWrite, Target: "n"}); err != nil {
		t.Fatal(err)
	}
	got, cut := OpenLog(d, "log")
	if got.EndOffset() != 5 || got.LastEpoch() != 1 || cut == 0 {
		t.Fatalf("recovery should keep the 5 durable entries and cut the torn one: end %d cut %d", got.EndOffset(), cut)
	}
	got.Append(Entry{Offset: 5, Epoch: 3, Data: []byte("after")})
	again, cut := OpenLog(d, "log")
	if again.EndOffset() != 6 || cut != 0 || string(again.Entry(5).Data) != "after" {
		t.Fatal("appending after recovery must continue the log cleanly")
	}
}

func TestEndOffsetForEpoch(t *testing.T) {
	w := sim.NewWorld(sim.DefaultOptions(1))
	w.AddNode(sim.NodeSpec{Name: "n", New: func() sim.Node { return idle{} }})
	l, _ := OpenLog(w.Disk(0), "log")
	for i, e := range []int32{1, 1, 3, 3, 5} {
		l.Append(Entry{Offset: int64(i), Epoch: e})
	}
	cases := []struct {
		ask       int32
		epoch     int32
		endOffset int64
	}{{0, 0, 0}, {1, 1, 2}, {2, 1, 2}, {3, 3, 4}, {4, 3, 4}, {5, 5, 5}, {9, 5, 5}}
	for _, c := range cases {
		if e, end := l.EndOffsetForEpoch(c.ask); e != c.epoch || end != c.endOffset {
			t.Errorf("EndOffsetForEpoch(%d) = (%d, %d), want (%d, %d)", c.ask, e, end, c.epoch, c.endOffset)
		}
	}
}

// TestDivergentFollowerTruncatesInSeveralRounds seeds two voters' disks with
// logs that share a prefix and then diverge over two epochs, and a third that
// agrees with the first: the leader must be one of the two that agree, and the
// divergent voter must end up with the leader's log, walking back one epoch
// per fetch.
func TestDivergentFollowerTruncatesInSeveralRounds(t *testing.T) {
	epochs := map[int][]int32{
		0: {1, 1, 2, 4, 4},
		1: {1, 1, 2, 4},
		2: {1, 1, 3, 3, 3, 3}, // epochs 3 that never committed
	}
	q := newQuorum(5, 3, 0, func(w *sim.World, ids []sim.NodeID) {
		for i, es := range epochs {
			d := w.Disk(ids[i])
			l, _ := OpenLog(d, "__cluster_metadata-0/log")
			for off, e := range es {
				// The same (offset, epoch) is the same entry on every replica.
				l.Append(Entry{Offset: int64(off), Epoch: e, Data: []byte{byte(off), byte(e)}})
			}
			st, _ := json.Marshal(quorumState{Epoch: es[len(es)-1], VotedFor: sim.NoNode, Leader: sim.NoNode})
			d.WriteFile("__cluster_metadata-0/quorum-state", storage.AppendFrame(nil, st))
		}
	})
	q.w.RunUntil(10 * time.Second)
	l := q.leader()
	if l == nil || l.id == q.ids[2] {
		t.Fatalf("the voter with the divergent epoch-3 log cannot win against two with epoch 4")
	}
	div := q.voters[q.ids[2]].r
	if div.Log().EndOffset() < 5 {
		t.Fatalf("the divergent voter did not catch up: %d entries", div.Log().EndOffset())
	}
	for off := int64(0); off < l.Log().EndOffset() && off < div.Log().EndOffset(); off++ {
		if !div.Log().Entry(off).Same(l.Log().Entry(off)) {
			t.Fatalf("entry %d still differs after truncation", off)
		}
	}
}

// observerOfIdleVoters starts an observer of three voters that answer
// nothing (a test answers for them), its log holding one entry per given
// epoch, and returns it running.
func observerOfIdleVoters(epochs ...int32) (*sim.World, *Raft) {
	w := sim.NewWorld(sim.DefaultOptions(1))
	voters := []sim.NodeID{0, 1, 2}
	for i := range voters {
		w.AddNode(sim.NodeSpec{Name: fmt.Sprintf("c%d", i), New: func() sim.Node { return idle{} }})
	}
	obs := &voter{cfg: DefaultConfig(voters)}
	id := w.AddNode(sim.NodeSpec{Name: "observer", New: func() sim.Node { return obs }})
	l, _ := OpenLog(w.Disk(id), "__cluster_metadata-0/log")
	for off, e := range epochs {
		l.Append(Entry{Offset: int64(off), Epoch: e, Data: []byte{byte(off), byte(e)}})
	}
	w.Start()
	w.RunFor(time.Millisecond)
	return w, obs.r
}

// TestObserverDropsAnAnswerToAFetchOfAnEarlierEpoch replays fuzz seed 705884
// at one observer, with the voters' answers written by hand: it follows the
// leader of epoch 5 and fetches at offset 5; that fetch times out, the observer
// goes round the voters, learns epoch 6 and fetches from the same voter at the
// same offset again. The late answer to the epoch-5 fetch (a divergence, from
// a leader the quorum has since replaced) must be dropped, as Kafka drops a
// response whose correlation id it no longer expects: the observer stays at
// epoch 6 and keeps its log.
func TestObserverDropsAnAnswerToAFetchOfAnEarlierEpoch(t *testing.T) {
	w, r := observerOfIdleVoters(1, 1, 4, 4, 4)
	answer := func(from sim.NodeID, m *FetchResponse) {
		w.At(w.Now(), func() { r.Deliver(from, m) })
		w.RunFor(time.Millisecond)
	}
	inFlight := func(step string, target sim.NodeID, epoch int32) {
		t.Helper()
		if !r.fetchInFlight || r.fetchTarget != target || r.epoch != epoch || r.fetchOffset != 5 {
			t.Fatalf("%s: want a fetch to %d at epoch %d offset 5 in flight, have in flight %v to %d at epoch %d offset %d",
				step, target, epoch, r.fetchInFlight, r.fetchTarget, r.epoch, r.fetchOffset)
		}
	}
	inFlight("boot", 0, 4)
	answer(0, &FetchResponse{Error: proto.FencedLeaderEpoch, LeaderID: 1, LeaderEpoch: 5, RequestedEpoch: 4, FetchOffset: 5})
	inFlight("following epoch 5", 1, 5)
	w.RunFor(r.cfg.FetchTimeout) // the leader of epoch 5 does not answer in time
	inFlight("looking for the leader again", 1, 5)
	answer(1, &FetchResponse{Error: proto.FencedLeaderEpoch, LeaderID: sim.NoNode, LeaderEpoch: 6, RequestedEpoch: 5, FetchOffset: 5})
	inFlight("epoch 6", 2, 6)
	answer(2, &FetchResponse{Error: proto.NotLeaderOrFollower, LeaderID: sim.NoNode, LeaderEpoch: 6, RequestedEpoch: 6, FetchOffset: 5})
	w.RunFor(r.cfg.RetryBackoff)
	answer(0, &FetchResponse{Error: proto.NotLeaderOrFollower, LeaderID: sim.NoNode, LeaderEpoch: 6, RequestedEpoch: 6, FetchOffset: 5})
	w.RunFor(r.cfg.RetryBackoff)
	inFlight("epoch 6, round the voters", 1, 6)

	// The answer to the first fetch to 1, asked at epoch 5, arrives now.
	answer(1, &FetchResponse{Error: proto.None, LeaderID: 1, LeaderEpoch: 5, RequestedEpoch: 5, FetchOffset: 5,
		Diverging: &DivergingEpoch{Epoch: 1, EndOffset: 2}})
	if r.Fatal() != "" {
		t.Fatalf("a late answer to an abandoned fetch must be dropped before it asks for anything: %s", r.Fatal())
	}
	if r.Epoch() != 6 || r.Leader() != sim.NoNode {
		t.Fatalf("a late answer to an epoch-5 fetch moved the observer from epoch 6 to epoch %d (leader %d)", r.Epoch(), r.Leader())
	}
	if r.Log().EndOffset() != 5 {
		t.Fatalf("the observer truncated to %d on the divergence a replaced leader sent to an abandoned fetch", r.Log().EndOffset())
	}
	inFlight("after the stale answer", 1, 6)
}

// A replica never moves to an earlier epoch: Kafka's QuorumState refuses the
// transition and the node halts. The model reports it as fatal (the audit's
// raft-fatal) and stays where it is, whatever message asked for it — the
// guard behind every handler's own epoch check.
func TestTransitionToAnEarlierEpochIsFatal(t *testing.T) {
	w, r := observerOfIdleVoters()
	w.At(w.Now(), func() { r.learn(6, sim.NoNode) })
	w.RunFor(time.Millisecond)
	if r.Epoch() != 6 || r.Fatal() != "" {
		t.Fatalf("learning epoch 6: at epoch %d, fatal %q", r.Epoch(), r.Fatal())
	}
	w.At(w.Now(), func() { r.learn(5, 1) })
	w.RunFor(time.Millisecond)
	if r.Epoch() != 6 || r.Leader() != sim.NoNode {
		t.Fatalf("asked to follow 1 in epoch 5 at epoch 6, it moved to epoch %d (leader %d)", r.Epoch(), r.Leader())
	}
	if r.Fatal() == "" {
		t.Fatal("a transition to an earlier epoch must be fatal, as Kafka's QuorumState makes it")
	}
}

// Entries handed out before a truncation keep what they held: a fetch answer
// a deposed leader built (or held for an fsync) and delivers after it
// truncated and took the new leader's entry at that offset must still carry
// its own epoch's entry (fuzz seed 3009899: an observer appended the new
// epoch's entry while following the old, and fetched at an epoch below its
// log's for ever).
func TestEntriesSentBeforeATruncationKeepTheirContents(t *testing.T) {
	w := sim.NewWorld(sim.DefaultOptions(1))
	w.AddNode(sim.NodeSpec{Name: "n", New: func() sim.Node { return idle{} }})
	l, _ := OpenLog(w.Disk(0), "log")
	for i, e := range []int32{1, 1, 1} {
		l.Append(Entry{Offset: int64(i), Epoch: e, Data: []byte("old")})
	}
	sent := l.Entries(2, 10)
	l.TruncateTo(2)
	l.Append(Entry{Offset: 2, Epoch: 2, Data: []byte("new")})
	if len(sent) != 1 || sent[0].Epoch != 1 || string(sent[0].Data) != "old" {
		t.Fatalf("an answer built before the truncation now carries %+v", sent)
	}
	if l.Entry(2).Epoch != 2 {
		t.Fatalf("the log holds %+v at 2", l.Entry(2))
	}
}

// An observer told by a voter that its fetch is invalid (it asks at an
// epoch below its log's last) learns the later epoch and leader the answer
// names, as Kafka's maybeHandleCommonResponse does for any error, instead of
// going round the voters at its old epoch for ever.
func TestObserverLearnsALaterEpochFromAnInvalidRequestAnswer(t *testing.T) {
	w, r := observerOfIdleVoters(1, 1, 1)
	if !r.fetchInFlight || r.fetchTarget != 0 || r.epoch != 1 {
		t.Fatalf("want a fetch to 0 at epoch 1 in flight: %v to %d at epoch %d", r.fetchInFlight, r.fetchTarget, r.epoch)
	}
	w.At(w.Now(), func() {
		r.Deliver(0, &FetchResponse{Error: proto.InvalidRequest, LeaderID: 2, LeaderEpoch: 2, RequestedEpoch: 1, FetchOffset: 3})
	})
	w.RunFor(time.Millisecond)
	if r.Epoch() != 2 || r.Leader() != 2 || !r.fetchInFlight || r.fetchTarget != 2 {
		t.Fatalf("after INVALID_REQUEST naming leader 2 of epoch 2: epoch %d leader %d, fetch in flight %v to %d",
			r.Epoch(), r.Leader(), r.fetchInFlight, r.fetchTarget)
	}
}
