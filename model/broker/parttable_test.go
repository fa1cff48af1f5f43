package broker

import (
	"testing"

	"kafkasim/model/metadata"
)

// The table answers as a map would, whichever topic was looked up last,
// including after a topic it has at hand grows.
func TestPartitionTableAnswersAsAMap(t *testing.T) {
	table := newPartitionTable()
	want := map[metadata.TopicPartition]*partition{}
	tps := []metadata.TopicPartition{{Topic: "a", Partition: 2}, {Topic: "b", Partition: 0}, {Topic: "a", Partition: 0}, {Topic: "a", Partition: 5}, {Topic: "c", Partition: 1}}
	probes := append(tps, metadata.TopicPartition{Topic: "a", Partition: 1}, metadata.TopicPartition{Topic: "a", Partition: -1},
		metadata.TopicPartition{Topic: "a", Partition: 9}, metadata.TopicPartition{Topic: "d", Partition: 0})
	for _, tp := range tps {
		p := &partition{tp: tp}
		table.put(tp, p)
		want[tp] = p
		for _, q := range probes { // every order of lookups: the last topic changes each time
			if got := table.get(q); got != want[q] {
				t.Fatalf("after putting %v, get(%v) = %v, want %v", tp, q, got, want[q])
			}
		}
	}
}
