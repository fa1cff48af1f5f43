package reports

import (
	"fmt"
	"time"

	"kafkasim/history"
)

// hostile is a record value that must come out of the report as text.
const hostile = `<script>alert(1)</script>`

// opsBuilder appends history operations with Index == position.
type opsBuilder struct{ ops []history.Op }

func (b *opsBuilder) add(t time.Duration, process string, typ history.Type, f string, v history.Value) int64 {
	idx := int64(len(b.ops))
	b.ops = append(b.ops, history.Op{Index: idx, Time: int64(t), Process: process, Type: typ, F: f, Value: v})
	return idx
}

func sendValue(value string) history.Value {
	v := history.NoValue()
	v.Topic, v.Key, v.HasKey, v.Value = "orders", "k", true, value
	return v
}

func ackValue(value string, partition int32, offset int64) history.Value {
	v := sendValue(value)
	v.Partition, v.Offset = partition, offset
	return v
}

func pollValue(recs ...history.Record) history.Value {
	v := history.NoValue()
	v.Records, v.HasRecords = recs, true
	return v
}

// syntheticRun is a 30-second run of three orders partitions on brokers
// 1..3: broker 1 crashes at 10 s, orders-0 is leaderless for a second and
// then led by broker 2 with a shrunk ISR; two producers keep two sends in
// flight each (completions out of order), some sends fail or time out, one
// consumer polls behind. Two anomalies cite history operations, one record
// value is hostile HTML.
func syntheticRun() (*Run, map[string][]int64) {
	var b opsBuilder
	cites := map[string][]int64{}
	next := map[int32]int64{}
	var acked []history.Record
	seq := 0
	for ms := 0; ms < 30000; ms += 400 {
		t := time.Duration(ms) * time.Millisecond
		for _, p := range []string{"p-0", "p-1"} {
			v1 := fmt.Sprintf("%s:%d", p, seq)
			v2 := fmt.Sprintf("%s:%d", p, seq+1)
			if seq == 10 {
				v2 = hostile
			}
			seq += 2
			i1 := b.add(t, p, history.Invoke, history.FSend, sendValue(v1))
			b.add(t+time.Millisecond, p, history.Invoke, history.FSend, sendValue(v2))
			part := int32(seq % 3)
			// The second send completes first: the report must match
			// completions to invocations by value.
			switch {
			case ms >= 10000 && ms < 11000 && part == 0:
				b.add(t+30*time.Millisecond, p, history.Fail, history.FSend, sendValue(v2))
				b.add(t+120*time.Millisecond, p, history.Info, history.FSend, sendValue(v1))
			default:
				off := next[part]
				next[part] += 2
				c2 := b.add(t+5*time.Millisecond, p, history.OK, history.FSend, ackValue(v2, part, off+1))
				c1 := b.add(t+9*time.Millisecond, p, history.OK, history.FSend, ackValue(v1, part, off))
				acked = append(acked,
					history.Record{Topic: "orders", Partition: part, Offset: off, Value: v1},
					history.Record{Topic: "orders", Partition: part, Offset: off + 1, Value: v2})
				if v2 == hostile {
					cites["hostile"] = append(cites["hostile"], c2)
				}
				if len(cites["lost"]) < 2 && ms > 9000 {
					cites["lost"] = append(cites["lost"], c1, i1)
				}
			}
		}
		// c-0 polls what was acknowledged up to a second ago.
		if ms%1000 == 0 {
			b.add(t+2*time.Millisecond, "c-0", history.Invoke, history.FPoll, history.NoValue())
			var recs []history.Record
			for len(acked) > 0 && len(recs) < 8 {
				recs = append(recs, acked[0])
				acked = acked[1:]
			}
			ci := b.add(t+3*time.Millisecond, "c-0", history.OK, history.FPoll, pollValue(recs...))
			if len(cites["dup"]) == 0 && len(recs) > 0 {
				cites["dup"] = append(cites["dup"], ci)
			}
		}
	}

	var timeline []Sample
	for s := 0; s <= 30; s++ {
		ctrl := "controller-0"
		if s == 10 {
			ctrl = ""
		}
		smp := Sample{At: time.Duration(s) * time.Second, ActiveController: ctrl, ControllerEpoch: 1}
		for p := int32(0); p < 3; p++ {
			ps := PartitionSample{Name: fmt.Sprintf("orders-%d", p), Leader: 1 + p, LeaderEpoch: 0,
				ISR: []int32{1, 2, 3}, HW: int64(s) * 50, LEO: int64(s)*50 + 2}
			if p == 0 {
				switch {
				case s == 10:
					ps.Leader, ps.ISR, ps.HW, ps.LEO = -1, []int32{1}, -1, -1
				case s > 10:
					ps.Leader, ps.LeaderEpoch, ps.ISR, ps.ELR = 2, 1, []int32{2, 3}, []int32{1}
				}
			}
			smp.Partitions = append(smp.Partitions, ps)
		}
		if s >= 10 && s < 20 {
			smp.Down = []string{"broker-1"}
		}
		timeline = append(timeline, smp)
	}

	r := &Run{
		Scenario:    "acks1-leader-failover",
		Description: "acks=1 producers while the leader of orders-0 crashes",
		Seed:        7,
		Version:     "test",
		TraceHash:   "0123456789abcdef",
		Events:      1834211,
		SimTime:     30 * time.Second,
		WallTime:    812 * time.Millisecond,
		Verdict:     "fail",
		Headline:    "3 acknowledged writes lost (violation: acks=all)",
		Expectations: []Expectation{
			{Key: "lost-acked-write", Want: "0", Got: "3", OK: false},
			{Key: "availability", Want: ">0.9", Got: "0.98", OK: true},
		},
		Writes: Writes{Attempted: 300, Acked: 290, Failed: 5, Indeterminate: 5, LostAcked: 3, Availability: 0.967},
		Reads:  Reads{Polls: 30, Records: 240, Duplicates: 1},
		Anomalies: []Anomaly{
			{Type: "lost-acked-write", Verdict: "violation", Count: 3, Because: "acks=all must survive one broker crash",
				Examples: []Example{
					{Partition: "orders-0", Offset: 40, Value: "p-0:20", Process: "p-0", Ops: cites["lost"][:2], Events: []uint64{55102}, Detail: "acknowledged at offset 40, missing from the final read"},
					{Partition: "orders-1", Offset: -1, Value: hostile, Process: "p-1", Ops: cites["hostile"], Detail: "the value " + hostile + " was never read"},
				}},
			{Type: "duplicate-read", Verdict: "permitted", Count: 1, Because: "at-least-once delivery may redeliver",
				Examples: []Example{{Partition: "orders-2", Offset: 3, Value: "p-1:5", Process: "c-0", Ops: append(cites["dup"], 999999), Detail: "read twice"}}},
		},
		Invariants: []Invariant{
			{Name: "single-leader-per-epoch", Status: "ok"},
			{Name: "replicas-agree-below-hw", Status: "violated", Detail: "broker 1 and 2 disagree at orders-0@40"},
		},
		Converged:      true,
		ConvergeDetail: "every partition has a leader and a full ISR",
		Faults: []Fault{
			{At: 10 * time.Second, Kind: "crash", What: "crash broker-1", Origin: "schedule", Nodes: []string{"broker-1"}},
			{At: 15 * time.Second, Kind: "partition", What: "isolate broker-9", Origin: "nemesis/0", Nodes: []string{"broker-9"}, Skipped: "no such node"},
			{At: 20 * time.Second, Kind: "crash", What: "restart broker-1", Origin: "schedule", Nodes: []string{"broker-1"}, Undo: true},
		},
		Timeline: timeline,
		Final: []PartitionState{
			{Topic: "orders", Partition: 1, Leader: 2, LeaderEpoch: 0, Replicas: []int32{2, 3, 1}, ISR: []int32{2, 3, 1}, HW: 1500, LEO: 1502},
			{Topic: "orders", Partition: 0, Leader: 2, LeaderEpoch: 1, Replicas: []int32{1, 2, 3}, ISR: []int32{2, 3}, ELR: []int32{1}, HW: 1500, LEO: 1502,
				ReplicaLEO: map[int32]int64{1: -1, 2: 1502, 3: 1500}},
			{Topic: "orders", Partition: 2, Leader: 3, Replicas: []int32{3, 1, 2}, ISR: []int32{3, 1, 2}, HW: 1500, LEO: 1500},
		},
		Ops: b.ops,
		Linearizability: []Visualization{{Partition: "orders-0",
			HTML: []byte(`<!DOCTYPE html><html><body><h1 id="h">porcupine orders-0</h1><script>document.getElementById("h").dataset.ok = "1";</script></body></html>`)}},
		Config: []KeyValue{
			{Key: "acks", Value: "1"},
			{Key: "min.insync.replicas", Value: "2"},
			{Key: "client.id", Value: hostile},
		},
	}
	return r, cites
}
