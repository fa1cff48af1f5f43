package broker_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"kafkasim/model/broker"
	"kafkasim/model/cluster"
	"kafkasim/model/metadata"
	"kafkasim/model/proto"
	"kafkasim/sim"
)

var txnTP = metadata.TopicPartition{Topic: "__transaction_state", Partition: 0}

// coordRequest stands in for JoinGroup or EndTxn: a request for the
// coordinator of Topic (as a FindCoordinator's key type picks one). Delay
// asks the coordinator to answer that much later, from a timer.
type coordRequest struct {
	Correlation uint64
	Topic       string
	Delay       time.Duration
}

func (*coordRequest) MessageName() string { return "TestCoordinatorRequest" }

func (m *coordRequest) String() string {
	return fmt.Sprintf("TestCoordinatorRequest #%d for %s", m.Correlation, m.Topic)
}

// NotCoordinator implements broker.CoordinatorRequest.
func (m *coordRequest) NotCoordinator() sim.Message {
	return &coordResponse{Correlation: m.Correlation, Error: proto.NotCoordinator, Broker: -1}
}

// coordResponse answers a coordRequest: ServedBy is the topic of the
// coordinator that answered (empty: the broker did), Broker its broker.
type coordResponse struct {
	Correlation uint64
	Error       proto.ErrorCode
	ServedBy    string
	Broker      int32
}

func (*coordResponse) MessageName() string { return "TestCoordinatorResponse" }

func (m *coordResponse) String() string {
	return fmt.Sprintf("TestCoordinatorResponse #%d %v by %q on %d", m.Correlation, m.Error, m.ServedBy, m.Broker)
}

// The timers a servingCoordinator sets, each naming the coordinator
// instance that set it (the order coordinators were built in the run).
type (
	tick           struct{ Instance, N int } // every second, from the start
	longTimer      struct{ Instance int }    // once, longAfter after the start
	cancelledTimer struct{ Instance int }    // set and cancelled at the start
	replyTimer     struct {                  // a delayed answer
		Instance int
		To       sim.NodeID
		Req      coordRequest
	}
)

const longAfter = 6 * time.Second

// firedTimer is a timer a coordinator was handed, and when (god view).
type firedTimer struct {
	at time.Duration
	t  sim.Timer
}

// routingHarness runs servingCoordinators on every broker of a cluster
// (one controller, brokers 1..3; __consumer_offsets-0 and
// __transaction_state-0 on all three, led by broker 1) and a scripted
// client that sends them requests.
type routingHarness struct {
	t      *testing.T
	c      *cluster.Cluster
	client *scriptedClient
	// fakes are the coordinators built, in the order they were.
	fakes []*servingCoordinator
}

func newRoutingHarness(t *testing.T, seed uint64, topics []string, script []scripted, trace sim.TraceSink) *routingHarness {
	t.Helper()
	h := &routingHarness{t: t}
	cfg := cluster.DefaultConfig(seed)
	cfg.Controllers, cfg.Brokers = 1, 3
	cfg.Trace = trace
	for _, topic := range []string{offsetsTP.Topic, txnTP.Topic} {
		cfg.Topics = append(cfg.Topics, cluster.TopicSpec{Name: topic, Partitions: 1, ReplicationFactor: 3, MinInsyncReplicas: 2,
			Assignment: [][]int32{{1, 2, 3}}, Configs: map[string]string{"cleanup.policy": "compact"}})
	}
	for _, topic := range topics {
		cfg.Data.Coordinators = append(cfg.Data.Coordinators, broker.CoordinatorSpec{Topic: topic, New: func(topics *broker.InternalTopics) broker.Coordinator {
			f := &servingCoordinator{h: h, instance: len(h.fakes), topic: topic, broker: topics.BrokerID(), topics: topics}
			h.fakes = append(h.fakes, f)
			f.start()
			return f
		}})
	}
	c, err := cluster.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.c = c
	h.client = &scriptedClient{h: h, script: script}
	c.World.AddNode(sim.NodeSpec{Name: "client", Role: "test", New: func() sim.Node { return h.client }})
	return h
}

func (h *routingHarness) run(until time.Duration) {
	h.c.World.Start()
	h.c.World.RunUntil(until)
	for _, v := range h.c.Audit.Violations() {
		h.t.Errorf("the audit found a violation: %+v", v)
	}
}

