package controller

import (
	"slices"
	"strings"
	"testing"

	"kafkasim/model/metadata"
	"kafkasim/model/proto"
)

// configImage: brokers 1-3; topic t (min ISR 2 of its own, unclean
// inherited) whose partition 0 has an ELR, topic u inheriting both, its
// partition 0 leaderless with a last known leader.
func configImage() *metadata.Image {
	im := metadata.NewImage("c", nil)
	for _, id := range []int32{1, 2, 3} {
		im.Brokers[id] = &metadata.Broker{ID: id, Epoch: int64(id) * 10}
	}
	im.Topics["t"] = &metadata.Topic{Name: "t", MinInsyncReplicas: 2, UncleanInherited: true, Configs: map[string]string{"retention.ms": "1000"},
		Partitions: []*metadata.Partition{{TopicPartition: metadata.TopicPartition{Topic: "t"}, Replicas: []int32{1, 2, 3},
			ISR: []int32{1}, ELR: []int32{2}, Leader: 1, LeaderEpoch: 3, PartitionEpoch: 7}}}
	im.Topics["u"] = &metadata.Topic{Name: "u", MinInsyncReplicas: 1, MinISRInherited: true, UncleanInherited: true,
		Partitions: []*metadata.Partition{{TopicPartition: metadata.TopicPartition{Topic: "u"}, Replicas: []int32{1, 2},
			ISR: []int32{}, LastKnownELR: []int32{1}, Leader: metadata.NoLeader, LeaderEpoch: 2, PartitionEpoch: 5}}}
	return im
}

