package cluster

import (
	"strings"
	"testing"
	"time"

	"kafkasim/model/producer"
	"kafkasim/model/reader"
)

// convergenceCluster is a cluster whose producer stops writing at 10 s,
// with a reader that reads along and a reader that starts only after an
// hour; finalReader names the reader convergence does not wait for.
func convergenceCluster(t *testing.T, finalReader string) *Cluster {
	t.Helper()
	cfg := DefaultConfig(3)
	cfg.Topics = []TopicSpec{{Name: "orders", Partitions: 2, ReplicationFactor: 3, MinInsyncReplicas: 2}}
	pc := producer.DefaultConfig("", "orders")
	pc.Rate, pc.Keys = 50, 10
	pc.Start, pc.Stop = 2*time.Second, 10*time.Second
	cfg.Producers = []ProducerSpec{{Name: "p", Count: 1, Config: pc}}
	late := reader.DefaultConfig("", []string{"orders"})
	late.Start = time.Hour
	cfg.Readers = []ReaderSpec{{Name: "c", Count: 1, Config: reader.DefaultConfig("", []string{"orders"})}, {Name: "late", Count: 1, Config: late}}
	cfg.FinalReader = finalReader
	c, err := Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if ok, why := c.Converged(); ok || why != "no active controller" {
		t.Fatalf("before the start: converged %v (%s), want the control plane missing", ok, why)
	}
	c.World.Start()
	c.World.RunUntil(30 * time.Second)
	return c
}

func TestConvergedDoesNotWaitForTheFinalReader(t *testing.T) {
	c := convergenceCluster(t, "late")
	if c.FinalReader != c.Readers[1] {
		t.Fatalf("final reader %v, want %v", c.FinalReader, c.Readers[1])
	}
	if ok, why := c.Converged(); !ok {
		t.Fatalf("not converged: %s\n%s", why, describe(c))
	}
	// The same cluster without a final reader waits for the late reader,
	// which has read nothing of what the producer wrote.
	c = convergenceCluster(t, "")
	if ok, why := c.Converged(); ok || !strings.HasPrefix(why, "late-0 has not caught up on orders-") {
		t.Fatalf("converged %v (%s), want late-0 behind", ok, why)
	}
}

// The first condition that does not hold gives the reason: producers come
// before readers.
func TestConvergedGivesTheFirstConditionMissing(t *testing.T) {
	c := convergenceCluster(t, "late")
	w := c.World
	w.Crash(c.Readers[0], false)
	w.RunFor(time.Second)
	if ok, why := c.Converged(); ok || why != "c-0 is "+w.State(c.Readers[0]).String() {
		t.Fatalf("converged %v (%s), want c-0 down", ok, why)
	}
	w.Crash(c.Producers[0], false)
	w.RunFor(time.Second)
	if ok, why := c.Converged(); ok || why != "p-0 is "+w.State(c.Producers[0]).String() {
		t.Fatalf("converged %v (%s), want p-0 down", ok, why)
	}
	w.Crash(c.BrokerNode(2), false)
	w.RunFor(time.Second)
	if ok, why := c.Converged(); ok || why != "broker-2 is "+w.State(c.BrokerNode(2)).String() {
		t.Fatalf("converged %v (%s), want broker-2 down", ok, why)
	}
}

func TestConvergenceConditionsInOrder(t *testing.T) {
	var names []string
	for _, cond := range convergence {
		names = append(names, cond.Name)
	}
	want := "control plane, partitions led in sync, replication drained, producers done, readers caught up, consumer groups stable, no transaction open"
	if got := strings.Join(names, ", "); got != want {
		t.Fatalf("conditions %s, want %s", got, want)
	}
}

func TestBuildRejectsAnUnknownFinalReader(t *testing.T) {
	for _, tc := range []struct {
		name  string
		count int
		final string
	}{{"c", 1, "final"}, {"final", 2, "final"}} {
		cfg := DefaultConfig(1)
		cfg.Readers = []ReaderSpec{{Name: tc.name, Count: tc.count, Config: reader.DefaultConfig("", nil)}}
		cfg.FinalReader = tc.final
		if _, err := Build(cfg); err == nil || !strings.Contains(err.Error(), `final reader "final"`) {
			t.Fatalf("readers %s×%d, final reader %q: error %v", tc.name, tc.count, tc.final, err)
		}
	}
}

func TestCatchUpRise(t *testing.T) {
	m := CatchUp{}
	for _, tc := range []struct {
		key  string
		x    int64
		want bool
	}{
		{"a", 5, false}, // the first record: nothing to compare with
		{"a", 5, false}, // the same log end
		{"a", 7, true},
		{"a", 6, false}, // truncated: no progress, and 7 stays the best
		{"a", 7, false},
		{"b", 9, false}, // each key on its own
		{"a", 8, true},
	} {
		if got := m.rise(tc.key, tc.x); got != tc.want {
			t.Fatalf("rise(%s, %d) = %v, want %v", tc.key, tc.x, got, tc.want)
		}
	}
	if m["a"] != 8 || m["b"] != 9 {
		t.Fatalf("best %v", m)
	}
}
