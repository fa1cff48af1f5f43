package reader_test

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"kafkasim/history"
	"kafkasim/model/proto"
	"kafkasim/model/reader"
	"kafkasim/model/record"
	"kafkasim/sim"
)

// groupBroker is broker 1 of a one-broker cluster: the leader of every
// partition of topic orders and the coordinator of the group, a small
// classic coordinator (a join completes once every known member joined;
// the leader's SyncGroup assignment goes to all; heartbeats answer
// REBALANCE_IN_PROGRESS while a join is pending; commits are checked
// against the generation and member).
type groupBroker struct {
	env  sim.Env
	logs [][]*record.Batch

	// scripted answers
	requireMemberID bool
	commitErr       proto.ErrorCode   // answered to every commit when set
	commitErrs      []proto.ErrorCode // answered to the next commits, one each
	heartbeatErr    []proto.ErrorCode
	// holdEmptyFetches leaves a fetch that finds nothing new unanswered,
	// as a broker parks it in purgatory (here for good): a poll waits
	// then for its own timeout.
	holdEmptyFetches bool
	// dropCommits leaves the first commits unanswered and unapplied, as a
	// partition that lost their requests.
	dropCommits int
	// skipStaticRejoin answers a static member's rejoin under a new member
	// id in a stable group at once, in the same generation, keeping the
	// assignment, and tells a returning leader to skip the assignment
	// (KIP-814), as GroupMetadataManager.updateStaticMemberThenRebalanceOrCompleteJoin.
	skipStaticRejoin bool
	// logStart is each partition's log start offset (retention deleted
	// what is below; absent: 0).
	logStart []int64
	// fenceReplacedStatic answers the parked JoinGroup of a static
	// member that its instance rejoining under a new member id replaces
	// FENCED_INSTANCE_ID, as ClassicGroup.replaceStaticMember completes
	// the old member's join future.
	fenceReplacedStatic bool
	// leaderEpoch is the partitions' leader epoch (truncateTo starts a new
	// one); epochStart is where it began, where epoch 0 ends.
	leaderEpoch int32
	epochStart  int64

	// received is every request's name, in order, with who sent it.
	received []string
	joins    []*proto.JoinGroupRequest
	leaves   []*proto.LeaveGroupRequest
	fetches  []*proto.OffsetFetchRequest

	generation int32
	nextID     int
	members    []string          // current members, sorted
	static     map[string]string // instance id -> member id
	pending    map[string]joinWait
	rebalance  bool
	leader     string
	joined     []proto.JoinGroupMember // the current generation's members and subscriptions
	assignment map[string][]proto.TopicPartition
	syncs      map[string]syncWait
	committed  map[string]proto.OffsetCommitPartition
}

type joinWait struct {
	from sim.NodeID
	req  *proto.JoinGroupRequest
}

type syncWait struct {
	from sim.NodeID
	corr uint64
}

func newGroupBroker(partitions, records int) *groupBroker {
	b := &groupBroker{static: map[string]string{}, pending: map[string]joinWait{}, syncs: map[string]syncWait{},
		committed: map[string]proto.OffsetCommitPartition{}}
	for p := range partitions {
		var log []*record.Batch
		for off := range records {
			r := []record.Record{{Value: "p" + strconv.Itoa(p) + ":" + strconv.Itoa(off)}}
			log = append(log, record.New(r, record.Producer{ID: record.NoProducer}, false, record.CompressionNone).Stamp(int64(off), 0))
		}
		b.logs = append(b.logs, log)
	}
	return b
}

func (b *groupBroker) Start(env sim.Env) { b.env = env }
func (b *groupBroker) Fire(sim.Timer)    {}

func (b *groupBroker) count(name string) int {
	n := 0
	for _, r := range b.received {
		if r == name {
			n++
		}
	}
	return n
}

