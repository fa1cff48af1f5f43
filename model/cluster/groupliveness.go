package cluster

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"kafkasim/model/metadata"
	"kafkasim/model/proto"
	"kafkasim/model/reader"
	"kafkasim/sim"
)

// What Kafka's group protocols themselves cannot heal from: the
// convergence of consumer groups does not hold those against the
// simulator, and says so. Each is grounded in a fact of the run (the
// coordinator's answer a member stopped on; the members' configuration
// and the group's state), never in the mere presence of a group.

// refusedForGood reports whether a member stopped on a coordinator's answer
// that Kafka 4's consumer takes as fatal although the coordinator gives it
// as Kafka's does: UNRELEASED_INSTANCE_ID
// (GroupMetadataManager.throwIfInstanceIdIsUnreleased, whenever a static
// member joins with epoch 0 while the member holding its instance id has
// not left with epoch -2; ConsumerHeartbeatRequestManager.
// handleSpecificError ends the consumer). A restarted static member whose
// previous incarnation did not leave meets it until that one's session
// times out; so does a static member that rejoins under its own member id
// after its leave heartbeat was lost (an expired poll timer while its
// coordinator was down) or after FENCED_MEMBER_EPOCH, since Kafka's
// coordinator then takes it for a replacement of itself.
func refusedForGood(code proto.ErrorCode) bool {
	return code == proto.UnreleasedInstanceID
}

// stoppedForGood reports whether reader id stopped on a coordinator's
// answer Kafka's consumer cannot recover from and Kafka's coordinator gives
// too: refusedForGood, or a fence fencedForGood explains.
func (c *Cluster) stoppedForGood(id sim.NodeID, r *reader.Reader) bool {
	if code, _ := r.FatalError(); refusedForGood(code) {
		return true
	}
	_, ok := c.fencedForGood(id, r)
	return ok
}

// fencedForGood reports whether reader id stopped on a fence Kafka's
// coordinator gives too (fencedByRollback, fencedByRevert), with what to
// say of it.
func (c *Cluster) fencedForGood(id sim.NodeID, r *reader.Reader) (string, bool) {
	if why, ok := c.fencedByRollback(id, r); ok {
		return why, true
	}
	return c.fencedByRevert(id, r)
}

// hasLiveMember reports whether group gid has a member that did not stop
// for good (a member down counts: it comes back).
func (c *Cluster) hasLiveMember(gid string) bool {
	for _, id := range c.Readers {
		if c.readerGroup(id) != gid {
			continue
		}
		r := c.Reader(id)
		if r == nil {
			return true
		}
		if !c.stoppedForGood(id, r) {
			return true
		}
	}
	return false
}

// JudgedWithout names the group members the groups' convergence was judged
// without (stoppedForGood), each with the answer it stopped on and why
// Kafka gives it; "" when none.
func (c *Cluster) JudgedWithout() string {
	var out []string
	for _, id := range c.Readers {
		r := c.Reader(id)
		if r == nil {
			continue
		}
		if why, ok := c.fencedForGood(id, r); ok {
			out = append(out, why)
			continue
		}
		code, msg := r.FatalError()
		if !refusedForGood(code) {
			continue
		}
		_, _, member, _ := r.Group()
		owner := "another member holds its instance id without having left with epoch -2 (a previous incarnation, until its session times out)"
		if member != "" && strings.Contains(msg, "owned by "+member+" ") {
			owner = "the coordinator holds its instance id under the very member id it rejoined with, its leave never heard (Kafka's coordinator takes it for a replacement of itself)"
		}
		out = append(out, fmt.Sprintf("%s stopped on %v, fatal in Kafka's consumer: %s", c.World.Name(id), code, owner))
	}
	return strings.Join(out, "; ")
}

// memberPace is what a classic member's configuration sets of a
// rebalance's pace.
type memberPace struct {
	name string
	// heartbeat is heartbeat.interval.ms; rebalance is max.poll.interval.ms,
	// the rebalance timeout its JoinGroup carries.
	heartbeat, rebalance time.Duration
}

// heartbeatsOutpaced reports a classic group's rebalance timeout (the
// largest of its members', ClassicGroup.rebalanceTimeoutMs) and the members
// whose heartbeat interval is longer. A member hears of a rebalance only
// from its heartbeat's REBALANCE_IN_PROGRESS (AbstractCoordinator's
// heartbeat thread; its poll sends none), and the join phase ends at the
// rebalance timeout (GroupMetadataManager.completeClassicGroupJoin), which
// removes a dynamic member that has not rejoined and leaves a static one
// in the generation before: such a member may miss every rebalance, and
// its rejoining starts one the others miss in turn.
func heartbeatsOutpaced(members []memberPace) (time.Duration, []memberPace) {
	var timeout time.Duration
	for _, m := range members {
		timeout = max(timeout, m.rebalance)
	}
	var slow []memberPace
	for _, m := range members {
		if m.heartbeat > timeout {
			slow = append(slow, m)
		}
	}
	return timeout, slow
}

