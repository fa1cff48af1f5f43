package runner

import (
	"strings"
	"testing"
	"time"

	"kafkasim/scenarios"
)

// The convergence grace covers the configuration's own longest wait on a
// lost request, plus a margin; a short configuration keeps the old 15 s.
func TestConvergeGraceCoversConfiguredWaits(t *testing.T) {
	load := func(producerCfg, brokerCfg string) *scenarios.Scenario {
		t.Helper()
		y := "name: g\nduration: 1s\nsettle: 1s\ncluster: { controllers: 1, brokers: 1" + brokerCfg + " }\n" +
			"topics: [{ name: t, partitions: 1, replication.factor: 1 }]\n" +
			"producers: [{ name: p, count: 1, topic: t, rate: 1/s, config: { acks: all" + producerCfg + " } }]\n" +
			"consumers: [{ name: c, count: 1, topics: [t] }]\n"
		s, err := scenarios.Parse("g.yaml", []byte(y))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, tc := range []struct {
		name, producer, broker string
		want                   time.Duration
		basis                  string
	}{
		{"defaults", "", "", 30*time.Second + time.Second + ConvergeMargin, "producer p: request.timeout.ms 30s"},
		{"short timeouts", ", request.timeout.ms: 2000, delivery.timeout.ms: 10000", ", broker: { replica.socket.timeout.ms: 2000 }", ConvergeGraceMax, "is shorter"},
		{"long producer timeout", ", request.timeout.ms: 100000, delivery.timeout.ms: 200000", "", 101*time.Second + ConvergeMargin, "request.timeout.ms 1m40s"},
		{"long follower timeout", "", ", broker: { replica.socket.timeout.ms: 60000 }", 61*time.Second + ConvergeMargin, "replica.socket.timeout.ms 1m0s"},
		{"capped", ", request.timeout.ms: 3600000, delivery.timeout.ms: 7200000", "", ConvergeWaitCap + ConvergeMargin, "capped"},
	} {
		got, basis := convergeGrace(load(tc.producer, tc.broker).ClusterConfig())
		if got != tc.want || !strings.Contains(basis, tc.basis) {
			t.Errorf("%s: grace %v (%s), want %v (%q)", tc.name, got, basis, tc.want, tc.basis)
		}
	}
}

// A classic member whose JoinGroup response is lost waits out the JoinGroup
// timeout, max(request.timeout.ms, max.poll.interval.ms + 5 s), before it
// rejoins; the grace covers it (fuzz seed 27: the leader's JoinGroup
// response was dropped by a partition from its coordinator).
func TestConvergeGraceCoversClassicJoinGroupTimeout(t *testing.T) {
	load := func(consumerCfg string) *scenarios.Scenario {
		t.Helper()
		y := "name: g\nduration: 1s\nsettle: 1s\ncluster: { controllers: 1, brokers: 1 }\n" +
			"topics: [{ name: t, partitions: 1, replication.factor: 1 }]\n" +
			"producers: [{ name: p, count: 1, topic: t, rate: 1/s, config: { acks: all } }]\n" +
			"consumers: [{ name: c, count: 1, group: g, topics: [t], config: { " + consumerCfg + " } }]\n"
		s, err := scenarios.Parse("g.yaml", []byte(y))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, tc := range []struct {
		name, consumer string
		want           time.Duration
		basis          string
	}{
		{"classic defaults", "group.protocol: classic", 5*time.Minute + 5*time.Second + 3*time.Second + ConvergeMargin, "JoinGroup timeout"},
		{"classic short poll interval", "group.protocol: classic, max.poll.interval.ms: 10000, heartbeat.interval.ms: 1000", 45*time.Second + 3*time.Second + time.Second + ConvergeMargin, "session.timeout.ms 45s"},
		{"consumer protocol", "group.protocol: consumer", 45*time.Second + 3*time.Second + 3*time.Second + ConvergeMargin, "group.consumer.session.timeout.ms"},
	} {
		got, basis := convergeGrace(load(tc.consumer).ClusterConfig())
		if got != tc.want || !strings.Contains(basis, tc.basis) {
			t.Errorf("%s: grace %v (%s), want %v (%q)", tc.name, got, basis, tc.want, tc.basis)
		}
	}
}