func (b *groupBroker) Deliver(from sim.NodeID, m sim.Message) {
	b.received = append(b.received, m.MessageName())
	switch m := m.(type) {
	case *proto.MetadataRequest:
		var parts []proto.MetadataPartition
		for p := range b.logs {
			parts = append(parts, proto.MetadataPartition{Partition: int32(p), Leader: 1, LeaderEpoch: b.leaderEpoch, Replicas: []int32{1}, ISR: []int32{1}})
		}
		b.env.Send(from, &proto.MetadataResponse{CorrelationID: m.CorrelationID, Brokers: []proto.MetadataBroker{{ID: 1, Node: b.env.ID()}},
			Topics: []proto.MetadataTopic{{Name: "orders", Partitions: parts}}})
	case *proto.ListOffsetsRequest:
		resp := &proto.ListOffsetsResponse{CorrelationID: m.CorrelationID}
		for _, p := range m.Partitions {
			off := int64(len(b.logs[p.Partition]))
			if p.Timestamp == proto.ListEarliest {
				off = b.start(p.Partition)
			}
			resp.Partitions = append(resp.Partitions, proto.ListOffsetsPartitionResponse{TopicPartition: p.TopicPartition, Offset: off})
		}
		b.env.Send(from, resp)
	case *proto.OffsetsForLeaderEpochRequest:
		resp := &proto.OffsetsForLeaderEpochResponse{CorrelationID: m.CorrelationID}
		for _, p := range m.Partitions {
			epoch, end := b.leaderEpoch, int64(len(b.logs[p.Partition]))
			if p.LeaderEpoch < b.leaderEpoch {
				epoch, end = 0, b.epochStart
			}
			resp.Partitions = append(resp.Partitions, proto.OffsetsForLeaderEpochPartitionResponse{TopicPartition: p.TopicPartition, LeaderEpoch: epoch, EndOffset: end})
		}
		b.env.Send(from, resp)
	case *proto.FetchRequest:
		resp := &proto.FetchResponse{CorrelationID: m.CorrelationID}
		if b.holdEmptyFetches && !slices.ContainsFunc(m.Partitions, func(p proto.FetchPartition) bool {
			return p.FetchOffset != int64(len(b.logs[p.Partition]))
		}) {
			return
		}
		for _, p := range m.Partitions {
			log := b.logs[p.Partition]
			fp := proto.FetchPartitionResponse{TopicPartition: p.TopicPartition, HighWatermark: int64(len(log)), LeaderEpoch: b.leaderEpoch}
			if p.CurrentLeaderEpoch >= 0 && p.CurrentLeaderEpoch < b.leaderEpoch {
				fp.Error = proto.FencedLeaderEpoch
			} else if p.FetchOffset > int64(len(log)) || p.FetchOffset < b.start(p.Partition) {
				fp.Error = proto.OffsetOutOfRange
			} else {
				fp.Batches = log[p.FetchOffset:]
			}
			resp.Partitions = append(resp.Partitions, fp)
		}
		b.env.Send(from, resp)
	case *proto.FindCoordinatorRequest:
		b.env.Send(from, &proto.FindCoordinatorResponse{CorrelationID: m.CorrelationID, Key: m.Key, NodeID: 1, Node: b.env.ID()})
	case *proto.JoinGroupRequest:
		b.join(from, m)
	case *proto.SyncGroupRequest:
		b.sync(from, m)
	case *proto.HeartbeatRequest:
		err := proto.None
		switch {
		case len(b.heartbeatErr) > 0:
			err, b.heartbeatErr = b.heartbeatErr[0], b.heartbeatErr[1:]
		case !slices.Contains(b.members, m.MemberID):
			err = proto.UnknownMemberID
		case b.rebalance:
			err = proto.RebalanceInProgress
		case m.GenerationID != b.generation:
			err = proto.IllegalGeneration
		}
		b.env.Send(from, &proto.HeartbeatResponse{CorrelationID: m.CorrelationID, Error: err})
	case *proto.LeaveGroupRequest:
		b.leaves = append(b.leaves, m)
		for _, mem := range m.Members {
			b.remove(mem.MemberID)
		}
		b.env.Send(from, &proto.LeaveGroupResponse{CorrelationID: m.CorrelationID})
	case *proto.OffsetCommitRequest:
		if b.dropCommits > 0 {
			b.dropCommits--
			return
		}
		err := b.commitErr
		if len(b.commitErrs) > 0 {
			err, b.commitErrs = b.commitErrs[0], b.commitErrs[1:]
		}
		switch {
		case err != proto.None:
		case !slices.Contains(b.members, m.MemberID):
			err = proto.UnknownMemberID
		case m.GenerationIDOrMemberEpoch != b.generation:
			err = proto.IllegalGeneration
		}
		if err == proto.None {
			for _, p := range m.Partitions {
				b.committed[p.Topic+"-"+strconv.Itoa(int(p.Partition))] = p
			}
		}
		b.env.Send(from, m.Refused(err))
	case *proto.OffsetFetchRequest:
		b.fetches = append(b.fetches, m)
		resp := &proto.OffsetFetchResponse{CorrelationID: m.CorrelationID}
		for _, tp := range m.Partitions {
			c, ok := b.committed[tp.Topic+"-"+strconv.Itoa(int(tp.Partition))]
			off, epoch := int64(-1), int32(-1)
			if ok {
				off, epoch = c.CommittedOffset, c.CommittedLeaderEpoch
			}
			resp.Partitions = append(resp.Partitions, proto.OffsetFetchPartitionResponse{TopicPartition: tp, CommittedOffset: off, CommittedLeaderEpoch: epoch})
		}
		b.env.Send(from, resp)
	}
}

