package history

import (
	"reflect"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// Sizes reads headers and spans only; it must count what the decoded
// operations hold: send invocations, acknowledged sends by partition, and
// the records polls returned by partition, whether recorded as spans or
// one by one.
func TestSizesCountWhatTheOperationsHold(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var now time.Duration
		r := NewRecorder(func() time.Duration { return now })
		topics := []string{"orders", "billing", "t"}
		src := &fakeSource{base: 5, recs: []Record{{Value: "a"}, {Value: "b"}, {Key: "k", HasKey: true, Value: "c"}, {Value: "d"}}}
		n := rapid.IntRange(0, 60).Draw(t, "ops")
		for i := range n {
			now += time.Millisecond
			topic := topics[rapid.IntRange(0, len(topics)-1).Draw(t, "topic")]
			partition := rapid.Int32Range(-1, 5).Draw(t, "partition")
			v := NoValue()
			v.Topic, v.Value = topic, "v"+string(rune('a'+i%26))+time.Duration(i).String()
			switch rapid.IntRange(0, 4).Draw(t, "kind") {
			case 0:
				r.Invoke("p", FSend, v)
			case 1:
				v.Partition = partition
				v.Offset = rapid.Int64Range(-1, 100).Draw(t, "offset")
				r.Complete("p", []Type{OK, Fail, Info}[rapid.IntRange(0, 2).Draw(t, "type")], FSend, v)
			case 2:
				var spans []RecordSpan
				for range rapid.IntRange(0, 3).Draw(t, "spans") {
					lo := rapid.Int32Range(0, 4).Draw(t, "lo")
					spans = append(spans, RecordSpan{Src: src, Topic: topics[rapid.IntRange(0, 2).Draw(t, "span topic")], Partition: rapid.Int32Range(0, 5).Draw(t, "span partition"), Lo: lo, Hi: rapid.Int32Range(lo, 4).Draw(t, "hi")})
				}
				r.CompletePoll("c", OK, NoValue(), spans)
			case 3:
				w := NoValue()
				w.Records = []Record{{Topic: topic, Partition: max(partition, 0), Offset: 1, Value: "x"}}
				r.Complete("c", OK, FPoll, w)
			case 4:
				r.Invoke("c", FPoll, NoValue())
			}
		}
		want := Sizes{Acks: map[TopicPartition]int{}}
		r.Each(func(op *Op) {
			switch {
			case op.F == FSend && op.Type == Invoke:
				want.Sends++
			case op.F == FSend && op.Type == OK && op.Value.Offset >= 0 && op.Value.Partition >= 0:
				want.Acks[TopicPartition{op.Value.Topic, op.Value.Partition}]++
			}
		})
		if got := r.Sizes(); !reflect.DeepEqual(got, want) {
			t.Fatalf("Sizes() = %+v, want %+v", got, want)
		}
	})
}
