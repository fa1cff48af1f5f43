package broker_test

import (
	"strings"
	"testing"
	"time"

	"kafkasim/model/cluster"
	"kafkasim/model/metadata"
	"kafkasim/model/producer"
	"kafkasim/sim"
)

// idleBesideOrders builds one controller, brokers 1 and 2, a written
// partition orders-0 and seven idle partitions idle-0..6, all led by broker
// 1 and followed by broker 2, and starts it, tracing the run into the
// buffer it returns.
func idleBesideOrders(t *testing.T, seed uint64) (*cluster.Cluster, *sim.TraceBuffer) {
	t.Helper()
	buf := &sim.TraceBuffer{RecordsMax: 1 << 20}
	cfg := cluster.DefaultConfig(seed)
	cfg.Controllers, cfg.Brokers = 1, 2
	idle := make([][]int32, 7)
	for i := range idle {
		idle[i] = []int32{1, 2}
	}
	cfg.Topics = []cluster.TopicSpec{
		{Name: "orders", Partitions: 1, ReplicationFactor: 2, Assignment: [][]int32{{1, 2}}},
		{Name: "idle", Partitions: 7, ReplicationFactor: 2, Assignment: idle},
	}
	pc := producer.DefaultConfig("", "orders")
	pc.Rate, pc.Keys = 200, 10
	cfg.Producers = []cluster.ProducerSpec{{Name: "p", Count: 1, Config: pc}}
	cfg.Trace = buf
	c, err := cluster.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.World.Start()
	return c, buf
}

// followerFetches are the fetches broker-2 sent broker-1, and broker-1's
// answers, as the trace describes them.
func followerFetches(buf *sim.TraceBuffer, from time.Duration) (fetches, answers []string) {
	for _, r := range buf.Records {
		if r.Kind != "deliver" || r.At < from {
			continue
		}
		switch {
		case r.Node == "broker-1" && r.From == "broker-2" && strings.HasPrefix(r.Detail, "Fetch(replica)"):
			fetches = append(fetches, r.Detail)
		case r.Node == "broker-2" && r.From == "broker-1" && strings.HasPrefix(r.Detail, "FetchResponse"):
			answers = append(answers, r.Detail)
		}
	}
	return fetches, answers
}

// A follower's first fetch from a leader is a full fetch naming every
// partition it follows there; the leader opens a session, and from then
// on the follower's fetches name only the partition whose log moves and the
// answers carry only it: the idle partitions stay in the session, unnamed
// (KIP-227). The leader still counts every fetch as a fetch of each idle
// partition: its follower stays in their ISRs past replica.lag.time.max.ms.
func TestFetchSessionNamesOnlyWhatMoved(t *testing.T) {
	c, buf := idleBesideOrders(t, 5)
	w := c.World
	w.RunUntil(45 * time.Second)
	fetches, answers := followerFetches(buf, 0)
	if len(fetches) < 100 {
		t.Fatalf("%d fetches from the follower in 45 s", len(fetches))
	}
	// The partitions join the fetcher as the follower learns of them:
	// the first fetch is a full one, without a session; some fetch names
	// the idle partitions, added to the session.
	if strings.Contains(fetches[0], "session=") {
		t.Fatalf("first fetch %q: want a full fetch, without a session", fetches[0])
	}
	if !strings.Contains(answers[0], "session=") {
		t.Fatalf("first answer %q opens no session", answers[0])
	}
	idleNamed := false
	for _, f := range fetches {
		idleNamed = idleNamed || strings.Contains(f, "idle-6@")
	}
	if !idleNamed {
		t.Fatal("no fetch named the idle partitions")
	}
	fetches, answers = followerFetches(buf, 5*time.Second)
	for _, f := range fetches {
		if !strings.Contains(f, "session=") || strings.Contains(f, "idle-") {
			t.Fatalf("fetch %q: want an incremental fetch naming no idle partition", f)
		}
	}
	named := 0
	for _, f := range fetches {
		if strings.Contains(f, "orders-0@") {
			named++
		}
	}
	if named == 0 {
		t.Fatal("no incremental fetch named orders-0, whose log moves")
	}
	for _, a := range answers {
		if strings.Contains(a, "idle-") {
			t.Fatalf("answer %q carries an idle partition", a)
		}
	}
	for i := range 7 {
		tp := metadata.TopicPartition{Topic: "idle", Partition: int32(i)}
		if isr := c.Broker(1).Partition(tp).ISR(); len(isr) != 2 {
			t.Fatalf("%s: ISR %v after 45 s of incremental fetches: the follower fell out", tp, isr)
		}
	}
}