func (b *groupBroker) start(partition int32) int64 {
	if int(partition) < len(b.logStart) {
		return b.logStart[partition]
	}
	return 0
}

// appendRecords adds n records to a partition's log.
func (b *groupBroker) appendRecords(partition int32, n int) {
	for range n {
		off := len(b.logs[partition])
		r := []record.Record{{Value: "p" + strconv.Itoa(int(partition)) + ":" + strconv.Itoa(off)}}
		b.logs[partition] = append(b.logs[partition], record.New(r, record.Producer{ID: record.NoProducer}, false, record.CompressionNone).Stamp(int64(off), b.leaderEpoch))
	}
}

// truncateTo is a new leader, in leader epoch 1, whose log of partition
// ends at end: what the old leader had past it is gone (KIP-320's
// truncation, as after an unclean election).
func (b *groupBroker) truncateTo(partition int32, end int64) {
	b.logs[partition] = b.logs[partition][:end]
	b.leaderEpoch, b.epochStart = 1, end
}

func (b *groupBroker) remove(memberID string) {
	if !slices.Contains(b.members, memberID) {
		return
	}
	b.members = slices.DeleteFunc(b.members, func(s string) bool { return s == memberID })
	delete(b.pending, memberID)
	if len(b.members) > 0 {
		b.rebalance = true
		b.maybeCompleteJoin()
	}
}

func (b *groupBroker) join(from sim.NodeID, m *proto.JoinGroupRequest) {
	b.joins = append(b.joins, m)
	id := m.MemberID
	if old, ok := b.static[m.GroupInstanceID]; ok && id == "" && b.skipStaticRejoin && !b.rebalance && b.generation > 0 {
		b.nextID++
		id = m.GroupInstanceID + "-" + strconv.Itoa(b.nextID)
		b.static[m.GroupInstanceID] = id
		b.members = append(slices.DeleteFunc(b.members, func(s string) bool { return s == old }), id)
		slices.Sort(b.members)
		b.assignment[id] = b.assignment[old]
		delete(b.assignment, old)
		for i := range b.joined {
			if b.joined[i].MemberID == old {
				b.joined[i].MemberID = id
			}
		}
		resp := &proto.JoinGroupResponse{CorrelationID: m.CorrelationID, GenerationID: b.generation, ProtocolType: "consumer",
			ProtocolName: m.Protocols[0].Name, Leader: b.leader, MemberID: id}
		if b.leader == old {
			b.leader = id
			resp.Leader, resp.SkipAssignment, resp.Members = id, true, slices.Clone(b.joined)
		}
		b.env.Send(from, resp)
		return
	}
	if m.GroupInstanceID != "" {
		if old, ok := b.static[m.GroupInstanceID]; ok && id == "" {
			// A static member rejoining under a new member id replaces
			// its old one.
			b.members = slices.DeleteFunc(b.members, func(s string) bool { return s == old })
			if w, parked := b.pending[old]; parked && b.fenceReplacedStatic {
				b.env.Send(w.from, &proto.JoinGroupResponse{CorrelationID: w.req.CorrelationID, Error: proto.FencedInstanceID,
					GenerationID: -1, MemberID: old})
			}
			delete(b.pending, old)
		}
	}
	if id == "" {
		b.nextID++
		id = "m" + strconv.Itoa(b.nextID)
		if m.GroupInstanceID != "" {
			id = m.GroupInstanceID + "-" + strconv.Itoa(b.nextID)
			b.static[m.GroupInstanceID] = id
		} else if b.requireMemberID {
			b.env.Send(from, &proto.JoinGroupResponse{CorrelationID: m.CorrelationID, Error: proto.MemberIDRequired, GenerationID: -1, MemberID: id})
			return
		}
	}
	if !slices.Contains(b.members, id) {
		b.members = append(b.members, id)
		slices.Sort(b.members)
	}
	b.rebalance = true
	b.pending[id] = joinWait{from: from, req: m}
	b.maybeCompleteJoin()
}

