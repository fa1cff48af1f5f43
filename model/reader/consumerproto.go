package reader

import (
	"fmt"
	"slices"
	"time"

	"kafkasim/model/proto"
	"kafkasim/model/reader/membership"
	"kafkasim/sim"
)

// A reader whose group config says group.protocol=consumer is a member of a
// KIP-848 consumer group, after Kafka 4's AsyncKafkaConsumer: the
// membership manager (model/reader/membership) decides what to heartbeat
// and what the application must do; this file drives it. Its background
// thread's part (ConsumerNetworkThread with the CoordinatorRequestManager
// and the heartbeat request manager) is the heartbeat timer and the
// responses; its application thread's part (AsyncKafkaConsumer.poll, which
// runs the rebalance callbacks: processBackgroundEvents) is consumerPoll.
// Discovery, commits and the committed offsets of new partitions are the
// classic member's code (coordinator.go, commit.go), with the member epoch
// where the classic member sends its generation (OffsetCommit's
// GenerationIdOrMemberEpoch, OffsetFetch v9's member id and epoch).

// gConsumerHeartbeat is the timer of a consumer-protocol member's
// heartbeat request manager.
const gConsumerHeartbeat = gCommitRetry + 1

// consumerMember is a consumer-protocol member's driver state.
type consumerMember struct {
	m *membership.Manager
	// hbToken tells the current heartbeat timer from stale ones.
	hbToken uint64
	// actions are the manager's actions not carried out yet, in order.
	actions []membership.Action
	// joinedAt is when the member last joined: the coordinator answered
	// its heartbeat at member epoch 0 (-1: not yet). A group that exists
	// since then has its records on __consumer_offsets.
	// joinedAt and fatalAt are in the run's virtual time
	// (sim.Env.WorldTime), not on the member's clock: they decide nothing
	// the member does, and the convergence check compares them with the
	// god view's losses, which are in virtual time. A member whose clock
	// a fault set back would otherwise have joined at a negative time
	// (taken for "never") or before a loss that came after.
	joinedAt time.Duration
	// joinedFrom is the broker node that answered that heartbeat.
	joinedFrom sim.NodeID
	// fenced is what the member knew when FENCED_INSTANCE_ID ended it
	// (ConsumerFenced).
	fenced *Fenced
	// fatalCode is the heartbeat error that ended the member, at fatalAt.
	fatalCode proto.ErrorCode
	fatalAt   time.Duration
}

// newConsumerMember is a member subscribed to the reader's topics: it joins
// at its first poll (AsyncKafkaConsumer.subscribe, then poll).
func newConsumerMember(cfg *GroupConfig, topics []string, r sim.Env) *consumerMember {
	mc := membership.Config{GroupID: cfg.GroupID, InstanceID: cfg.GroupInstanceID, ServerAssignor: cfg.ServerAssignor,
		RebalanceTimeout: cfg.MaxPollInterval, RetryBackoff: cfg.RetryBackoff, RetryBackoffMax: max(cfg.RetryBackoffMax, cfg.RetryBackoff)}
	m := membership.NewManager(mc, r.Rand(), r.Now())
	m.Subscribe(topics)
	return &consumerMember{m: m, joinedAt: -1, joinedFrom: sim.NoNode}
}

// syncConsumerState mirrors the manager's member id and epoch where the
// classic member keeps its member id and generation, so that the shared
// code (commits, history, Reader.Group) sends and records them: a member
// with a positive epoch is in the group (its commits go out with that
// epoch); otherwise it is not, and a commit is refused before it is sent,
// as the classic member's is outside a generation (Kafka's
// CommitRequestManager sends it with epoch -1, which a group with members
// refuses).
func (r *Reader) syncConsumerState() {
	g := r.group
	m := g.consumer.m
	g.memberID = m.MemberID()
	if e := m.MemberEpoch(); e > 0 {
		// What the member processes and revokes carries the epoch it
		// holds them at (its epoch moves on with the group's without a
		// new assignment).
		g.generation, g.state, g.ownedGeneration = e, stable, e
	} else {
		g.generation, g.state = proto.NoGeneration, unjoined
	}
}

