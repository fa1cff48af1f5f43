package membership

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"kafkasim/model/group/consumergroup"
	"kafkasim/model/proto"
)

// The interop harness: Managers against the coordinator's state machine
// (consumergroup.Group), over a network with latency and losses, with an
// application that carries out the actions after a delay and only while it
// polls (Kafka runs the rebalance callbacks inside poll).

const (
	tick           = 10 * time.Millisecond
	requestTimeout = 5 * time.Second
	pollEvery      = 100 * time.Millisecond
	quietPeriod    = 4 * time.Minute
)

// roundRobin deals each topic's partitions to its subscribers in turn,
// starting one further for each member: no stickiness, so that every
// change of membership moves partitions and revocations happen.
type roundRobin struct{}

func (roundRobin) Name() string { return "uniform" }

func (roundRobin) Assign(members []consumergroup.MemberSpec, partitionsPerTopic map[string]int32) map[string][]proto.TopicPartition {
	out := map[string][]proto.TopicPartition{}
	topics := make([]string, 0, len(partitionsPerTopic))
	for t := range partitionsPerTopic { // kafkasim:orderless: sorted right after
		topics = append(topics, t)
	}
	slices.Sort(topics)
	for _, topic := range topics {
		var subs []string
		for _, m := range members {
			if slices.Contains(m.Topics, topic) {
				subs = append(subs, m.MemberID)
			}
		}
		for p := range partitionsPerTopic[topic] {
			if len(subs) == 0 {
				break
			}
			id := subs[(int(p)+len(members))%len(subs)]
			out[id] = append(out[id], proto.TopicPartition{Topic: topic, Partition: p})
		}
	}
	return out
}

type timerKey struct {
	kind   consumergroup.TimerKind
	member string
}

type coordTimer struct {
	t  consumergroup.Timer
	at time.Duration
}

// proc is one consumer process in a slot; a slot's static member keeps its
// instance id across processes.
type proc struct {
	m          *Manager
	alive      bool
	leaving    bool
	stallUntil time.Duration
	nextPoll   time.Duration
	nextHB     time.Duration // when the Manager's last wait runs out
	dirty      bool          // an input since the last Heartbeat call
	actions    []Action
	readyAt    []time.Duration
	sent       map[*proto.ConsumerGroupHeartbeatRequest]time.Duration
}

type message struct {
	at   time.Duration
	seq  int
	to   *proc // nil: the coordinator
	from *proc
	req  *proto.ConsumerGroupHeartbeatRequest
	resp *proto.ConsumerGroupHeartbeatResponse
}

// fataler is what the harness needs of *testing.T and *rapid.T.
type fataler interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

type world struct {
	t        fataler
	now      time.Duration
	g        *consumergroup.Group
	env      *consumergroup.Env
	timers   map[timerKey]coordTimer
	slots    []*proc
	static   []bool
	topics   []string
	parts    int32
	net      []message
	netSeq   int
	loss     float64
	appDelay time.Duration
	r        *rand.Rand // latencies, losses, application delays
	ids      *rand.Rand // the processes' own streams
	steps    []string
}

func newWorld(t fataler, seed uint64, slots int, static []bool) *world {
	w := &world{t: t, g: consumergroup.New("g"), timers: map[timerKey]coordTimer{},
		slots: make([]*proc, slots), static: static, topics: []string{"a", "b"}, parts: 3,
		appDelay: 500 * time.Millisecond, r: rand.New(rand.NewPCG(seed, 1)), ids: rand.New(rand.NewPCG(seed, 2))}
	w.env = &consumergroup.Env{
		Config: consumergroup.Config{SessionTimeout: consumergroup.DefaultSessionTimeout,
			HeartbeatInterval: consumergroup.DefaultHeartbeatInterval, Assignors: []consumergroup.Assignor{roundRobin{}}},
		Rand:       rand.New(rand.NewPCG(seed, 3)),
		Partitions: func(topic string) (int32, bool) { return w.parts, slices.Contains(w.topics, topic) },
	}
	return w
}

func (w *world) logf(format string, args ...any) {
	w.steps = append(w.steps, fmt.Sprintf("%v ", w.now)+fmt.Sprintf(format, args...))
}