func (b *groupBroker) maybeCompleteJoin() {
	for _, id := range b.members {
		if _, ok := b.pending[id]; !ok {
			return
		}
	}
	b.generation++
	b.rebalance = false
	b.leader = b.members[0]
	b.assignment = nil
	var all []proto.JoinGroupMember
	for _, id := range b.members {
		w := b.pending[id]
		all = append(all, proto.JoinGroupMember{MemberID: id, GroupInstanceID: w.req.GroupInstanceID, Subscription: w.req.Protocols[0].Subscription})
	}
	b.joined = all
	for _, id := range b.members {
		w := b.pending[id]
		resp := &proto.JoinGroupResponse{CorrelationID: w.req.CorrelationID, GenerationID: b.generation, ProtocolType: "consumer",
			ProtocolName: w.req.Protocols[0].Name, Leader: b.leader, MemberID: id}
		if id == b.leader {
			resp.Members = all
		}
		b.env.Send(w.from, resp)
	}
	b.pending = map[string]joinWait{}
}

func (b *groupBroker) sync(from sim.NodeID, m *proto.SyncGroupRequest) {
	if m.GenerationID != b.generation || !slices.Contains(b.members, m.MemberID) {
		b.env.Send(from, &proto.SyncGroupResponse{CorrelationID: m.CorrelationID, Error: proto.IllegalGeneration})
		return
	}
	b.syncs[m.MemberID] = syncWait{from: from, corr: m.CorrelationID}
	if m.MemberID == b.leader && (len(m.Assignments) > 0 || b.assignment == nil) {
		b.assignment = map[string][]proto.TopicPartition{}
		for _, a := range m.Assignments {
			b.assignment[a.MemberID] = a.Partitions
		}
	}
	if b.assignment == nil {
		return
	}
	for _, id := range slices.Sorted(mapKeys(b.syncs)) {
		w := b.syncs[id]
		b.env.Send(w.from, &proto.SyncGroupResponse{CorrelationID: w.corr, ProtocolType: "consumer", Partitions: b.assignment[id]})
	}
	b.syncs = map[string]syncWait{}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m { // kafkasim:orderless: sorted by the caller
			if !yield(k) {
				return
			}
		}
	}
}

// rangeAssignor is Kafka's RangeAssignor (eager): each topic's partitions
// in ranges over the members in member id order.
type rangeAssignor struct{}

func (rangeAssignor) Name() string      { return "range" }
func (rangeAssignor) Cooperative() bool { return false }
func (rangeAssignor) Assign(counts map[string]int32, members []proto.JoinGroupMember) map[string][]proto.TopicPartition {
	out := map[string][]proto.TopicPartition{}
	topics := slices.Sorted(mapKeys(counts))
	for _, t := range topics {
		n := int(counts[t])
		per, extra := n/len(members), n%len(members)
		p := 0
		for i, m := range members {
			k := per
			if i < extra {
				k++
			}
			for range k {
				out[m.MemberID] = append(out[m.MemberID], proto.TopicPartition{Topic: t, Partition: int32(p)})
				p++
			}
		}
	}
	return out
}