// of returns the coordinators of topic broker b ran, one per start.
func (h *routingHarness) of(b int32, topic string) []*servingCoordinator {
	var out []*servingCoordinator
	for _, f := range h.fakes {
		if f.broker == b && f.topic == topic {
			out = append(out, f)
		}
	}
	return out
}

// checkTimersAreOwn: every coordinator was handed only timers it set, and
// never one it cancelled.
func (h *routingHarness) checkTimersAreOwn() {
	for _, f := range h.fakes {
		for _, ft := range f.fired {
			if owner(ft.t) != f.instance {
				h.t.Errorf("coordinator %d (broker %d, %s) was handed %+v at %v, set by coordinator %d", f.instance, f.broker, f.topic, ft.t, ft.at, owner(ft.t))
			}
		}
		if c := f.firedOf("cancelledTimer"); len(c) > 0 {
			h.t.Errorf("coordinator %d: a cancelled timer fired at %v", f.instance, c[0].at)
		}
		if len(f.firedOf("tick")) == 0 {
			h.t.Errorf("coordinator %d (broker %d, %s) never ticked", f.instance, f.broker, f.topic)
		}
	}
}

// answer finds the client's answer to correlation.
func (h *routingHarness) answer(correlation uint64) (got answer, ok bool) {
	for _, a := range h.client.answers {
		if a.resp.Correlation == correlation {
			return a, true
		}
	}
	return answer{}, false
}

// servingCoordinator serves the coordRequests for its topic: NOT_COORDINATOR
// unless its broker leads the topic's partition, else an answer at once or,
// for a Delay, from a timer. From its start it ticks every second; it sets
// a long timer and a timer it cancels at once.
type servingCoordinator struct {
	h        *routingHarness
	instance int
	topic    string
	broker   int32
	topics   *broker.InternalTopics
	leading  bool
	// handled are the correlation ids of the requests it was handed.
	handled []uint64
	fired   []firedTimer
}

func (f *servingCoordinator) start() {
	f.topics.After(time.Second, tick{Instance: f.instance, N: 1})
	f.topics.After(longAfter, longTimer{Instance: f.instance})
	f.topics.Cancel(f.topics.After(500*time.Millisecond, cancelledTimer{Instance: f.instance}))
}

func (f *servingCoordinator) OnBecomeLeader(metadata.TopicPartition, int32) { f.leading = true }
func (f *servingCoordinator) OnResign(metadata.TopicPartition, int32)       { f.leading = false }

func (f *servingCoordinator) Handles(m sim.Message) bool {
	r, ok := m.(*coordRequest)
	return ok && r.Topic == f.topic
}

func (f *servingCoordinator) HandleRequest(from sim.NodeID, m sim.Message) {
	r := m.(*coordRequest)
	f.handled = append(f.handled, r.Correlation)
	switch {
	case !f.leading:
		f.topics.Send(from, &coordResponse{Correlation: r.Correlation, Error: proto.NotCoordinator, ServedBy: f.topic, Broker: f.broker})
	case r.Delay > 0:
		f.topics.After(r.Delay, replyTimer{Instance: f.instance, To: from, Req: *r})
	default:
		f.topics.Send(from, &coordResponse{Correlation: r.Correlation, ServedBy: f.topic, Broker: f.broker})
	}
}

func (f *servingCoordinator) OnTimer(t sim.Timer) {
	f.fired = append(f.fired, firedTimer{at: f.h.c.World.Now(), t: t})
	switch t := t.(type) {
	case tick:
		f.topics.After(time.Second, tick{Instance: f.instance, N: t.N + 1})
	case replyTimer:
		f.topics.Send(t.To, &coordResponse{Correlation: t.Req.Correlation, ServedBy: f.topic, Broker: f.broker})
	}
}

// owner is the instance a timer names.
func owner(t sim.Timer) int {
	switch t := t.(type) {
	case tick:
		return t.Instance
	case longTimer:
		return t.Instance
	case cancelledTimer:
		return t.Instance
	case replyTimer:
		return t.Instance
	}
	return -1
}

func (f *servingCoordinator) firedOf(kind string) []firedTimer {
	var out []firedTimer
	for _, ft := range f.fired {
		if strings.HasSuffix(fmt.Sprintf("%T", ft.t), "."+kind) {
			out = append(out, ft)
		}
	}
	return out
}