// consumerHeartbeat is one turn of the heartbeat request manager: the
// heartbeat the manager wants sent now, and a timer for its next turn.
// Called after every input the manager takes.
func (r *Reader) consumerHeartbeat() {
	g := r.group
	c := g.consumer
	if r.polling {
		// The application is inside poll, whose loop sends a PollEvent
		// each round (AsyncKafkaConsumer.poll): the poll timer never
		// expires under a poll that waits for records.
		c.m.Poll(r.env.Now())
	}
	req, wait := c.m.Heartbeat(r.env.Now(), g.coordinatorKnown)
	r.syncConsumerState()
	if req != nil {
		r.sendGroup(g.coordinator, groupCall{api: apiConsumerGroupHeartbeat, hb: req}, g.cfg.RequestTimeout, func(corr uint64) sim.Message {
			req.CorrelationID = corr
			return req
		})
	}
	r.takeConsumerActions()
	if wait == membership.Never {
		return
	}
	if wait <= 0 && req == nil {
		// Nothing to send yet something due: not a state the manager
		// reaches, but never spin on it.
		wait = g.cfg.RetryBackoff
	}
	c.hbToken++
	r.env.After(wait, gtimer{kind: gConsumerHeartbeat, token: c.hbToken})
}

// takeConsumerActions collects the manager's new actions; they wait for
// the application's poll, which a waiting poll is woken for (Kafka's
// background thread queues a callback event the poll loop runs).
func (r *Reader) takeConsumerActions() {
	c := r.group.consumer
	if a := c.m.Actions(); len(a) > 0 {
		c.actions = append(c.actions, a...)
		r.wakePoll()
	}
}

// handleConsumerGroupHeartbeat feeds a heartbeat's answer to the manager
// (ConsumerHeartbeatRequestManager.onResponse).
func (r *Reader) handleConsumerGroupHeartbeat(m *proto.ConsumerGroupHeartbeatResponse) {
	g := r.group
	call, ok := r.takeGroupCall(m.CorrelationID)
	if !ok || call.hb == nil || g.consumer == nil {
		return
	}
	out := g.consumer.m.OnResponse(r.env.Now(), call.hb, m)
	if call.hb.MemberEpoch == 0 && m.Error == proto.None {
		g.consumer.joinedAt, g.consumer.joinedFrom = r.env.WorldTime(), call.to
	}
	if m.Error == proto.FencedInstanceID {
		r.consumerFenced(call)
	}
	r.syncConsumerState()
	if r.stopped && call.hb.MemberEpoch < 0 {
		// The leave heartbeat of close is answered: the process ends
		// (AsyncKafkaConsumer.close).
		r.env.Exit()
		return
	}
	if out.Rediscover {
		r.markCoordinatorUnknown("ConsumerGroupHeartbeat: " + m.Error.String())
	}
	r.consumerHeartbeat()
}

// consumerHeartbeatFailed feeds a heartbeat that got no answer (timeout,
// disconnection) to the manager; the coordinator is looked for again.
func (r *Reader) consumerHeartbeatFailed(c *groupCall) {
	g := r.group
	out := g.consumer.m.OnFailure(r.env.Now(), c.hb)
	r.syncConsumerState()
	if out.Rediscover {
		r.markCoordinatorUnknown("ConsumerGroupHeartbeat failed")
	}
	r.consumerHeartbeat()
}

