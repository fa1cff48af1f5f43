package cluster

import (
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"kafkasim/model/group"
	"kafkasim/model/processor"
	"kafkasim/model/producer"
	"kafkasim/model/proto"
	"kafkasim/model/reader"
	"kafkasim/sim"
)

func TestHeartbeatsOutpaced(t *testing.T) {
	s := time.Second
	tests := []struct {
		name    string
		members []memberPace
		timeout time.Duration
		slow    []string
	}{
		{"none", nil, 0, nil},
		{"Kafka's defaults", []memberPace{{"b-0", 3 * s, 300 * s}, {"b-1", 3 * s, 300 * s}}, 300 * s, nil},
		{"every heartbeat slower than the poll interval", []memberPace{{"b-0", 1700 * time.Millisecond, s}, {"b-1", 1700 * time.Millisecond, s}},
			s, []string{"b-0", "b-1"}},
		{"equal is in time", []memberPace{{"b-0", s, s}}, s, nil},
		// The group's timeout is its largest member's: one member with a
		// long poll interval covers the others' heartbeats.
		{"largest rebalance timeout wins", []memberPace{{"b-0", 4 * s, s}, {"l-0", 3 * s, 300 * s}}, 300 * s, nil},
		{"only the slower ones", []memberPace{{"b-0", 4 * s, 2 * s}, {"l-0", s, 2 * s}}, 2 * s, []string{"b-0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			timeout, slow := heartbeatsOutpaced(tc.members)
			var names []string
			for _, m := range slow {
				names = append(names, m.name)
			}
			if timeout != tc.timeout || !slices.Equal(names, tc.slow) {
				t.Errorf("heartbeatsOutpaced = %v, %v; want %v, %v", timeout, names, tc.timeout, tc.slow)
			}
		})
	}
}

func TestHeartbeatsOutpacedProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 6).Draw(t, "n")
		var members []memberPace
		for i := range n {
			members = append(members, memberPace{name: string(rune('a' + i)),
				heartbeat: time.Duration(rapid.IntRange(1, 20).Draw(t, "hb")) * 500 * time.Millisecond,
				rebalance: time.Duration(rapid.IntRange(1, 20).Draw(t, "rt")) * 500 * time.Millisecond})
		}
		timeout, slow := heartbeatsOutpaced(members)
		for _, m := range members {
			if m.rebalance > timeout {
				t.Fatalf("timeout %v below member %s's rebalance timeout %v", timeout, m.name, m.rebalance)
			}
			if reported := slices.Contains(slow, m); reported != (m.heartbeat > timeout) {
				t.Fatalf("member %s (heartbeat %v, timeout %v) reported %v", m.name, m.heartbeat, timeout, reported)
			}
		}
		if n > 0 && !slices.ContainsFunc(members, func(m memberPace) bool { return m.rebalance == timeout }) {
			t.Fatalf("timeout %v is no member's", timeout)
		}
	})
}

func TestRefusedForGood(t *testing.T) {
	for _, tc := range []struct {
		code proto.ErrorCode
		want bool
	}{
		{proto.UnreleasedInstanceID, true},
		// A fenced instance id means another process took it over: not
		// a refusal this member's own history explains.
		{proto.FencedInstanceID, false},
		{proto.InvalidRequest, false},
		{proto.GroupMaxSizeReached, false},
		{proto.None, false},
	} {
		if got := refusedForGood(tc.code); got != tc.want {
			t.Errorf("refusedForGood(%v) = %v, want %v", tc.code, got, tc.want)
		}
	}
}

func TestDescribePace(t *testing.T) {
	got := describePace([]memberPace{{"b-0", 4 * time.Second, 0}, {"b-1", 1700 * time.Millisecond, 0}, {"b-2", 1700 * time.Millisecond, 0}})
	if want := "b-1 and b-2 heartbeat every 1.7s, b-0 every 4s"; got != want {
		t.Errorf("describePace = %q, want %q", got, want)
	}
	got = describePace([]memberPace{{"b-0", 4 * time.Second, 0}})
	if want := "b-0 heartbeats every 4s"; got != want {
		t.Errorf("describePace = %q, want %q", got, want)
	}
}