func TestAlterConfigs(t *testing.T) {
	set := func(kv ...string) []proto.AlterableConfig {
		var out []proto.AlterableConfig
		for i := 0; i+1 < len(kv); i += 2 {
			out = append(out, proto.AlterableConfig{Name: kv[i], Value: kv[i+1]})
		}
		return out
	}
	cases := []struct {
		name    string
		typ     int8
		res     string
		configs []proto.AlterableConfig
		elr     bool
		want    proto.ErrorCode
		msg     string
		records []string // the batch: "config NAME=VALUE" and "clear-elr TOPIC" ("*" every topic)
	}{
		{"topic min ISR with ELR clears its ELR", proto.ResourceTopic, "t", set("min.insync.replicas", "1"), true, proto.None, "",
			[]string{"config min.insync.replicas=1", "clear-elr t"}},
		{"topic min ISR without ELR clears nothing", proto.ResourceTopic, "t", set("min.insync.replicas", "1"), false, proto.None, "",
			[]string{"config min.insync.replicas=1"}},
		{"topic min ISR unchanged writes nothing", proto.ResourceTopic, "t", set("min.insync.replicas", "2"), true, proto.None, "", nil},
		{"an inherited min ISR set to its value is the topic's own now", proto.ResourceTopic, "u", set("min.insync.replicas", "1"), true, proto.None, "",
			[]string{"config min.insync.replicas=1", "clear-elr u"}},
		{"topic unclean on: a record, no election", proto.ResourceTopic, "t", set("unclean.leader.election.enable", "true"), true, proto.None, "",
			[]string{"config unclean.leader.election.enable=true"}},
		{"topic retention", proto.ResourceTopic, "t", set("retention.ms", "5000", "retention.bytes", "-1"), true, proto.None, "",
			[]string{"config retention.ms=5000", "config retention.bytes=-1"}},
		{"unknown topic", proto.ResourceTopic, "x", set("min.insync.replicas", "1"), true, proto.UnknownTopicOrPartition, "does not exist", nil},
		{"unalterable topic config", proto.ResourceTopic, "t", set("flush.messages", "1"), true, proto.InvalidConfig, "flush.messages", nil},
		{"min ISR 0", proto.ResourceTopic, "t", set("min.insync.replicas", "0"), true, proto.InvalidConfig, "at least 1", nil},
		{"unclean not a bool", proto.ResourceTopic, "t", set("unclean.leader.election.enable", "yes"), true, proto.InvalidConfig, "true or false", nil},
		{"one bad config refuses the resource", proto.ResourceTopic, "t", set("retention.ms", "5000", "min.insync.replicas", "-3"), true, proto.InvalidConfig, "", nil},
		{"cluster min ISR with ELR clears every ELR", proto.ResourceBroker, "", set("min.insync.replicas", "2"), true, proto.None, "",
			[]string{"config min.insync.replicas=2", "clear-elr *"}},
		{"cluster config is written even unchanged", proto.ResourceBroker, "", set("unclean.leader.election.enable", "false"), true, proto.None, "",
			[]string{"config unclean.leader.election.enable=false"}},
		{"broker min ISR refused with ELR", proto.ResourceBroker, "2", set("min.insync.replicas", "1"), true, proto.InvalidConfig, "cannot be altered while ELR is enabled", nil},
		{"broker min ISR accepted without ELR", proto.ResourceBroker, "2", set("min.insync.replicas", "1"), false, proto.None, "",
			[]string{"config min.insync.replicas=1"}},
		{"broker unclean with ELR", proto.ResourceBroker, "2", set("unclean.leader.election.enable", "true"), true, proto.None, "",
			[]string{"config unclean.leader.election.enable=true"}},
		{"unregistered broker", proto.ResourceBroker, "9", set("unclean.leader.election.enable", "true"), true, proto.BrokerIDNotRegistered, "No node with id 9", nil},
		{"broker retention is not alterable", proto.ResourceBroker, "", set("retention.ms", "5"), true, proto.InvalidConfig, "retention.ms", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			im := configImage()
			batch, code, msg := AlterConfigs(im, &proto.IncrementalAlterConfigsRequest{ResourceType: c.typ, ResourceName: c.res, Configs: c.configs}, c.elr)
			if code != c.want || !strings.Contains(msg, c.msg) {
				t.Fatalf("got %s %q, want %s %q", code, msg, c.want, c.msg)
			}
			var got []string
			for _, r := range batch {
				switch {
				case r.Config != nil:
					got = append(got, "config "+r.Config.Name+"="+r.Config.Value)
				case r.ClearElr != nil && r.ClearElr.Topic == "":
					got = append(got, "clear-elr *")
				case r.ClearElr != nil:
					got = append(got, "clear-elr "+r.ClearElr.Topic)
				default:
					got = append(got, "other")
				}
			}
			if !slices.Equal(got, c.records) {
				t.Fatalf("records %v, want %v", got, c.records)
			}
			if err := im.Apply(im.Offset, batch); err != nil {
				t.Fatalf("the batch does not apply: %v", err)
			}
		})
	}
}