// consumerPoll is the group's part of the application's poll for a
// consumer-protocol member (AsyncKafkaConsumer.poll): the poll timer
// restarts (Manager.Poll), the rebalance callbacks the manager asked for
// run, then, as in the classic member's poll, the auto-commit and the
// committed offsets of new partitions. It reports whether the poll goes on
// to fetch; when a revocation's commit is under way it does not, and the
// commit's end polls again.
func (r *Reader) consumerPoll() bool {
	g := r.group
	if g.fatal != "" || g.blocked {
		return false
	}
	if !g.coordinatorKnown {
		r.lookupCoordinator()
	}
	g.consumer.m.Poll(r.env.Now())
	done := r.runConsumerActions()
	r.consumerHeartbeat()
	if !done || g.fatal != "" {
		return false
	}
	r.maybeAutoCommitAsync()
	r.fetchCommittedIfNeeded()
	return true
}

// runConsumerActions carries out the manager's actions in order, as
// Kafka's application thread runs the callbacks: RevokePartitions commits
// what was processed of the partitions (the commit on revoke the classic
// member's listener makes, synchronously), drops them and runs
// onPartitionsRevoked; AssignPartitions adds the new partitions, whose
// positions come from their committed offsets (fetchCommittedIfNeeded);
// LosePartitions drops them without committing (onPartitionsLost);
// FatalError ends the member. Each but the last is reported done, which
// lets the manager go on (acknowledge, or the next step). It reports false
// when it stopped on a commit under way, whose end resumes it.
func (r *Reader) runConsumerActions() bool {
	g := r.group
	c := g.consumer
	for !g.blocked {
		c.actions = append(c.actions, c.m.Actions()...)
		if len(c.actions) == 0 {
			return true
		}
		a := c.actions[0]
		c.actions = c.actions[1:]
		switch a.Kind {
		case membership.RevokePartitions:
			r.revokeWithCommit(a)
			return false
		case membership.AssignPartitions:
			r.addPartitions(a.Partitions)
			g.ownedGeneration, g.ownedMemberID = c.m.MemberEpoch(), c.m.MemberID()
			g.nextAutoCommit = r.env.Now() + g.cfg.AutoCommitInterval
			g.firstAutoCommit = g.nextAutoCommit
			r.recordAssign()
			r.consumerActionDone(a.Seq)
		case membership.LosePartitions:
			if g.cfg.Processor != nil {
				r.loseToProcessorAction(a)
				return false
			}
			r.revoke(a.Partitions)
			r.consumerActionDone(a.Seq)
		case membership.FatalError:
			// The member stops; its partitions are lost next.
			if g.fatal == "" {
				c.fatalCode, c.fatalAt = a.Error, r.env.WorldTime()
			}
			r.fail(fmt.Sprintf("ConsumerGroupHeartbeat: %v %s", a.Error, a.Message))
		}
	}
	return g.fatal == "" && !g.blocked
}

// revokeWithCommit is onPartitionsRevoked with the application's commit on
// revoke — the same listener as a classic member's (commitOnRevoke): its
// workers are done with the partitions first (quiesce, pool.go), then it
// commits what it processed of them, unless it committed before processing
// (what an at-most-once member processed lies at or below what it
// committed, maybe below a commit still in flight).
// The poll waits for the commit, whatever its outcome (Kafka's callback
// catches the commit's exception), then the partitions go and the action
// is done. A member closing is not polling: its actions go on at once.
func (r *Reader) revokeWithCommit(a membership.Action) {
	g := r.group
	g.blocked = true
	r.quiesce(a.Partitions, func(commit bool) {
		var offsets []commitOffset
		if commit {
			offsets = r.processedOffsets(a.Partitions)
		}
		commitSync := r.commitSync
		if g.cfg.Processor != nil {
			commitSync = func(_ []commitOffset, then func(bool)) { r.processorCommit(true, func() { then(true) }) }
		}
		commitSync(offsets, func(bool) { r.releasedByListener(a) })
	})
}

// loseToProcessorAction is LosePartitions on a stream processor's member
// (loseToProcessor), then the action's end.
func (r *Reader) loseToProcessorAction(a membership.Action) {
	g := r.group
	g.blocked = true
	r.quiesce(a.Partitions, func(bool) {
		g.cfg.Processor.Lost(func() { r.releasedByListener(a) })
	})
}

