package reports

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"kafkasim/history"
)

// A producer with two sends in flight gets its completions back out of
// order; latency must pair them by record value, not by arrival.
func TestLatencyMatchesCompletionsByValue(t *testing.T) {
	var b opsBuilder
	b.add(0, "p-0", history.Invoke, history.FSend, sendValue("a"))
	b.add(1*time.Millisecond, "p-0", history.Invoke, history.FSend, sendValue("b"))
	b.add(5*time.Millisecond, "p-0", history.OK, history.FSend, ackValue("b", 0, 1))
	b.add(10*time.Millisecond, "p-0", history.OK, history.FSend, ackValue("a", 0, 0))
	// Without values the matcher falls back to invocation order.
	b.add(20*time.Millisecond, "p-1", history.Invoke, history.FSend, history.NoValue())
	b.add(21*time.Millisecond, "p-1", history.Invoke, history.FSend, history.NoValue())
	b.add(22*time.Millisecond, "p-1", history.OK, history.FSend, history.NoValue())
	b.add(40*time.Millisecond, "p-1", history.OK, history.FSend, history.NoValue())
	// A completion with no invocation is counted but has no latency.
	b.add(50*time.Millisecond, "p-2", history.OK, history.FSend, ackValue("c", 0, 2))

	cs := newClientSeries(newOps(b.ops), nil, nil, nil)
	if cs.b.n != 1 || cs.acked[0] != 5 {
		t.Fatalf("buckets %d, acked %v; want 1 bucket with 5 acks", cs.b.n, cs.acked)
	}
	// Latencies 2, 4, 10 and 19 ms (paired by arrival they would be 2, 5,
	// 9 and 19): the nearest-rank p50 is 4, the p99 19.
	if cs.latencyP50[0] != 4 || cs.latencyP99[0] != 19 {
		t.Fatalf("p50 %v ms, p99 %v ms; want 4 and 19", cs.latencyP50[0], cs.latencyP99[0])
	}
}

// A history whose acknowledgements arrive out of time order (from outside
// the simulator) keeps every bucket's latencies to the end; one in order
// reduces each bucket as the next begins. Both give each bucket's
// percentiles, and a bucket without acknowledged sends has none.
func TestLatencyPercentilesInAndOutOfOrder(t *testing.T) {
	build := func(shuffled bool) clientSeries {
		var b opsBuilder
		type ack struct {
			at   time.Duration
			name string
		}
		var acks []ack
		for i := range 30 {
			name := fmt.Sprintf("v%d", i)
			inv := time.Duration(i) * 100 * time.Millisecond
			if i >= 10 && i < 20 {
				inv += 2 * time.Second // nothing acknowledged in the second bucket
			}
			b.add(inv, "p", history.Invoke, history.FSend, sendValue(name))
			acks = append(acks, ack{inv + time.Duration(1+i)*time.Millisecond, name})
		}
		slices.SortFunc(acks, func(x, y ack) int { return int(x.at - y.at) })
		if shuffled {
			acks[3], acks[25] = acks[25], acks[3]
		}
		for i, a := range acks {
			b.add(a.at, "p", history.OK, history.FSend, ackValue(a.name, 0, int64(i)))
		}
		return newClientSeries(newOps(b.ops), nil, nil, nil)
	}
	inOrder, outOfOrder := build(false), build(true)
	for k := range inOrder.b.n {
		a50, a99, b50, b99 := inOrder.latencyP50[k], inOrder.latencyP99[k], outOfOrder.latencyP50[k], outOfOrder.latencyP99[k]
		if !(a50 == b50 || math.IsNaN(a50) && math.IsNaN(b50)) || !(a99 == b99 || math.IsNaN(a99) && math.IsNaN(b99)) {
			t.Fatalf("bucket %d: p50 %v / %v, p99 %v / %v in and out of order", k, a50, b50, a99, b99)
		}
	}
	if !math.IsNaN(inOrder.latencyP50[1]) || math.IsNaN(inOrder.latencyP50[0]) || inOrder.latencyP99[0] != 10 {
		t.Fatalf("p50 %v, p99 %v: want bucket 1 without latency, bucket 0's p99 10 ms", inOrder.latencyP50, inOrder.latencyP99)
	}
}

func TestClientSeriesCountsPerSecond(t *testing.T) {
	var b opsBuilder
	b.add(100*time.Millisecond, "p", history.Invoke, history.FSend, sendValue("x"))
	b.add(200*time.Millisecond, "p", history.OK, history.FSend, ackValue("x", 0, 0))
	b.add(1100*time.Millisecond, "p", history.Invoke, history.FSend, sendValue("y"))
	b.add(1200*time.Millisecond, "p", history.Fail, history.FSend, sendValue("y"))
	b.add(2100*time.Millisecond, "p", history.Invoke, history.FSend, sendValue("z"))
	b.add(2200*time.Millisecond, "p", history.Info, history.FSend, sendValue("z"))
	b.add(2300*time.Millisecond, "c", history.OK, history.FPoll, pollValue(
		history.Record{Topic: "t", Offset: 0}, history.Record{Topic: "t", Offset: 1}))
	cs := newClientSeries(newOps(b.ops), nil, nil, nil)
	if !slices.Equal(cs.acked, []float64{1, 0, 0}) || !slices.Equal(cs.unacked, []float64{0, 1, 1}) ||
		!slices.Equal(cs.polled, []float64{0, 0, 2}) {
		t.Fatalf("acked %v unacked %v polled %v", cs.acked, cs.unacked, cs.polled)
	}
}

