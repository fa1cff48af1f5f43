package broker

import (
	"fmt"
	"slices"
	"testing"

	"kafkasim/model/metadata"
	"kafkasim/model/proto"
	"kafkasim/sim"
)

// routedRequest is a request a routingCoordinator may serve.
type routedRequest struct{ kind string }

func (*routedRequest) MessageName() string { return "Routed" }

// NotCoordinator implements CoordinatorRequest.
func (m *routedRequest) NotCoordinator() sim.Message { return &routedAnswer{kind: m.kind} }

type routedAnswer struct{ kind string }

func (*routedAnswer) MessageName() string { return "RoutedAnswer" }

// routingCoordinator serves the routedRequests of its kinds, and
// InitProducerId if it says so; Disconnected, if it were offered.
type routingCoordinator struct {
	name          string
	kinds         []string
	initProducers bool
	got           *[]string // shared by the coordinators of a test: who got what, in order
}

func (c *routingCoordinator) OnBecomeLeader(metadata.TopicPartition, int32) {}
func (c *routingCoordinator) OnResign(metadata.TopicPartition, int32)       {}

func (c *routingCoordinator) Handles(m sim.Message) bool {
	switch m := m.(type) {
	case *routedRequest:
		return slices.Contains(c.kinds, m.kind)
	case *proto.InitProducerIDRequest:
		return c.initProducers
	case *sim.Disconnected:
		return true
	}
	return false
}

func (c *routingCoordinator) HandleRequest(from sim.NodeID, m sim.Message) {
	*c.got = append(*c.got, fmt.Sprintf("%s: %s from %d", c.name, m.MessageName(), from))
}

func (c *routingCoordinator) OnTimer(t sim.Timer) {
	*c.got = append(*c.got, fmt.Sprintf("%s: timer %v", c.name, t))
}

// routingEnv records what the broker sends and the connections it closes.
type routingEnv struct {
	sim.Env
	got *[]string
}

func (e *routingEnv) Send(to sim.NodeID, m sim.Message) {
	*e.got = append(*e.got, fmt.Sprintf("broker: %s to %d", m.MessageName(), to))
}

func (e *routingEnv) CloseConnection(peer sim.NodeID) {
	*e.got = append(*e.got, fmt.Sprintf("broker: closes %d", peer))
}

// routingBroker is a replica manager hosting coordinators named a, b, ...
// with those kinds; a also serves InitProducerId.
func routingBroker(got *[]string, stopped bool, kinds ...[]string) *replicaManager {
	rm := &replicaManager{n: &Node{env: &routingEnv{got: got}}, stopped: stopped}
	for i, k := range kinds {
		name := string(rune('a' + i))
		c := &routingCoordinator{name: name, kinds: k, initProducers: i == 0, got: got}
		rm.coordinators = append(rm.coordinators, &hostedCoordinator{topic: "__" + name, c: c, requests: c, timers: c})
	}
	return rm
}

// A message goes to the first coordinator, in configuration order, that
// handles it; a coordinator request none handles is answered by the
// broker (NOT_COORDINATOR); a connection reset is never offered; a broker
// in the last step of a clean shutdown offers nothing and closes the
// connection of a coordinator request; a broker without coordinators takes
// nothing but coordinator requests.
func TestCoordinatorRequestRouting(t *testing.T) {
	both := [][]string{{"join", "find"}, {"endtxn", "find"}}
	cases := []struct {
		name    string
		kinds   [][]string
		stopped bool
		m       sim.Message
		taken   bool // by a coordinator, or answered by the broker
		want    []string
	}{
		{"its own", both, false, &routedRequest{"endtxn"}, true, []string{"b: Routed from 7"}},
		{"the first of two", both, false, &routedRequest{"find"}, true, []string{"a: Routed from 7"}},
		{"InitProducerId, before the replica manager", both, false, &proto.InitProducerIDRequest{}, true, []string{"a: InitProducerId from 7"}},
		{"nobody's", both, false, &routedRequest{"sharegroup"}, true, []string{"broker: RoutedAnswer to 7"}},
		{"not a coordinator request", both, false, &proto.MetadataRequest{}, false, nil},
		{"a connection reset", both, false, &sim.Disconnected{Peer: 7}, false, nil},
		{"shutting down", both, true, &routedRequest{"join"}, true, []string{"broker: closes 7"}},
		{"shutting down, InitProducerId", both, true, &proto.InitProducerIDRequest{}, false, nil},
		{"no coordinators", nil, false, &routedRequest{"join"}, true, []string{"broker: RoutedAnswer to 7"}},
		{"no coordinators, InitProducerId", nil, false, &proto.InitProducerIDRequest{}, false, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			rm := routingBroker(&got, tc.stopped, tc.kinds...)
			// As Node.Deliver does, with the replica manager taking nothing.
			taken := rm.toCoordinator(7, tc.m) || rm.notCoordinator(7, tc.m)
			if taken != tc.taken || !slices.Equal(got, tc.want) {
				t.Fatalf("taken %v, %q; want %v, %q", taken, got, tc.taken, tc.want)
			}
		})
	}
}

// greedyCoordinator claims every message it is offered.
type greedyCoordinator struct{ routingCoordinator }

func (*greedyCoordinator) Handles(sim.Message) bool { return true }