// scripted is a request the client sends at a time (from its start) to a
// broker.
type scripted struct {
	at     time.Duration
	broker int32
	req    *coordRequest
}

type answer struct {
	at, sentAt time.Duration
	from       sim.NodeID
	resp       *coordResponse
}

// scriptedClient sends its script and keeps the answers.
type scriptedClient struct {
	h       *routingHarness
	env     sim.Env
	script  []scripted
	sentAt  map[uint64]time.Duration
	answers []answer
}

func (c *scriptedClient) Start(env sim.Env) {
	c.env, c.sentAt = env, map[uint64]time.Duration{}
	for i, s := range c.script {
		env.After(s.at, i)
	}
}

func (c *scriptedClient) Fire(t sim.Timer) {
	s := c.script[t.(int)]
	c.sentAt[s.req.Correlation] = c.h.c.World.Now()
	c.env.Send(c.h.c.BrokerNode(s.broker), s.req)
}

func (c *scriptedClient) Deliver(from sim.NodeID, m sim.Message) {
	if r, ok := m.(*coordResponse); ok {
		c.answers = append(c.answers, answer{at: c.h.c.World.Now(), sentAt: c.sentAt[r.Correlation], from: from, resp: r})
	}
}

// Two coordinators on every broker each get only the requests for them,
// and answer (the one on a broker that does not lead their partition,
// NOT_COORDINATOR); a request no coordinator serves is answered
// NOT_COORDINATOR by the broker; a delayed answer comes from the
// coordinator's timer.
func TestCoordinatorsServeOnlyTheirOwnRequests(t *testing.T) {
	script := []scripted{
		{at: 5 * time.Second, broker: 1, req: &coordRequest{Correlation: 1, Topic: offsetsTP.Topic}},
		{at: 5 * time.Second, broker: 1, req: &coordRequest{Correlation: 2, Topic: txnTP.Topic}},
		{at: 5 * time.Second, broker: 1, req: &coordRequest{Correlation: 3, Topic: "__share_group_state"}},
		{at: 5 * time.Second, broker: 1, req: &coordRequest{Correlation: 4, Topic: offsetsTP.Topic, Delay: 2 * time.Second}},
		{at: 5 * time.Second, broker: 2, req: &coordRequest{Correlation: 5, Topic: txnTP.Topic}},
		{at: 6 * time.Second, broker: 1, req: &coordRequest{Correlation: 6, Topic: txnTP.Topic}},
	}
	trace := &sim.TraceBuffer{RecordsMax: 1 << 22}
	h := newRoutingHarness(t, 3, []string{offsetsTP.Topic, txnTP.Topic}, script, trace)
	h.run(10 * time.Second)

	want := map[uint64]coordResponse{
		1: {ServedBy: offsetsTP.Topic, Broker: 1},
		2: {ServedBy: txnTP.Topic, Broker: 1},
		3: {Error: proto.NotCoordinator, Broker: -1},
		4: {ServedBy: offsetsTP.Topic, Broker: 1},
		5: {Error: proto.NotCoordinator, ServedBy: txnTP.Topic, Broker: 2},
		6: {ServedBy: txnTP.Topic, Broker: 1},
	}
	if len(h.client.answers) != len(want) {
		t.Fatalf("the client got %d answers, want %d: %v", len(h.client.answers), len(want), h.client.answers)
	}
	for id, w := range want {
		a, ok := h.answer(id)
		if !ok {
			t.Fatalf("no answer to #%d", id)
		}
		if got := *a.resp; got.Error != w.Error || got.ServedBy != w.ServedBy || got.Broker != w.Broker {
			t.Errorf("#%d: got %v, want %v", id, &got, &w)
		}
	}
	if a, _ := h.answer(4); a.at < a.sentAt+2*time.Second {
		t.Errorf("the delayed answer came %v after the request, before its 2 s timer", a.at-a.sentAt)
	}
	if a, _ := h.answer(1); a.at >= a.sentAt+time.Second {
		t.Errorf("the answer at once took %v", a.at-a.sentAt)
	}
	handled := map[string][]uint64{
		"broker 1 " + offsetsTP.Topic: {1, 4},
		"broker 1 " + txnTP.Topic:     {2, 6},
		"broker 2 " + txnTP.Topic:     {5},
	}
	for _, f := range h.fakes {
		key := fmt.Sprintf("broker %d %s", f.broker, f.topic)
		if !slices.Equal(f.handled, handled[key]) {
			t.Errorf("%s handled %v, want %v", key, f.handled, handled[key])
		}
	}
	if n := len(h.fakes); n != 6 {
		t.Errorf("%d coordinators built, want 2 on each of 3 brokers", n)
	}
	h.checkTimersAreOwn()
	// Where a FindCoordinator would send a client, from any broker.
	for _, f := range h.fakes {
		if b, node, ok := f.topics.Leader(0); b != 1 || node != h.c.BrokerNode(1) || !ok || f.topics.Partitions() != 1 {
			t.Errorf("broker %d's %s coordinator finds its leader at %d (node %d, %v) of %d partitions, want broker 1 of 1", f.broker, f.topic, b, node, ok, f.topics.Partitions())
		}
	}

	// The trace names the requests as they name themselves, and a
	// coordinator's timer by its coordinator and as fmt prints it.
	var request, reply string
	for _, r := range trace.Records {
		switch {
		case r.Node == "broker-1" && r.Kind == "deliver" && strings.HasPrefix(r.Detail, "TestCoordinatorRequest #4 "):
			request = r.Detail
		case r.Node == "broker-1" && strings.Contains(r.Detail, "replyTimer"):
			reply = r.Detail
		}
	}
	if request != "TestCoordinatorRequest #4 for __consumer_offsets" {
		t.Errorf("the trace shows request #4 as %q", request)
	}
	wantReply := fmt.Sprintf("broker.coordinatorTimer {__consumer_offsets: broker_test.replyTimer {Instance:0 To:%d Req:{Correlation:4 Topic:__consumer_offsets Delay:2s}}}", h.c.World.Nodes()[len(h.c.World.Nodes())-1])
	if reply != wantReply {
		t.Errorf("the trace shows the reply timer as %q, want %q", reply, wantReply)
	}
	if trace.Dropped > 0 {
		t.Errorf("the trace buffer dropped %d records", trace.Dropped)
	}
}