func TestPercentileNearestRank(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3}
	if p := percentile(xs, 0.5); p != 3 {
		t.Errorf("p50 = %v, want 3", p)
	}
	if p := percentile(xs, 0.99); p != 5 {
		t.Errorf("p99 = %v, want 5", p)
	}
	if p := percentile(nil, 0.5); !math.IsNaN(p) {
		t.Errorf("p50 of nothing = %v, want NaN (a gap in the plot)", p)
	}
}

func TestBucketsWidenForLongSpans(t *testing.T) {
	b := newBuckets(0, int64(90*time.Second))
	if b.width != int64(time.Second) || b.n != 91 || b.origin != 0 {
		t.Errorf("90 s: %+v, want 91 one-second buckets from 0", b)
	}
	// A wall-clock history: origin at its first op, buckets widened.
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	b = newBuckets(start, start+int64(48*time.Hour))
	if b.origin != start || b.n > maxBuckets || b.width != int64(10*time.Second) {
		t.Errorf("48 h of wall clock: %+v", b)
	}
	if i := b.index(start - 5); i != 0 {
		t.Errorf("a time before the origin lands in bucket %d, want 0", i)
	}
	if i := b.index(math.MaxInt64); i != b.n-1 {
		t.Errorf("a time past the end lands in bucket %d, want the last", i)
	}
}

func TestReaderLag(t *testing.T) {
	var b opsBuilder
	b.add(500*time.Millisecond, "c-1", history.Invoke, history.FPoll, history.NoValue())
	b.add(600*time.Millisecond, "c-1", history.OK, history.FPoll, pollValue(
		history.Record{Topic: "t", Partition: 0, Offset: 3}, history.Record{Topic: "t", Partition: 0, Offset: 4}))
	b.add(1500*time.Millisecond, "c-1", history.OK, history.FPoll, pollValue(history.Record{Topic: "t", Partition: 1, Offset: 20}))
	b.add(700*time.Millisecond, "c-0", history.Invoke, history.FPoll, history.NoValue()) // never polled a record
	b.add(800*time.Millisecond, "p-0", history.OK, history.FSend, ackValue("v", 0, 0))   // not a reader
	samples := sortedSamples([]Sample{
		{At: 2 * time.Second, Partitions: []PartitionSample{{Name: "t-0", HW: 10}, {Name: "t-1", HW: 15}}},
		{At: 0, Partitions: []PartitionSample{{Name: "t-0", HW: 4}, {Name: "t-1", HW: -1}}},
		{At: time.Second, Partitions: []PartitionSample{{Name: "t-0", HW: 4}, {Name: "t-1", HW: 7}}},
	})
	m := newReaderMoves()
	newOps(b.ops).Each(m.add)
	readers, lag := m.lag(samples)
	if !slices.Equal(readers, []string{"c-0", "c-1"}) {
		t.Fatalf("readers %v", readers)
	}
	// c-0 never read: lag is the whole log. c-1 at 1 s is past t-0's HW
	// (clamped to 0) and has not read t-1; at 2 s it read t-1 beyond its HW.
	if want := []float64{4, 11, 25}; !slices.Equal(lag[0], want) {
		t.Errorf("c-0 lag %v, want %v", lag[0], want)
	}
	if want := []float64{4, 7, 5}; !slices.Equal(lag[1], want) {
		t.Errorf("c-1 lag %v, want %v", lag[1], want)
	}
}

func TestExcerptBringsPartners(t *testing.T) {
	var b opsBuilder
	b.add(0, "p-0", history.Invoke, history.FSend, sendValue("a"))     // 0
	b.add(1, "p-0", history.Invoke, history.FSend, sendValue("b"))     // 1
	b.add(2, "c-0", history.Invoke, history.FPoll, history.NoValue())  // 2
	b.add(3, "p-0", history.OK, history.FSend, ackValue("b", 0, 0))    // 3
	b.add(4, "c-0", history.OK, history.FPoll, pollValue())            // 4
	b.add(5, "p-0", history.Info, history.FSend, sendValue("a"))       // 5
	b.add(6, "p-1", history.Invoke, history.FSend, sendValue(hostile)) // 6, never completes
	rows, shown, missing := historyExcerpt(newOps(b.ops), []int64{5, 2, 6, 42, 5})
	var idx []int64
	var cited []int64
	for _, r := range rows {
		idx = append(idx, r.Index)
		if r.Cited {
			cited = append(cited, r.Index)
		}
	}
	if want := []int64{0, 2, 4, 5, 6}; !slices.Equal(idx, want) {
		t.Errorf("excerpt rows %v, want %v (the info send's invoke is 0, not 1)", idx, want)
	}
	if want := []int64{2, 5, 6}; !slices.Equal(cited, want) {
		t.Errorf("cited rows %v, want %v", cited, want)
	}
	if missing != 1 || !shown[0] || shown[42] {
		t.Errorf("missing %d, shown %v", missing, shown)
	}
	if rows[2].Records != "(none)" || rows[3].Type != "info" {
		t.Errorf("rows %+v", rows)
	}
}

