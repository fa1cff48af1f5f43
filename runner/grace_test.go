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