// A coordinator that claims everything is offered neither what the
// broker's own parts need nor the requests the replica manager serves,
// InitProducerId aside.
func TestCoordinatorCannotTakeTheBrokersOwn(t *testing.T) {
	for _, tc := range []struct {
		m       sim.Message
		offered bool
	}{
		{&sim.Disconnected{Peer: 7}, false},
		{&proto.FetchResponse{}, false},
		{&proto.AlterPartitionResponse{}, false},
		{&proto.BrokerRegistrationResponse{}, false},
		{&proto.BrokerHeartbeatResponse{}, false},
		{&proto.ProduceRequest{}, false},
		{&proto.FetchRequest{}, false},
		{&proto.ListOffsetsRequest{}, false},
		{&proto.OffsetsForLeaderEpochRequest{}, false},
		{&proto.MetadataRequest{}, false},
		{&proto.InitProducerIDRequest{}, true},
		{&routedRequest{"join"}, true},
		{&routedAnswer{"join"}, true}, // an answer to the coordinator's own request
	} {
		var got []string
		c := &greedyCoordinator{routingCoordinator{name: "a", got: &got}}
		rm := &replicaManager{n: &Node{env: &routingEnv{got: &got}}}
		rm.coordinators = []*hostedCoordinator{{topic: "__a", c: c, requests: c, timers: c}}
		if taken := rm.toCoordinator(7, tc.m); taken != tc.offered || (len(got) == 1) != tc.offered {
			t.Errorf("%s: taken %v, %q; want taken %v", tc.m.MessageName(), taken, got, tc.offered)
		}
	}
}

// A coordinator's timer goes back to the coordinator that set it, through
// the replica manager's Fire, and to none once the broker is in the last
// step of a clean shutdown.
func TestCoordinatorTimerRouting(t *testing.T) {
	for _, stopped := range []bool{false, true} {
		var got []string
		rm := routingBroker(&got, stopped, []string{"join"}, []string{"endtxn"})
		topics := &InternalTopics{rm: rm, h: rm.coordinators[1]}
		timer := coordinatorTimer{h: topics.h, t: "txn-timeout"}
		if !rm.fire(timer) {
			t.Fatal("the replica manager does not take a coordinator's timer")
		}
		var want []string
		if !stopped {
			want = []string{"b: timer txn-timeout"}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("stopped=%v: got %q, want %q", stopped, got, want)
		}
	}
}

type sessionTimeout struct {
	Group  string
	Member int
}

type stringTimer struct{}

func (stringTimer) String() string { return "rebalance" }

// A coordinator's timer shows in the trace under its coordinator's topic,
// as its own String says or as fmt prints a value.
func TestCoordinatorTimerString(t *testing.T) {
	h := &hostedCoordinator{topic: "__consumer_offsets"}
	for _, tc := range []struct {
		t    sim.Timer
		want string
	}{
		{stringTimer{}, "broker.coordinatorTimer {__consumer_offsets: rebalance}"},
		{sessionTimeout{"g", 3}, "broker.coordinatorTimer {__consumer_offsets: broker.sessionTimeout {Group:g Member:3}}"},
		{7, "broker.coordinatorTimer {__consumer_offsets: int 7}"},
	} {
		if got := (coordinatorTimer{h: h, t: tc.t}).String(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}

// Leader is where a FindCoordinator sends a client: the leader of the
// coordinator's partition, if it is registered, unfenced and has a node.
func TestInternalTopicsLeader(t *testing.T) {
	im := metadata.NewImage("broker-1", nil)
	im.Brokers[1] = &metadata.Broker{ID: 1}
	im.Brokers[2] = &metadata.Broker{ID: 2, Fenced: true}
	im.Brokers[3] = &metadata.Broker{ID: 3, InControlledShutdown: true}
	im.Brokers[9] = &metadata.Broker{ID: 9} // registered, no node known
	led := func(i, leader int32) *metadata.Partition {
		return &metadata.Partition{TopicPartition: metadata.TopicPartition{Topic: "__consumer_offsets", Partition: i}, Leader: leader}
	}
	im.Topics["__consumer_offsets"] = &metadata.Topic{Name: "__consumer_offsets",
		Partitions: []*metadata.Partition{led(0, 1), led(1, 2), led(2, 3), led(3, -1), led(4, 9), led(5, 4)}}
	n := &Node{image: im, cfg: Config{Nodes: map[int32]sim.NodeID{1: 11, 2: 12, 3: 13, 4: 14}}}
	rm := &replicaManager{n: n}
	offsets := &InternalTopics{rm: rm, h: &hostedCoordinator{topic: "__consumer_offsets"}}
	txn := &InternalTopics{rm: rm, h: &hostedCoordinator{topic: "__transaction_state"}}
	if offsets.Partitions() != 6 || txn.Partitions() != 0 {
		t.Fatalf("Partitions: %d and %d, want 6 and 0", offsets.Partitions(), txn.Partitions())
	}
	for _, tc := range []struct {
		topics    *InternalTopics
		partition int32
		broker    int32
		node      sim.NodeID
		ok        bool
	}{
		{offsets, 0, 1, 11, true},
		{offsets, 1, -1, sim.NoNode, false}, // fenced
		{offsets, 2, 3, 13, true},           // shutting down, still alive
		{offsets, 3, -1, sim.NoNode, false}, // no leader
		{offsets, 4, -1, sim.NoNode, false}, // no node
		{offsets, 5, -1, sim.NoNode, false}, // not registered
		{offsets, 6, -1, sim.NoNode, false}, // no such partition
		{txn, 0, -1, sim.NoNode, false},     // no such topic
	} {
		b, node, ok := tc.topics.Leader(tc.partition)
		if b != tc.broker || node != tc.node || ok != tc.ok {
			t.Errorf("%s-%d: got %d %d %v, want %d %d %v", tc.topics.h.topic, tc.partition, b, node, ok, tc.broker, tc.node, tc.ok)
		}
	}
}
