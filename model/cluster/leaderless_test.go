package cluster

import (
	"strings"
	"testing"

	"kafkasim/model/metadata"
)

// A partition with no leader and nobody eligible stays leaderless in Kafka
// until an operator's unclean election, unless its topic allows unclean
// elections (the controller then elects one itself) or a single last known
// leader remains (elected when it comes back).
func TestLeaderlessForGood(t *testing.T) {
	cases := []struct {
		name      string
		isr, elr  []int32
		lastKnown []int32
		cleared   []int32
		leader    int32
		unclean   bool
		want      string // a part of the reason; "" for none
	}{
		{"ClearElr emptied it", nil, nil, nil, []int32{4}, metadata.NoLeader, false, "ClearElrRecord took broker-4 out"},
		{"empty, cause unknown", nil, nil, nil, nil, metadata.NoLeader, false, "its ISR, ELR and last known leader are empty;"},
		{"unclean elections allowed", nil, nil, nil, []int32{4}, metadata.NoLeader, true, ""},
		{"a last known leader remains", nil, nil, []int32{4}, nil, metadata.NoLeader, false, ""},
		{"an ELR member remains", nil, []int32{3}, nil, nil, metadata.NoLeader, false, ""},
		{"an ISR member remains (ELR off)", []int32{3}, nil, nil, nil, metadata.NoLeader, false, ""},
		{"led", []int32{3}, nil, nil, nil, 3, false, ""},
	}
	for _, c := range cases {
		p := &metadata.Partition{TopicPartition: metadata.TopicPartition{Topic: "orders"}, Replicas: []int32{3, 4},
			ISR: c.isr, ELR: c.elr, LastKnownELR: c.lastKnown, ClearedWhileLeaderless: c.cleared, Leader: c.leader}
		im := metadata.NewImage("", nil)
		im.Topics["orders"] = &metadata.Topic{Name: "orders", UncleanLeaderElection: c.unclean, Partitions: []*metadata.Partition{p}}
		got := leaderlessForGood(im, p)
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}