// releasedByListener ends a revocation or a loss once the listener is
// done: the partitions go, the action is done and the poll goes on (a
// member closing runs its next actions at once).
func (r *Reader) releasedByListener(a membership.Action) {
	g := r.group
	r.revoke(a.Partitions)
	g.blocked = false
	r.consumerActionDone(a.Seq)
	if r.stopped {
		r.runConsumerActions()
		r.consumerHeartbeat()
		return
	}
	r.env.After(0, rtimer{kind: timerPoll})
}

// consumerActionDone reports an action carried out; the manager may go on
// (an acknowledgement to send, the next step of a reconciliation).
func (r *Reader) consumerActionDone(seq uint64) {
	if err := r.group.consumer.m.ActionDone(seq); err != nil {
		panic(err) // the actions are carried out in the order they came
	}
	r.syncConsumerState()
	r.consumerHeartbeat()
}

// closeConsumerGroup is AsyncKafkaConsumer.close with the default
// membership operation: unsubscribe (revoke with the commit on revoke,
// then the leave heartbeat).
func (r *Reader) closeConsumerGroup() {
	g := r.group
	if g.fatal != "" {
		return
	}
	g.consumer.m.Unsubscribe()
	if !g.blocked {
		r.runConsumerActions()
	}
	r.consumerHeartbeat()
}

// consumerStable reports whether a consumer-protocol member is STABLE with
// nothing left to carry out: it owns what the coordinator assigned it.
func (r *Reader) consumerStable() bool {
	g := r.group
	c := g.consumer
	d := c.m.Describe()
	return g.fatal == "" && d.State == membership.Stable && d.PendingActions == 0 && len(c.actions) == 0 &&
		slices.Equal(d.Owned, d.Assignment) && slices.Equal(d.Assignment, d.Target)
}

// ConsumerFatal is the heartbeat error that ended a consumer-protocol
// member (GROUP_ID_NOT_FOUND: its coordinator no longer knows its group,
// AbstractHeartbeatRequestManager.onErrorResponse's default arm) and when,
// with when the member last joined the group (-1: never), both in the
// run's virtual time; ok is false for a classic member and for one that
// runs.
func (r *Reader) ConsumerFatal() (code proto.ErrorCode, at, joinedAt time.Duration, ok bool) {
	if r.group == nil || r.group.consumer == nil || r.group.fatal == "" {
		return proto.None, 0, 0, false
	}
	c := r.group.consumer
	return c.fatalCode, c.fatalAt, c.joinedAt, true
}

// MemberEpoch is a consumer-protocol member's epoch (0 while joining,
// negative once left), ok false for a classic member or a reader outside
// any group.
func (r *Reader) MemberEpoch() (int32, bool) {
	if r.group == nil || r.group.consumer == nil {
		return 0, false
	}
	return r.group.consumer.m.MemberEpoch(), true
}

// MemberState is a consumer-protocol member's state as its manager has it
// ("" for others): for reports and convergence messages.
func (r *Reader) MemberState() string {
	if r.group == nil || r.group.consumer == nil {
		return ""
	}
	return r.group.consumer.m.State().String()
}

// consumerHeartbeatDue is the heartbeat timer.
func (r *Reader) consumerHeartbeatDue(token uint64) {
	g := r.group
	if g.consumer == nil || token != g.consumer.hbToken {
		return
	}
	r.consumerHeartbeat()
}

// FatalError is the error a consumer-protocol member's heartbeat got that
// ended it (ConsumerHeartbeatRequestManager.handleSpecificError's fatal
// errors), with the coordinator's message; None for a member that did not
// stop on one, a classic member or a reader outside any group.
func (r *Reader) FatalError() (proto.ErrorCode, string) {
	if r.group == nil || r.group.consumer == nil || r.group.fatal == "" {
		return proto.None, ""
	}
	return r.group.consumer.m.Err()
}
