package controller

import (
	"slices"
	"testing"

	"kafkasim/model/metadata"
	"kafkasim/model/proto"
)

// Preferred and unclean elections, as pure decisions on a hand-made image:
// brokers 1-3, broker 3 fenced unless a case unfences it.
func electionImage(parts ...*metadata.Partition) *metadata.Image {
	im := metadata.NewImage("c", nil)
	for _, id := range []int32{1, 2, 3} {
		im.Brokers[id] = &metadata.Broker{ID: id, Epoch: int64(id) * 10}
	}
	im.Topics["t"] = &metadata.Topic{Name: "t", MinInsyncReplicas: 1, Partitions: parts}
	for i, p := range parts {
		p.TopicPartition = metadata.TopicPartition{Topic: "t", Partition: int32(i)}
		p.LeaderEpoch, p.PartitionEpoch = 4, 8
	}
	return im
}

func ptn(replicas, isr []int32, leader int32) *metadata.Partition {
	return &metadata.Partition{Replicas: replicas, ISR: isr, Leader: leader}
}

func TestElectLeader(t *testing.T) {
	none := int32(-100) // no change record expected
	cases := []struct {
		name    string
		p       *metadata.Partition
		fenced  []int32
		typ     proto.ElectionType
		want    proto.ErrorCode
		leader  int32   // the change's leader, or none
		isr     []int32 // the change's ISR (nil: unchanged)
		unclean bool    // the change marks the leader recovering (an unclean election)
	}{
		{"preferred leads already", ptn([]int32{1, 2, 3}, []int32{1, 2, 3}, 1), nil, proto.ElectionPreferred, proto.ElectionNotNeeded, none, nil, false},
		{"preferred in ISR moves back", ptn([]int32{1, 2, 3}, []int32{2, 1, 3}, 2), nil, proto.ElectionPreferred, proto.None, 1, nil, false},
		{"preferred out of ISR stays out", ptn([]int32{1, 2, 3}, []int32{2, 3}, 2), nil, proto.ElectionPreferred, proto.PreferredLeaderNotAvailable, none, nil, false},
		{"preferred fenced", ptn([]int32{1, 2, 3}, []int32{1, 2, 3}, 2), []int32{1}, proto.ElectionPreferred, proto.PreferredLeaderNotAvailable, none, nil, false},
		{"preferred on a leaderless partition takes any ISR member", ptn([]int32{1, 2, 3}, []int32{2}, -1), nil, proto.ElectionPreferred, proto.None, 2, nil, false},
		{"unclean with a leader is not needed", ptn([]int32{1, 2, 3}, []int32{2}, 2), nil, proto.ElectionUnclean, proto.ElectionNotNeeded, none, nil, false},
		{"unclean prefers a live ISR member", ptn([]int32{1, 2, 3}, []int32{3, 2}, -1), []int32{3}, proto.ElectionUnclean, proto.None, 2, nil, false},
		{"unclean elects outside the ISR", ptn([]int32{1, 2, 3}, []int32{3}, -1), []int32{3}, proto.ElectionUnclean, proto.None, 1, []int32{1}, true},
		{"unclean with nobody alive", ptn([]int32{1, 2, 3}, []int32{3}, -1), []int32{1, 2, 3}, proto.ElectionUnclean, proto.EligibleLeadersNotAvailable, none, nil, false},
	}
	for _, c := range cases {
		im := electionImage(c.p)
		for _, id := range c.fenced {
			im.Brokers[id].Fenced = true
		}
		rec, code, _ := ElectLeader(im, c.p.TopicPartition, c.typ, false)
		if code != c.want {
			t.Errorf("%s: got %s, want %s", c.name, code, c.want)
			continue
		}
		if c.leader == none {
			if rec != nil {
				t.Errorf("%s: wrote %+v, want nothing", c.name, rec)
			}
			continue
		}
		if rec == nil || rec.Leader != c.leader {
			t.Errorf("%s: got %+v, want leader %d", c.name, rec, c.leader)
			continue
		}
		if c.isr != nil && (rec.ISR == nil || !slices.Equal(*rec.ISR, c.isr)) || c.isr == nil && rec.ISR != nil {
			t.Errorf("%s: ISR change %v, want %v", c.name, rec.ISR, c.isr)
		}
		if unclean := rec.Recovering != nil && *rec.Recovering; unclean != c.unclean {
			t.Errorf("%s: recovering (unclean) %v, want %v", c.name, unclean, c.unclean)
		}
	}
	if _, code, _ := ElectLeader(electionImage(), metadata.TopicPartition{Topic: "t", Partition: 0}, proto.ElectionPreferred, false); code != proto.UnknownTopicOrPartition {
		t.Errorf("unknown partition: got %s", code)
	}
	if _, code, _ := ElectLeader(electionImage(), metadata.TopicPartition{Topic: "x", Partition: 0}, proto.ElectionUnclean, false); code != proto.UnknownTopicOrPartition {
		t.Errorf("unknown topic: got %s", code)
	}
}

func TestBalanceLeaders(t *testing.T) {
	im := electionImage(
		ptn([]int32{1, 2, 3}, []int32{1, 2, 3}, 1), // balanced
		ptn([]int32{1, 2, 3}, []int32{2, 1}, 2),    // moves back to 1
		ptn([]int32{2, 1, 3}, []int32{1}, 1),       // 2 out of the ISR: stays
		ptn([]int32{3, 1, 2}, []int32{1, 3}, 1),    // 3 fenced: stays
		ptn([]int32{2, 3, 1}, []int32{3, 2}, 3),    // moves back to 2
	)
	im.Brokers[3].Fenced = true
	batch, more := BalanceLeaders(im, true, MaxElectionsPerImbalance)
	var moved []int32
	for _, r := range batch {
		if r.PartitionChange.Leader < 0 {
			t.Errorf("partition %d: a change that is not an election: %+v", r.PartitionChange.Partition, r.PartitionChange)
		}
		moved = append(moved, r.PartitionChange.Partition, r.PartitionChange.Leader)
	}
	if more || !slices.Equal(moved, []int32{1, 1, 4, 2}) {
		t.Fatalf("got partition/leader %v more=%v, want [1 1 4 2] false", moved, more)
	}
	// The bound: one election per pass, then "run again soon".
	batch, more = BalanceLeaders(im, true, 1)
	if len(batch) != 1 || !more {
		t.Fatalf("bound 1: %d elections, more=%v", len(batch), more)
	}
	if !imbalanced(im) {
		t.Fatal("imbalanced: partitions 1-4 are not led by their preferred replica")
	}
	balanced := electionImage(ptn([]int32{1, 2, 3}, []int32{1, 2, 3}, 1))
	if imbalanced(balanced) {
		t.Fatal("imbalanced: every partition is led by its preferred replica")
	}
	if batch, _ := BalanceLeaders(balanced, true, MaxElectionsPerImbalance); len(batch) != 0 {
		t.Fatalf("a balanced cluster: %d elections", len(batch))
	}
}