func (w *world) apply(res consumergroup.Result) {
	if err := w.g.ReplayAll(res.Records); err != nil {
		w.t.Fatalf("replay: %v", err)
	}
	for _, t := range res.Timers {
		k := timerKey{t.Kind, t.MemberID}
		if t.Cancel {
			delete(w.timers, k)
		} else {
			w.timers[k] = coordTimer{t: t, at: w.now + t.After}
		}
	}
}

func (w *world) send(from, to *proc, req *proto.ConsumerGroupHeartbeatRequest, resp *proto.ConsumerGroupHeartbeatResponse) {
	if w.r.Float64() < w.loss {
		return
	}
	w.netSeq++
	w.net = append(w.net, message{at: w.now + tick*time.Duration(1+w.r.IntN(3)), seq: w.netSeq, to: to, from: from, req: req, resp: resp})
}

// join starts a new process in slot i.
func (w *world) join(i int) {
	cfg := DefaultConfig("g")
	cfg.RebalanceTimeout = time.Minute
	if w.static[i] {
		cfg.InstanceID = fmt.Sprintf("i-%d", i)
	}
	p := &proc{m: NewManager(cfg, rand.New(rand.NewPCG(w.ids.Uint64(), 0)), w.now), alive: true, dirty: true,
		sent: map[*proto.ConsumerGroupHeartbeatRequest]time.Duration{}}
	p.m.Subscribe(w.topics)
	w.slots[i] = p
	w.logf("slot %d joins as %s", i, p.m.MemberID())
}

func (w *world) step() {
	w.now += tick
	// The coordinator's timers, in key order.
	keys := make([]timerKey, 0, len(w.timers))
	for k, ct := range w.timers { // kafkasim:orderless: sorted right after
		if ct.at <= w.now {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b timerKey) int {
		return cmp.Or(cmp.Compare(a.kind, b.kind), strings.Compare(a.member, b.member))
	})
	for _, k := range keys {
		ct := w.timers[k]
		delete(w.timers, k)
		res := w.g.OnTimer(w.env, ct.t)
		if len(res.Records) > 0 {
			w.logf("coordinator: %v fences %s", ct.t.Kind, ct.t.MemberID)
		}
		w.apply(res)
	}
	// The network, in delivery order.
	slices.SortFunc(w.net, func(a, b message) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.seq, b.seq)) })
	n := 0
	for n < len(w.net) && w.net[n].at <= w.now {
		n++
	}
	due := slices.Clone(w.net[:n])
	w.net = w.net[n:]
	for _, msg := range due {
		if msg.to == nil {
			res := w.g.Heartbeat(w.env, msg.req)
			w.apply(res)
			w.send(nil, msg.from, msg.req, res.Response)
			continue
		}
		p := msg.to
		if !p.alive {
			continue
		}
		if _, ok := p.sent[msg.req]; !ok {
			continue // timed out already: the connection dropped it
		}
		delete(p.sent, msg.req)
		p.m.OnResponse(w.now, msg.req, msg.resp)
		p.dirty = true
	}
	for i, p := range w.slots {
		if p == nil || !p.alive {
			continue
		}
		w.drive(i, p)
	}
	w.checkDisjoint()
}