// cooperativeRange is range made cooperative as CooperativeStickyAssignor
// adjusts its assignment: a partition moving away from a member that still
// owns it is left unassigned until that member revoked it.
type cooperativeRange struct{}

func (cooperativeRange) Name() string      { return "cooperative-range" }
func (cooperativeRange) Cooperative() bool { return true }
func (cooperativeRange) Assign(counts map[string]int32, members []proto.JoinGroupMember) map[string][]proto.TopicPartition {
	target := rangeAssignor{}.Assign(counts, members)
	owner := map[proto.TopicPartition]string{}
	for _, m := range members {
		for _, tp := range m.Subscription.OwnedPartitions {
			owner[tp] = m.MemberID
		}
	}
	out := map[string][]proto.TopicPartition{}
	for _, m := range members {
		for _, tp := range target[m.MemberID] {
			if o, owned := owner[tp]; owned && o != m.MemberID {
				continue
			}
			out[m.MemberID] = append(out[m.MemberID], tp)
		}
	}
	return out
}

// groupWorld is a world with the broker and n members of group g.
type groupWorld struct {
	w       *sim.World
	b       *groupBroker
	rec     *history.Recorder
	members []sim.NodeID
}

func newGroupWorld(partitions, records int, cfgs ...reader.Config) *groupWorld {
	gw := &groupWorld{w: sim.NewWorld(sim.DefaultOptions(1)), b: newGroupBroker(partitions, records)}
	bid := gw.w.AddNode(sim.NodeSpec{Name: "broker-1", Role: "broker", New: func() sim.Node { return gw.b }})
	gw.rec = history.NewRecorder(gw.w.Now)
	for _, cfg := range cfgs {
		cfg.Brokers, cfg.Recorder = []sim.NodeID{bid}, gw.rec
		gw.members = append(gw.members, gw.w.AddNode(sim.NodeSpec{Name: cfg.Name, Role: "consumer", New: reader.New(cfg)}))
	}
	return gw
}

func (gw *groupWorld) member(i int) *reader.Reader { return gw.w.Node(gw.members[i]).(*reader.Reader) }

// memberConfig is a member of group g reading orders.
func memberConfig(name string, commit reader.CommitMode, assignors ...reader.GroupAssignor) reader.Config {
	cfg := reader.DefaultConfig(name, []string{"orders"})
	gc := reader.DefaultGroupConfig("g")
	gc.Commit, gc.Assignors = commit, assignors
	if len(assignors) == 0 {
		gc.Assignors = []reader.GroupAssignor{rangeAssignor{}}
	}
	gc.Processing = sim.Fixed(time.Millisecond)
	cfg.Group = &gc
	return cfg
}

// ops are a process's operations of the given functions, as short strings:
// "type f detail".
func ops(rec *history.Recorder, process string, fs ...string) []string {
	var out []string
	for _, op := range rec.Ops() {
		if op.Process != process || !slices.Contains(fs, op.F) {
			continue
		}
		out = append(out, opString(op))
	}
	return out
}

func opString(op history.Op) string {
	s := op.Type.String() + " " + op.F
	v := op.Value
	if x := v.Ext; x != nil {
		if x.Partitions != nil {
			s += fmt.Sprintf(" %v", x.Partitions)
		}
		if x.Offsets != nil {
			keys := slices.Sorted(mapKeys(x.Offsets))
			for _, k := range keys {
				s += fmt.Sprintf(" %s=%d", k, x.Offsets[k])
			}
		}
		if op.F != history.FFetchCommitted && op.F != history.FPoll {
			s += fmt.Sprintf(" gen=%d", x.Generation)
		}
	}
	if op.F == history.FProcess {
		s += fmt.Sprintf(" %s-%d@%d", v.Topic, v.Partition, v.Offset)
	}
	if v.Error != "" {
		s += " (" + v.Error + ")"
	}
	return s
}
