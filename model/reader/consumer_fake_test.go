package reader_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"kafkasim/history"
	"kafkasim/model/group/assign"
	"kafkasim/model/group/consumergroup"
	"kafkasim/model/proto"
	"kafkasim/model/reader"
	"kafkasim/sim"
)

// cgBroker is groupBroker (the data and the classic calls) with a
// consumer-protocol coordinator in front: the coordinator's own state
// machine (consumergroup.Group) with the uniform assignor, its session and
// rebalance timers on the broker's clock, and OffsetCommit / OffsetFetch
// checked by the group as Kafka's ConsumerGroup.validateOffsetCommit /
// validateOffsetFetch do. Records replay at once (no __consumer_offsets).
type cgBroker struct {
	*groupBroker
	g      *consumergroup.Group
	cenv   *consumergroup.Env
	timers map[cgTimerKey]uint64 // the current token of each member's timer
	token  uint64
	// fenceNext answers the next heartbeat of the member with this
	// process's node id FENCED_MEMBER_EPOCH, as a coordinator that fenced it
	// would (its session timed out meanwhile): the group forgets it first.
	fenceNext sim.NodeID
	// log is what the coordinator received, in order, as "from API detail".
	log   []string
	at    []time.Duration // when each log line was received
	names map[sim.NodeID]string
}

type cgTimerKey struct {
	kind   consumergroup.TimerKind
	member string
}

type cgTimer struct {
	t     consumergroup.Timer
	token uint64
}

// uniform is the brokers' default server assignor.
type uniform struct{ a assign.ServerAssignor }

func (u uniform) Name() string { return u.a.Name() }

func (u uniform) Assign(members []consumergroup.MemberSpec, counts map[string]int32) map[string][]proto.TopicPartition {
	gm := make([]assign.GroupMember, len(members))
	for i, m := range members {
		gm[i] = assign.GroupMember{MemberID: m.MemberID, InstanceID: m.InstanceID, Topics: m.Topics, Assigned: m.Current}
	}
	return u.a.Assign(gm, counts)
}

func newCGBroker(partitions, records int, grantBeforeRelease bool) *cgBroker {
	a, _ := assign.ServerAssignorByName("uniform")
	b := &cgBroker{groupBroker: newGroupBroker(partitions, records), g: consumergroup.New("g"),
		timers: map[cgTimerKey]uint64{}, fenceNext: sim.NoNode, names: map[sim.NodeID]string{}}
	b.cenv = &consumergroup.Env{Config: consumergroup.Config{SessionTimeout: consumergroup.DefaultSessionTimeout,
		HeartbeatInterval: consumergroup.DefaultHeartbeatInterval, Assignors: []consumergroup.Assignor{uniform{a}},
		GrantBeforeRelease: grantBeforeRelease},
		Rand: rand.New(rand.NewPCG(1, 2)),
		Partitions: func(topic string) (int32, bool) {
			return int32(partitions), topic == "orders"
		}}
	return b
}

func (b *cgBroker) apply(res consumergroup.Result) {
	if err := b.g.ReplayAll(res.Records); err != nil {
		panic(err)
	}
	for _, t := range res.Timers {
		k := cgTimerKey{t.Kind, t.MemberID}
		if t.Cancel {
			delete(b.timers, k)
			continue
		}
		b.token++
		b.timers[k] = b.token
		b.env.After(t.After, cgTimer{t: t, token: b.token})
	}
}

func (b *cgBroker) Fire(t sim.Timer) {
	ct, ok := t.(cgTimer)
	if !ok || b.timers[cgTimerKey{ct.t.Kind, ct.t.MemberID}] != ct.token {
		return
	}
	delete(b.timers, cgTimerKey{ct.t.Kind, ct.t.MemberID})
	b.apply(b.g.OnTimer(b.cenv, ct.t))
}

func (b *cgBroker) note(from sim.NodeID, s string) {
	b.log = append(b.log, b.names[from]+" "+s)
	b.at = append(b.at, b.env.Now())
}