// Histories whose indexes are not positions (filtered, merged) are looked
// up by index.
func TestExcerptIndexesNotPositions(t *testing.T) {
	ops := []history.Op{
		{Index: 100, Process: "p", Type: history.Invoke, F: history.FSend, Value: sendValue("a")},
		{Index: 205, Process: "p", Type: history.OK, F: history.FSend, Value: ackValue("a", 1, 9)},
	}
	rows, _, missing := historyExcerpt(newOps(ops), []int64{205, 1})
	if len(rows) != 2 || rows[0].Index != 100 || rows[1].Offset != "9" || rows[1].Partition != "orders-1" || missing != 1 {
		t.Errorf("rows %+v missing %d", rows, missing)
	}
}

func TestLaneChartCapsAndEscapes(t *testing.T) {
	var smp Sample
	for p := 0; p < 60; p++ {
		smp.Partitions = append(smp.Partitions, PartitionSample{Name: fmt.Sprintf("t-%d", p), Leader: int32(p % 4), ISR: []int32{0}})
	}
	smp.Partitions = append(smp.Partitions, PartitionSample{Name: "<b>-0", Leader: -1})
	lc := newLaneChart(&Run{Timeline: []Sample{smp}, SimTime: time.Minute,
		Faults: []Fault{{At: 10 * time.Second, What: hostile}}})
	svg := string(lc.SVG)
	if lc.Note != "Showing the first 50 of 61 partitions." {
		t.Errorf("note %q", lc.Note)
	}
	// Lanes sort by topic then partition number: "<b>" sorts first, and
	// t-9 comes before t-10.
	if !strings.Contains(svg, "&lt;b&gt;-0") || strings.Contains(svg, "<b>") || strings.Contains(svg, hostile) {
		t.Error("lane chart text is not escaped")
	}
	if !strings.Contains(svg, ">t-48<") || strings.Contains(svg, ">t-49<") {
		t.Error("the lane chart should draw the first 50 lanes in partition order")
	}
	if len(lc.Brokers) != 4 || lc.Brokers[0].Label != "broker 0" {
		t.Errorf("legend %v", lc.Brokers)
	}
	if empty := newLaneChart(&Run{}); empty.SVG != "" {
		t.Error("no timeline and no faults: no chart")
	}
}

func TestPartitionOrder(t *testing.T) {
	names := []string{"orders-10", "my-topic-2", "orders-9", "weird", "orders-x"}
	sortPartitions(names)
	if want := []string{"my-topic-2", "orders-9", "orders-10", "orders-x", "weird"}; !slices.Equal(names, want) {
		t.Errorf("sorted %v, want %v", names, want)
	}
	if topic, p, ok := splitPartition("my-topic-2"); topic != "my-topic" || p != 2 || !ok {
		t.Errorf("split = %q %d %v", topic, p, ok)
	}
}

func TestMinISRFromConfig(t *testing.T) {
	for _, c := range []struct {
		cfg    []KeyValue
		topics []string
		want   int
		ok     bool
	}{
		{[]KeyValue{{"min.insync.replicas", "2"}}, nil, 2, true},
		{[]KeyValue{{"topic.orders.min.insync.replicas", "3"}, {"acks", "all"}}, []string{"orders"}, 3, true},
		{[]KeyValue{{"topic.a.min.insync.replicas", "1"}, {"topic.b.min.insync.replicas", "2"}}, []string{"a", "b"}, 0, false},
		{[]KeyValue{{"min.insync.replicas", "many"}}, nil, 0, false},
		{nil, []string{"orders"}, 0, false},
		// The run store's spelling: a topic's value overrides the broker's.
		{[]KeyValue{{"broker min.insync.replicas", "1"}, {"topic orders min.insync.replicas", "2"}}, []string{"orders"}, 2, true},
		{[]KeyValue{{"broker min.insync.replicas", "1"}, {"topic orders min.insync.replicas", "2"}}, []string{"orders", "audit"}, 0, false},
		{[]KeyValue{{"broker min.insync.replicas", "2"}}, []string{"orders", "audit"}, 2, true},
	} {
		if got, ok := minISR(c.cfg, c.topics); got != c.want || ok != c.ok {
			t.Errorf("minISR(%v, %v) = %d, %v; want %d, %v", c.cfg, c.topics, got, ok, c.want, c.ok)
		}
	}
}