// drive runs one process for a tick: request timeouts, the application
// (actions, polls), then the heartbeat when an input or the wait asks.
func (w *world) drive(i int, p *proc) {
	var expired []*proto.ConsumerGroupHeartbeatRequest
	for req, at := range p.sent { // kafkasim:orderless: sorted right after
		if w.now-at >= requestTimeout {
			expired = append(expired, req)
		}
	}
	slices.SortFunc(expired, func(a, b *proto.ConsumerGroupHeartbeatRequest) int { return cmp.Compare(p.sent[a], p.sent[b]) })
	for _, req := range expired {
		delete(p.sent, req)
		p.m.OnFailure(w.now, req)
		p.dirty = true
	}
	polling := w.now >= p.stallUntil
	if polling && w.now >= p.nextPoll {
		p.m.Poll(w.now)
		p.nextPoll = w.now + pollEvery
		p.dirty = true
	}
	for _, a := range p.m.Actions() {
		if a.Kind == FatalError {
			w.logf("slot %d: fatal %v: %s", i, a.Error, a.Message)
			continue
		}
		p.actions = append(p.actions, a)
		p.readyAt = append(p.readyAt, w.now+time.Duration(w.r.Int64N(int64(w.appDelay)+1)))
	}
	for polling && len(p.actions) > 0 && p.readyAt[0] <= w.now {
		a := p.actions[0]
		p.actions, p.readyAt = p.actions[1:], p.readyAt[1:]
		if err := p.m.ActionDone(a.Seq); err != nil {
			w.t.Fatal(err)
		}
		w.logf("slot %d %s: %v %v done, owns %v", i, p.m.MemberID(), a.Kind, a.Partitions, p.m.Owned())
		p.dirty = true
		for _, b := range p.m.Actions() {
			p.actions = append(p.actions, b)
			p.readyAt = append(p.readyAt, w.now+time.Duration(w.r.Int64N(int64(w.appDelay)+1)))
		}
	}
	if p.dirty || (p.nextHB >= 0 && w.now >= p.nextHB) {
		p.dirty = false
		req, wait := p.m.Heartbeat(w.now, true)
		if req != nil {
			p.sent[req] = w.now
			w.send(p, nil, req, nil)
		}
		p.nextHB = Never
		if wait != Never {
			p.nextHB = w.now + wait
		}
	}
	switch st := p.m.State(); {
	case st == Fatal:
		p.alive = false
	case p.leaving && (st == Unsubscribed || st == Stale) && len(p.actions) == 0 && p.m.Describe().PendingActions == 0:
		// A stale member that unsubscribes stays STALE, out of the group.
		p.alive = false
		w.logf("slot %d left", i)
	}
}

// checkDisjoint: no two members in the group own one partition. In the
// group is what both sides agree on: the client thinks it is (not fenced,
// stale or failed) and the coordinator still has its member id. A member
// the coordinator fenced (session or rebalance timeout) before the client
// learned of it may still hold partitions its application has not dropped:
// Kafka's zombie window, in which the coordinator refuses its commits.
//
// A member leaving (PREPARE_LEAVING) counts only what it last reconciled.
// The leave aborts a reconciliation under way, whose onPartitionsAssigned
// may still complete: those partitions reach the application, but Kafka
// marked them pending revocation when the leave began
// (ConsumerMembershipManager.revokePartitions, before the assigned
// callback enabled them), so it never fetches them; and the member's
// heartbeats report its reconciled assignment, which lacks them
// (HeartbeatState.buildRequestData sends currentAssignment in full after
// a failure), so the coordinator hands them on without waiting
// (CurrentAssignmentBuilder.ownsRevokedPartitions). Both sides follow
// Kafka there (TestLeaveAbortsReconciliation pins the client's half).
func (w *world) checkDisjoint() {
	owner := map[proto.TopicPartition]int{}
	for i, p := range w.slots {
		if p == nil || !p.alive || !p.m.InGroup() || w.g.Member(p.m.MemberID()) == nil {
			continue
		}
		owned := p.m.Owned()
		if d := p.m.Describe(); d.State == PrepareLeaving {
			owned = minus(owned, minus(owned, d.Assignment))
		}
		for _, tp := range owned {
			if j, ok := owner[tp]; ok {
				w.t.Fatalf("slots %d and %d both own %v\n%s", j, i, tp, strings.Join(w.steps, "\n"))
			}
			owner[tp] = i
		}
	}
}

func (w *world) run(d time.Duration) {
	for end := w.now + d; w.now < end; {
		w.step()
	}
}

// checkConverged: every live member STABLE at the group's assignment
// epoch, owning what the coordinator assigned it, and every partition
// owned by exactly one of them.
func (w *world) checkConverged() {
	t := w.t
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf(format+"\n%s", append(args, strings.Join(w.steps, "\n"))...)
	}
	if st := w.g.State(); w.g.Exists() && st != consumergroup.StateStable && st != consumergroup.StateEmpty {
		fail("group %v at epoch %d, assignment epoch %d", st, w.g.GroupEpoch(), w.g.AssignmentEpoch())
	}
	var ids []string
	owner := map[proto.TopicPartition]string{}
	for i, p := range w.slots {
		if p == nil || !p.alive {
			continue
		}
		d := p.m.Describe()
		ids = append(ids, d.MemberID)
		if d.State != Stable || d.MemberEpoch != w.g.AssignmentEpoch() || d.PendingActions != 0 {
			fail("slot %d: %+v, group assignment epoch %d", i, d, w.g.AssignmentEpoch())
		}
		gm := w.g.Member(d.MemberID)
		if gm == nil || !slices.Equal(gm.Assigned, d.Owned) || !slices.Equal(d.Owned, d.Assignment) {
			fail("slot %d owns %v, coordinator has %+v", i, d.Owned, gm)
		}
		for _, tp := range d.Owned {
			if o, ok := owner[tp]; ok {
				fail("%v owned by %s and %s", tp, o, d.MemberID)
			}
			owner[tp] = d.MemberID
		}
	}
	slices.Sort(ids)
	if !slices.Equal(ids, w.g.MemberIDs()) {
		fail("live members %v, coordinator's %v", ids, w.g.MemberIDs())
	}
	if len(ids) > 0 && len(owner) != len(w.topics)*int(w.parts) {
		fail("%d partitions owned, want %d", len(owner), len(w.topics)*int(w.parts))
	}
}

