package broker

import (
	"math/rand/v2"
	"slices"
	"testing"

	"kafkasim/model/metadata"
)

// TestTPIndexFindsWhatBinarySearchFinds builds the index of sorted
// partition lists (several topics, duplicates, gaps) again and again on
// the same index, as sessions do when reshaped, and looks up partitions in
// and out of each list: the index must answer as the binary search the
// sessions used before.
func TestTPIndexFindsWhatBinarySearchFinds(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	topics := []string{"__consumer_offsets", "orders", "payments"}
	var x tpIndex
	for round := range 200 {
		var tps []metadata.TopicPartition
		for range rng.IntN(60) {
			tps = append(tps, metadata.TopicPartition{Topic: topics[rng.IntN(len(topics))], Partition: rng.Int32N(int32(1 + round*5))})
		}
		slices.SortFunc(tps, cmpTP)
		if !x.build(len(tps), func(i int) (string, int32) { return tps[i].Topic, tps[i].Partition }) {
			t.Fatal("build refused partitions with no negative number")
		}
		for _, topic := range append(topics, "other") {
			for part := int32(-1); part < int32(round*5+3); part++ {
				tp := metadata.TopicPartition{Topic: topic, Partition: part}
				wantI, wantOK := slices.BinarySearchFunc(tps, tp, cmpTP)
				i, ok := x.find(topic, part)
				if ok != wantOK || (ok && i != wantI) {
					t.Fatalf("round %d: %v: index says %d %v, binary search %d %v", round, tp, i, ok, wantI, wantOK)
				}
			}
		}
	}
	if x.build(1, func(int) (string, int32) { return "orders", -1 }) {
		t.Fatal("build indexed a negative partition number")
	}
	if _, ok := x.find("orders", 0); ok {
		t.Fatal("a refused build left partitions indexed")
	}
}