// A group fresh out of its first rebalance has committed nothing for
// auto.commit.interval.ms (ConsumerCoordinator.onJoinComplete restarts the
// auto-commit timer): its convergence fails on the committed offset, and
// FirstAutoCommitsDue names the members whose first auto-commit is still to
// come and how long the judge waits for it. Once they have auto-committed
// there is nothing more to wait for: a lag left then is judged as it is.
func TestFirstAutoCommitsDue(t *testing.T) {
	cfg := DefaultConfig(7)
	cfg.Controllers, cfg.Brokers = 1, 1
	cfg.Topics = []TopicSpec{{Name: "orders", Partitions: 1, ReplicationFactor: 1, MinInsyncReplicas: 1}}
	pc := producer.DefaultConfig("", "orders")
	pc.Rate, pc.Keys = 200, 10
	pc.Start, pc.Stop = time.Second, 3*time.Second
	cfg.Producers = []ProducerSpec{{Name: "p", Count: 1, Config: pc}}
	rc := reader.DefaultConfig("", []string{"orders"})
	gc := reader.DefaultGroupConfig("billing")
	gc.Commit, gc.AutoCommitInterval = reader.CommitAuto, 20*time.Second
	gc.Processing = sim.Range{}
	gc.Assignors, _ = ClientAssignors([]string{"range"})
	rc.Group = &gc
	cfg.Readers = []ReaderSpec{{Name: "c", Count: 1, Config: rc}}
	gcc := group.DefaultConfig()
	gcc.OffsetsTopicReplicationFactor = 1
	cfg.Groups = &GroupSettings{Coordinator: gcc}
	c, err := Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w := c.World
	w.Start()
	w.RunUntil(10 * time.Second)
	r := c.Reader(c.Readers[0])
	own, ok := r.FirstAutoCommitDue()
	if !ok {
		t.Fatalf("c-0 has no first auto-commit due at 10s (owns %v)", r.Owned())
	}
	if conv, why := c.Converged(); conv || !strings.Contains(why, "committed offset of orders-0 is -1") {
		t.Fatalf("converged %v (%s), want the group judged behind on orders-0", conv, why)
	}
	wait, names := c.FirstAutoCommitsDue()
	if wait != own || !slices.Equal(names, []string{"c-0"}) {
		t.Fatalf("FirstAutoCommitsDue = %v %v, want %v [c-0]", wait, names, own)
	}
	w.RunFor(wait + time.Second)
	if conv, why := c.Converged(); !conv {
		t.Fatalf("not converged after c-0's first auto-commit: %s", why)
	}
	if wait, names := c.FirstAutoCommitsDue(); wait != 0 || names != nil {
		t.Fatalf("FirstAutoCommitsDue = %v %v after the first auto-commit, want none", wait, names)
	}
	if _, ok := r.FirstAutoCommitDue(); ok {
		t.Fatalf("c-0 still has a first auto-commit due after it auto-committed")
	}
}

// processorOutputs lists the output topics of a group's stream processors
// only: once each, in the configuration's order; plain members, processors
// without an output (exactly-once with offsets only) and other groups'
// processors do not count.
func TestProcessorOutputs(t *testing.T) {
	spec := func(name, gid, output string, isProcessor bool) ReaderSpec {
		rc := reader.DefaultConfig("", []string{"orders"})
		gc := reader.DefaultGroupConfig(gid)
		rc.Group = &gc
		rs := ReaderSpec{Name: name, Count: 2, Config: rc}
		if isProcessor {
			pc := &processor.Config{}
			pc.Producer.Topic = output
			rs.Processor = pc
		}
		return rs
	}
	c := &Cluster{cfg: Config{Readers: []ReaderSpec{
		spec("c", "xg", "", false),
		spec("x", "xg", "x-out", true),
		spec("y", "xg", "", true),
		spec("z", "xg", "z-out", true),
		spec("x2", "xg", "x-out", true),
		spec("w", "other", "w-out", true),
	}}}
	if got, want := c.processorOutputs("xg"), []string{"x-out", "z-out"}; !slices.Equal(got, want) {
		t.Errorf("processorOutputs(xg) = %v, want %v", got, want)
	}
	if got := c.processorOutputs("none"); got != nil {
		t.Errorf("processorOutputs(none) = %v, want none", got)
	}
}