func TestInteropJoinsConverge(t *testing.T) {
	for n := 1; n <= 4; n++ {
		w := newWorld(t, uint64(n), n, make([]bool, n))
		for i := range n {
			w.join(i)
			w.run(time.Duration(w.r.IntN(3000)) * time.Millisecond)
		}
		w.run(time.Minute)
		w.checkConverged()
		if n > 1 && w.g.AssignmentEpoch() < 2 {
			t.Fatalf("%d members: assignment epoch %d", n, w.g.AssignmentEpoch())
		}
	}
}

func TestInteropLeaveCrashStallConverge(t *testing.T) {
	w := newWorld(t, 7, 4, []bool{false, true, false, true})
	for i := range 4 {
		w.join(i)
	}
	w.run(30 * time.Second)
	w.checkConverged()
	// A dynamic member leaves: its partitions move at once.
	w.slots[0].m.Unsubscribe()
	w.slots[0].leaving = true
	w.run(30 * time.Second)
	w.checkConverged()
	if w.slots[0].alive {
		t.Fatal("slot 0 did not finish leaving")
	}
	// A static member stalls past max.poll.interval.ms: it leaves with -2,
	// goes stale, and rejoins with its old assignment when it polls again.
	w.slots[1].stallUntil = w.now + 70*time.Second
	before := w.slots[1].m.Owned()
	w.run(65 * time.Second)
	if st := w.slots[1].m.State(); st != Stale {
		t.Fatalf("stalled member %v", st)
	}
	w.run(time.Minute)
	w.checkConverged()
	if got := w.slots[1].m.Owned(); !slices.Equal(got, before) {
		t.Fatalf("static member back with %v, had %v", got, before)
	}
	// A member crashes: the session timeout gives its partitions away.
	w.slots[2].alive = false
	w.run(time.Minute)
	w.checkConverged()
}

// The property: over random schedules of joins, leaves, crashes, stalls
// and lossy periods, members in the group never share a partition, and
// once nothing changes the group converges.
func TestPropertyInterop(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 4).Draw(rt, "members")
		static := rapid.SliceOfN(rapid.Bool(), n, n).Draw(rt, "static")
		w := newWorld(rt, rapid.Uint64().Draw(rt, "seed"), n, static)
		for range rapid.IntRange(1, 30).Draw(rt, "events") {
			w.run(time.Duration(rapid.IntRange(1, 2000).Draw(rt, "ticks")) * tick)
			i := rapid.IntRange(0, n-1).Draw(rt, "slot")
			p := w.slots[i]
			switch ev := rapid.IntRange(0, 5).Draw(rt, "event"); {
			case p == nil || !p.alive:
				w.join(i)
			case ev == 0:
				w.logf("slot %d unsubscribes", i)
				p.m.Unsubscribe()
				p.leaving, p.dirty = true, true
			case ev == 1:
				w.logf("slot %d crashes", i)
				p.alive = false
			case ev == 2:
				w.logf("slot %d stalls", i)
				p.stallUntil = w.now + time.Minute + time.Duration(rapid.IntRange(0, 20).Draw(rt, "stall"))*time.Second
			case ev == 3:
				w.loss = []float64{0, 0.1, 0.3}[rapid.IntRange(0, 2).Draw(rt, "loss")]
				w.logf("loss %v", w.loss)
			default:
				// Nothing: time passes.
			}
		}
		// Quiet: no more losses; stalls run out (they last at most 80s).
		w.loss = 0
		w.run(quietPeriod)
		w.checkConverged()
	})
}