// The leader's session holds the idle partitions lazily: a fetch does not
// visit them (they are off the session's dirty list), yet their follower's
// fetch state moves with every fetch of the session, as if each had been
// served: the follower was caught up on each idle partition at its last
// fetch, not when the partition went quiet.
func TestFetchSessionLeavesIdlePartitionsLazy(t *testing.T) {
	c, buf := idleBesideOrders(t, 5)
	w := c.World
	w.RunUntil(45 * time.Second)
	dirty, lazy := c.Broker(1).SessionParts()
	if lazy < 7 || dirty > 1 {
		t.Fatalf("leader's sessions: %d partitions to visit, %d lazy; want the 7 idle ones lazy and at most orders-0 to visit", dirty, lazy)
	}
	fetches, _ := followerFetches(buf, 44*time.Second)
	if len(fetches) == 0 {
		t.Fatal("no fetch from the follower in the last second")
	}
	var last time.Duration
	for _, r := range buf.Records {
		if r.Kind == "deliver" && r.Node == "broker-1" && r.From == "broker-2" && strings.HasPrefix(r.Detail, "Fetch(replica)") {
			last = r.At
		}
	}
	for i := range 7 {
		tp := metadata.TopicPartition{Topic: "idle", Partition: int32(i)}
		at, ok := c.Broker(1).FollowerCaughtUp(tp, 2)
		if !ok || at < last || at > w.Now() {
			t.Fatalf("%s: follower caught up at %v, last fetch delivered at %v (now %v)", tp, at, last, w.Now())
		}
	}
}

// A leader's sessions die with its process: after broker-1 restarts, its
// follower fetches in full again (a new session, with a new id), and every
// partition, idle or not, is replicated and in sync once more.
func TestFetchSessionStartsOverAfterLeaderRestart(t *testing.T) {
	c, buf := idleBesideOrders(t, 9)
	w := c.World
	w.RunUntil(5 * time.Second)
	_, before := followerFetches(buf, 0)
	oldID := sessionOf(before[len(before)-1])
	if oldID == "" {
		t.Fatalf("no session before the restart: %q", before[len(before)-1])
	}
	leader := c.BrokerNode(1)
	if !w.Crash(leader, false) {
		t.Fatal("could not crash broker-1")
	}
	w.RunUntil(w.Now() + 500*time.Millisecond)
	restartAt := w.Now()
	if !w.Restart(leader) {
		t.Fatal("could not restart broker-1")
	}
	w.RunUntil(restartAt + 20*time.Second)
	// broker-1 may lead again, or follow broker-2: look at whichever
	// fetches happened, in both directions.
	full, newID := false, ""
	for _, r := range buf.Records {
		if r.Kind != "deliver" || r.At < restartAt {
			continue
		}
		// A full fetch: without a session, or closing one (epoch 0).
		if strings.HasPrefix(r.Detail, "Fetch(replica)") && (!strings.Contains(r.Detail, "session=") || strings.Contains(r.Detail, "/0 ")) {
			full = true
		}
		if strings.HasPrefix(r.Detail, "FetchResponse") && r.Node == "broker-2" && r.From == "broker-1" {
			if id := sessionOf(r.Detail); id != "" {
				newID = id
			}
		}
	}
	if !full {
		t.Fatal("no full fetch after broker-1 restarted")
	}
	if newID == oldID {
		t.Fatalf("broker-1's new process answered in session %s, its previous process's", newID)
	}
	for i := range 7 {
		tp := metadata.TopicPartition{Topic: "idle", Partition: int32(i)}
		for _, b := range []int32{1, 2} {
			if v := c.Broker(b).Partition(tp); v != nil && v.IsLeader() && len(v.ISR()) != 2 {
				t.Fatalf("%s: ISR %v 20 s after the restart", tp, v.ISR())
			}
		}
	}
}

func sessionOf(detail string) string {
	i := strings.Index(detail, "session=")
	if i < 0 {
		return ""
	}
	s := detail[i+len("session="):]
	if j := strings.IndexAny(s, " /"); j >= 0 {
		s = s[:j]
	}
	return s
}