// A coordinator's timers come back to it, and die with its broker: a
// crash drops those set before it, even one due after the restart, and
// the coordinator the restarted broker builds gets only its own.
func TestCoordinatorTimersFireAndDieWithTheBroker(t *testing.T) {
	const crashAt, restartAfter = 3500 * time.Millisecond, time.Second
	h := newRoutingHarness(t, 5, []string{offsetsTP.Topic}, nil, nil)
	if err := h.c.World.ScheduleFault(crashAt, sim.Fault{Kind: sim.FaultCrash, Target: "broker-1", For: restartAfter}); err != nil {
		t.Fatal(err)
	}
	h.run(15 * time.Second)

	runs := h.of(1, offsetsTP.Topic)
	if len(runs) != 2 {
		t.Fatalf("broker 1 built %d coordinators, want one per start (2)", len(runs))
	}
	h.checkTimersAreOwn()
	old, next := runs[0], runs[1]
	if ticks := old.firedOf("tick"); len(ticks) != 3 {
		t.Errorf("broker 1's first coordinator ticked %d times before the crash at %v, want 3 (at 1, 2, 3 s)", len(ticks), crashAt)
	}
	if last := old.fired[len(old.fired)-1]; last.at >= crashAt {
		t.Errorf("broker 1's first coordinator was handed %+v at %v, after the crash", last.t, last.at)
	}
	if l := old.firedOf("longTimer"); len(l) > 0 {
		t.Errorf("the long timer set before the crash fired at %v", l[0].at)
	}
	// The restarted coordinator ticks from its own start on, and its own
	// long timer fires.
	ticks := next.firedOf("tick")
	if len(ticks) < 8 || ticks[0].at < crashAt+restartAfter {
		t.Fatalf("broker 1's second coordinator should tick every second from its start: %+v", ticks)
	}
	if l := next.firedOf("longTimer"); len(l) != 1 || l[0].at < crashAt+restartAfter+longAfter {
		t.Errorf("broker 1's second coordinator's long timer: %+v", l)
	}
	for _, b := range []int32{2, 3} {
		f := h.of(b, offsetsTP.Topic)[0]
		if len(f.firedOf("tick")) != 15 || len(f.firedOf("longTimer")) != 1 {
			t.Errorf("broker %d's coordinator: %d ticks, %d long timers in 15 s, want 15 and 1", b, len(f.firedOf("tick")), len(f.firedOf("longTimer")))
		}
	}
}