// groupPace is the pace of every classic member configured in group gid.
func (c *Cluster) groupPace(gid string) []memberPace {
	var out []memberPace
	i := 0
	for _, rs := range c.cfg.Readers {
		for k := range rs.Count {
			g := rs.Config.Group
			if g != nil && g.GroupID == gid && g.Protocol != reader.ProtocolConsumer {
				out = append(out, memberPace{name: c.World.Name(c.Readers[i+k]), heartbeat: g.HeartbeatInterval, rebalance: g.MaxPollInterval})
			}
		}
		i += rs.Count
	}
	return out
}

// HealedButGroups reports whether every convergence condition before the
// consumer groups' holds now: the instant GroupsNotJudged can judge at.
// Groups write to __consumer_offsets all the time (auto-commits, a group
// that rebalances for ever), so an instant may find one of those writes
// still replicating, its high watermark a batch behind its log end. The
// stream processors of a group that rebalances for ever (outpacedGroups)
// write their output all the time too: each generation's members process
// their partitions again from the last committed offsets and are removed
// before their commit, so an instant finds their last outputs still
// replicating; "replication drained" does not wait for those
// (DrainedButOutpacedOutputs).
func (c *Cluster) HealedButGroups() bool {
	for _, cond := range convergence {
		if cond.Name == "consumer groups stable" {
			return true
		}
		check := cond.Check
		if cond.Name == "replication drained" {
			check = (*Cluster).DrainedButOutpacedOutputs
		}
		if ok, _ := check(c); !ok {
			return false
		}
	}
	return true
}

// DrainedButOutpacedOutputs is Drained but for the output partitions of
// the stream processors of outpacedGroups whose high watermark is behind
// their log end while their whole replica set is in their ISR: the
// followers keep up (a follower that falls behind leaves the ISR after
// replica.lag.time.max.ms), and what they have not copied yet is the
// processors' latest writes, which a group that rebalances for ever never
// stops making (fuzz seed 26763).
func (c *Cluster) DrainedButOutpacedOutputs() (bool, string) {
	im := c.Metadata()
	if im == nil {
		return false, "no committed metadata"
	}
	var outputs map[string]bool
	for _, p := range im.Partitions() {
		ok, why := c.partitionDrained(p)
		if ok {
			continue
		}
		if outputs == nil {
			outputs = c.outpacedOutputs()
		}
		if !outputs[p.TopicPartition.Topic] || c.LeaderView(p) == nil || len(p.ISR) < len(p.Replicas) {
			return false, why
		}
	}
	return true, ""
}

// outpacedGroups are the groups that have not healed, caught between
// generations, whose members' heartbeats are slower than their rebalance
// timeout (heartbeatsOutpaced): Kafka's coordinator and consumers go on
// rebalancing them for ever.
func (c *Cluster) outpacedGroups() map[string]bool {
	out := map[string]bool{}
	im := c.Metadata()
	if im == nil {
		return out
	}
	for _, gid := range c.Groups() {
		if ok, _, rebalancing, _ := c.groupStable(im, gid); ok || !rebalancing {
			continue
		}
		if _, slow := heartbeatsOutpaced(c.groupPace(gid)); len(slow) > 0 {
			out[gid] = true
		}
	}
	return out
}

// outpacedOutputs are the output topics of the stream processors of
// outpacedGroups.
func (c *Cluster) outpacedOutputs() map[string]bool {
	out := map[string]bool{}
	for gid := range c.outpacedGroups() { // kafkasim:orderless: fills a map
		for _, topic := range c.processorOutputs(gid) {
			out[topic] = true
		}
	}
	return out
}

// outputsBehind are the partitions of the output topics of group gid's
// stream processors whose high watermark is behind their log end now.
func (c *Cluster) outputsBehind(im *metadata.Image, gid string) []string {
	topics := c.processorOutputs(gid)
	var out []string
	for _, p := range im.Partitions() {
		if !slices.Contains(topics, p.TopicPartition.Topic) {
			continue
		}
		if v := c.LeaderView(p); v != nil && v.HighWatermark() < v.Log().LEO() {
			out = append(out, p.TopicPartition.String())
		}
	}
	return out
}

