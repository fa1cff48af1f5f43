// Package admin is the admin client a scenario uses to create its topics and
// to run admin operations (adding partitions, electing leaders, altering
// configs) as faults: kafka-topics.sh, kafka-leader-election.sh and
// kafka-configs.sh as a node. It retries each
// operation until the active controller accepts it.
package admin

import (
	"fmt"
	"strings"
	"time"

	"kafkasim/model/proto"
	"kafkasim/sim"
)

// Config configures the admin client.
type Config struct {
	Controllers    []sim.NodeID
	Topics         []proto.CreatableTopic
	RequestTimeout time.Duration
	RetryBackoff   time.Duration
}

type op struct {
	topics      []proto.CreatableTopic // CreateTopics
	addTopic    string                 // CreatePartitions
	addCount    int
	elect       *proto.ElectLeadersRequest // ElectLeaders
	alter       *proto.IncrementalAlterConfigsRequest
	correlation uint64
	target      sim.NodeID

	reassign *proto.AlterPartitionReassignmentsRequest // AlterPartitionReassignments
}

// retryTimer ends a request's wait: a timeout, or a back-off before retrying.
type retryTimer struct {
	correlation uint64
	backoff     bool
}

// Node is the admin client.
type Node struct {
	cfg     Config
	env     sim.Env
	queue   []*op
	next    uint64
	hint    sim.NodeID
	rr      int
	created map[string]bool
	// Log records what the admin did, for reports.
	Log []string
}

// New returns a constructor for the admin client.
func New(cfg Config) func() sim.Node {
	return func() sim.Node { return &Node{cfg: cfg} }
}

// Start queues the creation of the configured topics.
func (n *Node) Start(env sim.Env) {
	n.env = env
	n.hint = sim.NoNode
	n.created = map[string]bool{}
	if len(n.cfg.Topics) > 0 {
		n.enqueue(&op{topics: n.cfg.Topics})
	}
}

// TopicsCreated reports whether every configured topic exists.
func (n *Node) TopicsCreated() bool {
	for _, t := range n.cfg.Topics {
		if !n.created[t.Name] {
			return false
		}
	}
	return true
}

// AddPartitions queues raising topic's partition count to count.
func (n *Node) AddPartitions(topic string, count int) {
	n.enqueue(&op{addTopic: topic, addCount: count})
}

// ElectLeaders queues an ElectLeaders request (KIP-460): of type typ for
// partitions, or for every partition when partitions is nil. Its answer is
// logged and noted in the trace; a partition's error is not retried, as
// kafka-leader-election.sh reports it and stops.
func (n *Node) ElectLeaders(typ proto.ElectionType, partitions []proto.TopicPartition) {
	n.enqueue(&op{elect: &proto.ElectLeadersRequest{Type: typ, Partitions: partitions}})
}

func (n *Node) enqueue(o *op) {
	n.queue = append(n.queue, o)
	if len(n.queue) == 1 {
		n.send()
	}
}

func (n *Node) send() {
	if len(n.queue) == 0 {
		return
	}
	o := n.queue[0]
	n.next++
	o.correlation = n.next
	o.target = n.hint
	if o.target == sim.NoNode {
		o.target = n.cfg.Controllers[n.rr%len(n.cfg.Controllers)]
		n.rr++
	}
	if o.alter != nil {
		req := *o.alter
		req.CorrelationID = o.correlation
		n.env.Send(o.target, &req)
	} else if o.elect != nil {
		req := *o.elect
		req.CorrelationID = o.correlation
		n.env.Send(o.target, &req)
	} else if o.reassign != nil {
		req := *o.reassign
		req.CorrelationID = o.correlation
		n.env.Send(o.target, &req)
	} else if o.addTopic != "" {
		n.env.Send(o.target, &proto.CreatePartitionsRequest{CorrelationID: o.correlation, Topic: o.addTopic, Count: o.addCount})
	} else {
		n.env.Send(o.target, &proto.CreateTopicsRequest{CorrelationID: o.correlation, Topics: o.topics})
	}
	n.env.After(n.cfg.RequestTimeout, retryTimer{correlation: o.correlation})
}

func (n *Node) retry(notController bool, hint sim.NodeID) {
	if notController {
		n.hint = hint
	} else {
		n.hint = sim.NoNode
	}
	n.env.After(n.cfg.RetryBackoff, retryTimer{correlation: n.queue[0].correlation, backoff: true})
}

