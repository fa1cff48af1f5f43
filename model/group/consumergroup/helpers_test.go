package consumergroup

import (
	"math/rand/v2"
	"testing"
	"time"

	"kafkasim/model/proto"
)

// roundRobin is a test assignor: each topic's partitions dealt in turn to
// its subscribers in member id order, with no stickiness, so that members
// joining and leaving move partitions around.
type roundRobin struct{ name string }

func (a roundRobin) Name() string { return a.name }

func (roundRobin) Assign(members []MemberSpec, partitionsPerTopic map[string]int32) map[string][]proto.TopicPartition {
	out := map[string][]proto.TopicPartition{}
	for _, topic := range sortedKeys(partitionsPerTopic) {
		var subs []string
		for _, m := range members {
			for _, t := range m.Topics {
				if t == topic {
					subs = append(subs, m.MemberID)
				}
			}
		}
		if len(subs) == 0 {
			continue
		}
		for p := int32(0); p < partitionsPerTopic[topic]; p++ {
			id := subs[int(p)%len(subs)]
			out[id] = append(out[id], proto.TopicPartition{Topic: topic, Partition: p})
		}
	}
	return out
}

// topics is a metadata image for tests.
type topics map[string]int32

func (ts topics) counts(t string) (int32, bool) {
	n, ok := ts[t]
	return n, ok
}

func testEnv(ts topics) *Env {
	return &Env{
		Config: Config{SessionTimeout: DefaultSessionTimeout, HeartbeatInterval: DefaultHeartbeatInterval,
			Assignors: []Assignor{roundRobin{"uniform"}, roundRobin{"range"}}},
		Rand:       rand.New(rand.NewPCG(1, 2)),
		Partitions: ts.counts,
	}
}

func tp(topic string, p int32) proto.TopicPartition {
	return proto.TopicPartition{Topic: topic, Partition: p}
}

// joinReq is a member's first heartbeat.
func joinReq(memberID string, subscribe ...string) *proto.ConsumerGroupHeartbeatRequest {
	if subscribe == nil {
		subscribe = []string{}
	}
	return &proto.ConsumerGroupHeartbeatRequest{GroupID: "g", MemberID: memberID, MemberEpoch: 0,
		RebalanceTimeout: 5 * time.Minute, SubscribedTopicNames: subscribe, OwnedPartitions: []proto.TopicPartition{}, OwnedSent: true}
}

// hbReq is a later heartbeat that reports what the member owns.
func hbReq(memberID string, epoch int32, owned ...proto.TopicPartition) *proto.ConsumerGroupHeartbeatRequest {
	if owned == nil {
		owned = []proto.TopicPartition{}
	}
	return &proto.ConsumerGroupHeartbeatRequest{GroupID: "g", MemberID: memberID, MemberEpoch: epoch,
		RebalanceTimeout: -1, OwnedPartitions: owned, OwnedSent: true}
}

// apply replays a result's records into g, as the shell does at once.
func apply(t testing.TB, g *Group, res Result) Result {
	t.Helper()
	if err := g.ReplayAll(res.Records); err != nil {
		t.Fatalf("replay: %v", err)
	}
	return res
}

func recordTypes(rs []Record) []int16 {
	var out []int16
	for _, r := range rs {
		t := r.Type
		if r.Tombstone {
			t = -t
		}
		out = append(out, t)
	}
	return out
}