// Applied, a cluster-wide min ISR reaches only the topics that inherit it,
// and its ClearElrRecord forgets every ELR and last known ELR, bumping
// partition epochs; a broker's own min ISR is what that broker reads.
func TestAlterConfigsApplied(t *testing.T) {
	im := configImage()
	batch, _, _ := AlterConfigs(im, &proto.IncrementalAlterConfigsRequest{ResourceType: proto.ResourceBroker,
		Configs: []proto.AlterableConfig{{Name: "min.insync.replicas", Value: "3"}, {Name: "unclean.leader.election.enable", Value: "true"}}}, true)
	if err := im.Apply(im.Offset, batch); err != nil {
		t.Fatal(err)
	}
	tt, u := im.Topics["t"], im.Topics["u"]
	if tt.MinInsyncReplicas != 2 || u.MinInsyncReplicas != 3 {
		t.Fatalf("min ISR t %d (its own 2), u %d (inherits 3)", tt.MinInsyncReplicas, u.MinInsyncReplicas)
	}
	if !tt.UncleanLeaderElection || !u.UncleanLeaderElection {
		t.Fatalf("both inherit unclean: t %v u %v", tt.UncleanLeaderElection, u.UncleanLeaderElection)
	}
	pt, pu := tt.Partitions[0], u.Partitions[0]
	if len(pt.ELR) != 0 || len(pu.LastKnownELR) != 0 || pt.PartitionEpoch != 8 || pu.PartitionEpoch != 6 || pt.LeaderEpoch != 3 {
		t.Fatalf("ELRs not cleared: %s / %s", pt, pu)
	}

	// A topic-level value then wins over the cluster default.
	b2, _, _ := AlterConfigs(im, &proto.IncrementalAlterConfigsRequest{ResourceType: proto.ResourceTopic, ResourceName: "u",
		Configs: []proto.AlterableConfig{{Name: "unclean.leader.election.enable", Value: "false"}}}, true)
	b3 := metadata.Batch{{Config: &metadata.ConfigRecord{ResourceType: metadata.ResourceBroker, Name: "unclean.leader.election.enable", Value: "true"}}}
	if err := im.Apply(im.Offset, append(b2, b3...)); err != nil {
		t.Fatal(err)
	}
	if u.UncleanLeaderElection {
		t.Fatal("u's own unclean=false must win over the cluster default")
	}

	// Without ELR a broker's own min ISR is what that broker reads.
	b4, code, _ := AlterConfigs(im, &proto.IncrementalAlterConfigsRequest{ResourceType: proto.ResourceBroker, ResourceName: "2",
		Configs: []proto.AlterableConfig{{Name: "min.insync.replicas", Value: "1"}}}, false)
	if code != proto.None {
		t.Fatal(code)
	}
	if err := im.Apply(im.Offset, b4); err != nil {
		t.Fatal(err)
	}
	if im.MinISRAt(u, 2) != 1 || im.MinISRAt(u, 1) != 2 || im.MinISRAt(tt, 2) != 2 {
		t.Fatalf("min ISR at brokers: u@2 %d (want 1), u@1 %d (want 2: 3 bounded by RF 2), t@2 %d (its own 2)",
			im.MinISRAt(u, 2), im.MinISRAt(u, 1), im.MinISRAt(tt, 2))
	}
	// A cloned image does not share the maps it copies on write.
	c := im.Clone()
	cb := metadata.Batch{{Config: &metadata.ConfigRecord{ResourceType: metadata.ResourceTopic, ResourceName: "t", Name: "retention.ms", Value: "7"}},
		{Config: &metadata.ConfigRecord{ResourceType: metadata.ResourceBroker, ResourceName: "2", Name: "min.insync.replicas", Value: "2"}}}
	if err := c.Apply(c.Offset, cb); err != nil {
		t.Fatal(err)
	}
	if im.Topics["t"].Configs["retention.ms"] != "1000" || im.BrokerConfigs[2]["min.insync.replicas"] != "1" {
		t.Fatal("applying to a clone changed the original")
	}
}

// The periodic unclean pass elects only leaderless partitions of topics
// that allow it, and only when a replica may lead.
func TestElectUncleanLeaders(t *testing.T) {
	im := configImage()
	u := im.Topics["u"]
	u.Partitions[0].LastKnownELR = nil // not KIP-966's last known leader
	im.Brokers[1].Fenced = true
	if batch, _ := ElectUncleanLeaders(im, true, 10); len(batch) != 0 || uncleanCandidates(im) {
		t.Fatalf("unclean off: %v", batch)
	}
	u.UncleanLeaderElection = true
	if !uncleanCandidates(im) {
		t.Fatal("u-0 is leaderless, unclean on, broker 2 may lead")
	}
	batch, more := ElectUncleanLeaders(im, true, 10)
	if len(batch) != 1 || more || batch[0].PartitionChange.Leader != 2 || !*batch[0].PartitionChange.Recovering {
		t.Fatalf("want broker 2 elected uncleanly, got %+v", batch)
	}
	if _, more := ElectUncleanLeaders(im, true, 0); !more {
		t.Fatal("the bound must report more")
	}
	im.Brokers[2].Fenced = true
	if uncleanCandidates(im) {
		t.Fatal("no replica may lead: nothing to schedule")
	}
}