func (b *cgBroker) Deliver(from sim.NodeID, m sim.Message) {
	switch m := m.(type) {
	case *proto.ConsumerGroupHeartbeatRequest:
		owned := "-"
		if m.OwnedSent {
			owned = fmt.Sprint(tpStrs(m.OwnedPartitions))
		}
		b.note(from, fmt.Sprintf("ConsumerGroupHeartbeat epoch=%d owned=%s id=%s", m.MemberEpoch, owned, m.MemberID))
		if from == b.fenceNext && m.MemberEpoch > 0 {
			b.fenceNext = sim.NoNode
			// The session expired: the group removes the member.
			b.apply(b.g.OnTimer(b.cenv, consumergroup.Timer{Kind: consumergroup.SessionTimeout, MemberID: m.MemberID}))
		}
		res := b.g.Heartbeat(b.cenv, m)
		b.apply(res)
		b.env.Send(from, res.Response)
	case *proto.OffsetCommitRequest:
		b.note(from, fmt.Sprintf("OffsetCommit epoch=%d id=%s", m.GenerationIDOrMemberEpoch, m.MemberID))
		err := b.g.ValidateOffsetCommit(m.MemberID, m.GenerationIDOrMemberEpoch, false)
		if err == proto.None {
			for _, p := range m.Partitions {
				b.committed[p.Topic+"-"+strconv.Itoa(int(p.Partition))] = p
			}
		}
		b.env.Send(from, m.Refused(err))
	case *proto.OffsetFetchRequest:
		b.note(from, fmt.Sprintf("OffsetFetch epoch=%d id=%s", m.MemberEpoch, m.MemberID))
		if err := b.g.ValidateOffsetFetch(m.MemberID, m.MemberEpoch, false); err != proto.None {
			b.env.Send(from, &proto.OffsetFetchResponse{CorrelationID: m.CorrelationID, Error: err})
			return
		}
		b.groupBroker.Deliver(from, m)
	default:
		b.groupBroker.Deliver(from, m)
	}
}

func tpStrs(tps []proto.TopicPartition) []string {
	out := []string{}
	for _, tp := range tps {
		out = append(out, tp.Topic+"-"+strconv.Itoa(int(tp.Partition)))
	}
	slices.Sort(out)
	return out
}

// newCGWorld is a world with the consumer-protocol broker and members.
func newCGWorld(b *cgBroker, cfgs ...reader.Config) *groupWorld {
	gw := &groupWorld{w: sim.NewWorld(sim.DefaultOptions(1))}
	bid := gw.w.AddNode(sim.NodeSpec{Name: "broker-1", Role: "broker", New: func() sim.Node { return b }})
	gw.rec = history.NewRecorder(gw.w.Now)
	for _, cfg := range cfgs {
		cfg.Brokers, cfg.Recorder = []sim.NodeID{bid}, gw.rec
		id := gw.w.AddNode(sim.NodeSpec{Name: cfg.Name, Role: "consumer", New: reader.New(cfg)})
		b.names[id] = cfg.Name
		gw.members = append(gw.members, id)
	}
	return gw
}

// consumerMemberConfig is a consumer-protocol member of group g reading
// orders.
func consumerMemberConfig(name string, commit reader.CommitMode) reader.Config {
	cfg := reader.DefaultConfig(name, []string{"orders"})
	gc := reader.DefaultGroupConfig("g")
	gc.Protocol, gc.ServerAssignor, gc.Commit = reader.ProtocolConsumer, "uniform", commit
	gc.Processing = sim.Fixed(time.Millisecond)
	cfg.Group = &gc
	return cfg
}

// from keeps the coordinator's log lines of one process whose text
// contains sub.
func from(log []string, process, sub string) []string {
	var out []string
	for _, l := range log {
		if strings.HasPrefix(l, process+" ") && strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return out
}