// Deliver handles the controller's answers.
func (n *Node) Deliver(from sim.NodeID, m sim.Message) {
	if len(n.queue) == 0 {
		return
	}
	o := n.queue[0]
	switch m := m.(type) {
	case *proto.CreateTopicsResponse:
		if m.CorrelationID != o.correlation {
			return
		}
		if m.Error == proto.NotController {
			n.retry(true, m.ControllerHint)
			return
		}
		var again []proto.CreatableTopic
		for i, r := range m.Topics {
			switch r.Error {
			case proto.None, proto.TopicAlreadyExists:
				n.created[r.Name] = true
				n.Log = append(n.Log, fmt.Sprintf("%v created topic %s", n.env.Now(), r.Name))
			default:
				// Too few brokers registered yet, say: try again.
				again = append(again, o.topics[i])
			}
		}
		n.hint = from
		if len(again) > 0 {
			o.topics = again
			n.retry(false, sim.NoNode)
			return
		}
		n.done()
	case *proto.CreatePartitionsResponse:
		if m.CorrelationID != o.correlation {
			return
		}
		switch m.Error {
		case proto.NotController:
			n.retry(true, m.ControllerHint)
			return
		case proto.None:
			n.Log = append(n.Log, fmt.Sprintf("%v topic %s now has %d partitions", n.env.Now(), o.addTopic, o.addCount))
		case proto.InvalidPartitions:
			n.Log = append(n.Log, fmt.Sprintf("%v add-partitions %s to %d: %s", n.env.Now(), o.addTopic, o.addCount, m.Message))
		default:
			n.retry(false, sim.NoNode)
			return
		}
		n.hint = from
		n.done()
	case *proto.ElectLeadersResponse:
		if n.finalAnswer(from, o, m.CorrelationID, m.Error, m.ControllerHint) {
			n.noteElection(o.elect, m)
			n.done()
		}
	case *proto.IncrementalAlterConfigsResponse:
		if n.finalAnswer(from, o, m.CorrelationID, m.Error, m.ControllerHint) {
			n.noteAlterConfigs(o.alter, m)
			n.done()
		}
	case *proto.AlterPartitionReassignmentsResponse:
		if n.finalAnswer(from, o, m.CorrelationID, m.Error, m.ControllerHint) {
			n.noteReassignment(m)
			n.done()
		}
	}
}

// finalAnswer reports whether an answer settles operation o, for the
// operations an operator runs once (elect-leaders, alter-config, reassign):
// an answer to an older request is ignored, NOT_CONTROLLER is retried at the
// hinted controller, and any other answer, an error too, is o's outcome.
func (n *Node) finalAnswer(from sim.NodeID, o *op, correlation uint64, err proto.ErrorCode, hint sim.NodeID) bool {
	if correlation != o.correlation {
		return false
	}
	if err == proto.NotController {
		n.retry(true, hint)
		return false
	}
	n.hint = from
	return true
}

// noteElection logs an ElectLeaders answer, one line for the request:
// "elect-leaders preferred: orders-0 NONE, orders-1 ELECTION_NOT_NEEDED".
func (n *Node) noteElection(req *proto.ElectLeadersRequest, m *proto.ElectLeadersResponse) {
	var b strings.Builder
	b.WriteString("elect-leaders " + req.Type.String())
	if req.Partitions == nil {
		b.WriteString(" (all partitions)")
	}
	b.WriteString(":")
	if len(m.Results) == 0 {
		b.WriteString(" no partition needed an election")
	}
	for i, r := range m.Results {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, " %s-%d %s", r.Partition.Topic, r.Partition.Partition, r.Error)
		if r.Message != "" {
			b.WriteString(" (" + r.Message + ")")
		}
	}
	n.env.Note("admin", b.String())
	n.Log = append(n.Log, fmt.Sprintf("%v %s", n.env.Now(), b.String()))
}

func (n *Node) done() {
	n.queue = n.queue[1:]
	n.send()
}

// Fire handles timeouts and retries.
func (n *Node) Fire(t sim.Timer) {
	rt, ok := t.(retryTimer)
	if !ok || len(n.queue) == 0 {
		return
	}
	if rt.correlation != n.queue[0].correlation {
		return
	}
	if !rt.backoff {
		n.hint = sim.NoNode // timed out: ask another controller
	}
	n.send()
}