// processorOutputs are the output topics of group gid's stream processors,
// in the order the configuration lists them.
func (c *Cluster) processorOutputs(gid string) []string {
	var out []string
	for _, rs := range c.cfg.Readers {
		if rs.Processor != nil && rs.Processor.Producer.Topic != "" && rs.Config.Group != nil && rs.Config.Group.GroupID == gid &&
			!slices.Contains(out, rs.Processor.Producer.Topic) {
			out = append(out, rs.Processor.Producer.Topic)
		}
	}
	return out
}

// GroupsNotJudged reports why the consumer groups' convergence is not
// judged, or "" when it is: every other convergence condition holds, and
// each group that has not healed is a classic group caught between
// generations whose members' heartbeats are slower than its rebalance
// timeout (heartbeatsOutpaced) — Kafka's coordinator and consumers would
// go on rebalancing just so.
func (c *Cluster) GroupsNotJudged() string {
	if !c.HealedButGroups() {
		return ""
	}
	im := c.Metadata()
	if im == nil {
		return ""
	}
	var out []string
	for _, gid := range c.Groups() {
		ok, why, rebalancing, _ := c.groupStable(im, gid)
		if ok {
			continue
		}
		if !rebalancing {
			return ""
		}
		timeout, slow := heartbeatsOutpaced(c.groupPace(gid))
		if len(slow) == 0 {
			return ""
		}
		note := fmt.Sprintf("%s: group %s's rebalance timeout is %v (its members' largest max.poll.interval.ms) and %s (heartbeat.interval.ms), "+
			"the only way a classic member hears of a rebalance: a join phase ends before they rejoin, and their rejoining starts one the others miss in turn, in Kafka too",
			why, gid, timeout, describePace(slow))
		if behind := c.outputsBehind(im, gid); len(behind) > 0 {
			note += fmt.Sprintf("; its stream processors keep writing %s (each generation processes its partitions again from the last committed offsets, and is removed before it commits): "+
				"their latest writes, still replicating, are not waited for, the whole replica set being in the ISR", strings.Join(behind, ", "))
		}
		out = append(out, note)
	}
	return strings.Join(out, "; ")
}

// describePace says how often the members heartbeat, those of one interval
// together: "b-0 and b-1 heartbeat every 1.7s, b-2 every 4s".
func describePace(members []memberPace) string {
	var intervals []time.Duration
	by := map[time.Duration][]string{}
	for _, m := range members {
		if by[m.heartbeat] == nil {
			intervals = append(intervals, m.heartbeat)
		}
		by[m.heartbeat] = append(by[m.heartbeat], m.name)
	}
	slices.Sort(intervals)
	var out []string
	for i, hb := range intervals {
		names := by[hb]
		who := strings.Join(names, ", ")
		if len(names) > 1 {
			who = strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
		}
		verb := " every "
		if i == 0 {
			verb = " heartbeat every "
			if len(names) == 1 {
				verb = " heartbeats every "
			}
		}
		out = append(out, who+verb+hb.String())
	}
	return strings.Join(out, ", ")
}

// FirstAutoCommitsDue is how long until the first auto-commit of every
// member that has one still to come (reader.FirstAutoCommitDue) in a group
// whose convergence fails on something other than a rebalance — a
// committed offset behind the high watermark, say — with their names; 0
// when there is none. Kafka's consumer auto-commits auto.commit.interval.ms
// after its assignment at the earliest (ConsumerCoordinator.onJoinComplete
// restarts the timer), so a group that has just come out of a rebalance
// (one that went on through the grace, as heartbeatsOutpaced groups do)
// has committed nothing yet for the partitions its members were just
// given: the judge waits for those commits before it judges the group.
func (c *Cluster) FirstAutoCommitsDue() (time.Duration, []string) {
	im := c.Metadata()
	if im == nil {
		return 0, nil
	}
	var wait time.Duration
	var names []string
	for _, gid := range c.Groups() {
		ok, _, rebalancing, _ := c.groupStable(im, gid)
		if ok || rebalancing {
			continue
		}
		for _, id := range c.Readers {
			r := c.Reader(id)
			if r == nil || c.readerGroup(id) != gid || c.World.State(id) != sim.Running || !r.Stable() {
				continue
			}
			if due, ok := r.FirstAutoCommitDue(); ok {
				wait = max(wait, due)
				names = append(names, c.World.Name(id))
			}
		}
	}
	return wait, names
}
