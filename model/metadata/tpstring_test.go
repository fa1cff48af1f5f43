package metadata

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// A partition's name is fmt's "%s-%d" without fmt, for short and long
// topic names and any partition number.
func TestTopicPartitionStringAsFmtWouldWrite(t *testing.T) {
	for _, topic := range []string{"", "orders", strings.Repeat("x", 100)} {
		for _, p := range []int32{0, 7, 2999, -1, math.MaxInt32, math.MinInt32} {
			tp := TopicPartition{Topic: topic, Partition: p}
			if got, want := tp.String(), fmt.Sprintf("%s-%d", topic, p); got != want {
				t.Errorf("%q %d: %q, want %q", topic, p, got, want)
			}
		}
	}
}

// A partition record's lists reach the image as copies that share one
// array: changing or appending to one must leave the record and the
// partition's other lists as they were, and nil and empty lists stay so.
func TestNewPartitionCopiesTheRecordsLists(t *testing.T) {
	for _, n := range []int{3, 7} { // room enough, and not
		replicas := make([]int32, n)
		for i := range replicas {
			replicas[i] = int32(i + 1)
		}
		pr := &PartitionRecord{Topic: "t", Partition: 0, Replicas: replicas, ISR: []int32{1, 2}, ELR: []int32{}, Leader: 1}
		p := newPartition(pr)
		if fmt.Sprint(p.Replicas, p.ISR) != fmt.Sprint(pr.Replicas, pr.ISR) || p.ELR == nil || len(p.ELR) != 0 || p.LastKnownELR != nil {
			t.Fatalf("n=%d: lists %v %v %#v %#v from %v %v", n, p.Replicas, p.ISR, p.ELR, p.LastKnownELR, pr.Replicas, pr.ISR)
		}
		p.Replicas[0] = 99
		p.Replicas = append(p.Replicas, 42)
		if pr.Replicas[0] != 1 || p.ISR[0] != 1 || p.ISR[1] != 2 {
			t.Fatalf("n=%d: writing the partition's replicas changed %v and %v", n, pr.Replicas, p.ISR)
		}
	}
}
