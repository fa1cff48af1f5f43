package group

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"kafkasim/model/group/consumergroup"
	"kafkasim/model/proto"
)

// consumerGroups is a shard's consumer protocol: its KIP-848 groups, each a
// consumergroup.Group, behind the hook of consumer.go. A group changes only
// by replaying its records, which the shard does once they are appended;
// a heartbeat's decision is made on the group as replayed so far.

// ConsumerProtocolConfig configures the consumer protocol (KIP-848) on
// every shard.
type ConsumerProtocolConfig struct {
	SessionTimeout    time.Duration // group.consumer.session.timeout.ms
	HeartbeatInterval time.Duration // group.consumer.heartbeat.interval.ms
	// Assignors are group.consumer.assignors, the first the default.
	Assignors []consumergroup.Assignor
	// GrantBeforeRelease is the bug zoo's grant-before-release.
	GrantBeforeRelease bool
	// NoGenerationFencing is the bug zoo's no-generation-fencing: commits
	// from stale member epochs are accepted.
	NoGenerationFencing bool
}

// NewConsumerProtocol returns Config.Consumer for cfg.
func NewConsumerProtocol(cfg ConsumerProtocolConfig) func(ConsumerShardEnv) ConsumerProtocol {
	return func(env ConsumerShardEnv) ConsumerProtocol {
		return &consumerGroups{cfg: cfg, env: env, groups: map[string]*consumergroup.Group{}}
	}
}

type consumerGroups struct {
	cfg    ConsumerProtocolConfig
	env    ConsumerShardEnv
	groups map[string]*consumergroup.Group
}

func (c *consumerGroups) decisionEnv() *consumergroup.Env {
	return &consumergroup.Env{
		Config: consumergroup.Config{SessionTimeout: c.cfg.SessionTimeout, HeartbeatInterval: c.cfg.HeartbeatInterval,
			Assignors: c.cfg.Assignors, GrantBeforeRelease: c.cfg.GrantBeforeRelease},
		Rand:       c.env.Rand(),
		Partitions: c.env.PartitionCount,
	}
}

// Heartbeat decides on the group as replayed so far; its timers are set at
// once (Kafka schedules them in the handler), its records replayed by the
// shard once appended.
func (c *consumerGroups) Heartbeat(req *proto.ConsumerGroupHeartbeatRequest) (*proto.ConsumerGroupHeartbeatResponse, []ConsumerRecord) {
	g := c.groups[req.GroupID]
	if g == nil {
		g = consumergroup.New(req.GroupID)
	}
	res := g.Heartbeat(c.decisionEnv(), req)
	c.setTimers(req.GroupID, res.Timers)
	return res.Response, encodeConsumerRecords(res.Records)
}

// setTimers schedules or cancels a group's member timers; one that fires
// decides on the group as it is then.
func (c *consumerGroups) setTimers(groupID string, timers []consumergroup.Timer) {
	for _, t := range timers {
		key := groupID + "/" + t.Kind.String() + "/" + t.MemberID
		if t.Cancel {
			c.env.Cancel(key)
			continue
		}
		t := t
		c.env.Schedule(key, t.After, func() []ConsumerRecord {
			g := c.groups[groupID]
			if g == nil {
				return nil
			}
			res := g.OnTimer(c.decisionEnv(), t)
			c.setTimers(groupID, res.Timers)
			return encodeConsumerRecords(res.Records)
		})
	}
}

func encodeConsumerRecords(recs []consumergroup.Record) []ConsumerRecord {
	if len(recs) == 0 {
		return nil
	}
	out := make([]ConsumerRecord, len(recs))
	for i, r := range recs {
		k, v, tomb := r.Encode()
		out[i] = ConsumerRecord{Key: k, Value: v, Tombstone: tomb}
	}
	return out
}

// Replay applies a record of types 3..8. A record the group refuses is a
// simulator failure: the coordinator wrote it.
func (c *consumerGroups) Replay(r ConsumerRecord) {
	rec, err := consumergroup.Decode(r.Key, r.Value, r.Tombstone)
	if err != nil {
		panic(fmt.Sprintf("group: a consumer group record that does not decode: %v", err))
	}
	g := c.groups[rec.GroupID]
	if g == nil {
		g = consumergroup.New(rec.GroupID)
		c.groups[rec.GroupID] = g
	}
	if err := g.Replay(rec); err != nil {
		panic("group: " + err.Error())
	}
	if !g.Exists() {
		delete(c.groups, rec.GroupID)
	}
}

// HasGroup reports whether groupID is a consumer group of this shard.
func (c *consumerGroups) HasGroup(groupID string) bool {
	g := c.groups[groupID]
	return g != nil && g.Exists()
}

// MemberEpoch is a member's epoch (ok false: no such member).
func (c *consumerGroups) MemberEpoch(groupID, memberID string) (int32, bool) {
	g := c.groups[groupID]
	if g == nil {
		return 0, false
	}
	m := g.Member(memberID)
	if m == nil {
		return 0, false
	}
	return m.MemberEpoch, true
}

// ValidateOffsetCommit is ConsumerGroup.validateOffsetCommit.
func (c *consumerGroups) ValidateOffsetCommit(groupID, memberID, _ string, memberEpoch int32) proto.ErrorCode {
	g := c.groups[groupID]
	if g == nil {
		return proto.None
	}
	return g.ValidateOffsetCommit(memberID, memberEpoch, c.cfg.NoGenerationFencing)
}

// ValidateOffsetFetch is ConsumerGroup.validateOffsetFetch.
func (c *consumerGroups) ValidateOffsetFetch(groupID, memberID string, memberEpoch int32) proto.ErrorCode {
	g := c.groups[groupID]
	if g == nil {
		return proto.None
	}
	return g.ValidateOffsetFetch(memberID, memberEpoch, c.cfg.NoGenerationFencing)
}

// OnLoaded restarts every loaded member's session timer, as Kafka's
// GroupMetadataManager.onLoaded does for consumer groups: a member that
// does not heartbeat to the new coordinator is fenced.
func (c *consumerGroups) OnLoaded() {
	for _, id := range sortedGroupIDs(c.groups) {
		g := c.groups[id]
		var timers []consumergroup.Timer
		for _, id := range g.MemberIDs() {
			timers = append(timers, consumergroup.Timer{Kind: consumergroup.SessionTimeout, MemberID: id, After: c.cfg.SessionTimeout})
			if m := g.Member(id); m.State == consumergroup.UnrevokedPartitions && m.RebalanceTimeout > 0 {
				timers = append(timers, consumergroup.Timer{Kind: consumergroup.RebalanceTimeout, MemberID: id,
					After: m.RebalanceTimeout, MemberEpoch: m.MemberEpoch})
			}
		}
		c.setTimers(id, timers)
	}
}

// Describe describes the shard's consumer groups, by group id.
func (c *consumerGroups) Describe() []consumergroup.Description {
	var out []consumergroup.Description
	for _, id := range sortedGroupIDs(c.groups) {
		out = append(out, c.groups[id].Describe(c.cfg.Assignors))
	}
	return out
}

func sortedGroupIDs(m map[string]*consumergroup.Group) []string {
	return slices.Sorted(maps.Keys(m))
}
