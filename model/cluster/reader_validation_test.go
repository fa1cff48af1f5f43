package cluster

import (
	"strings"
	"testing"
	"time"

	"kafkasim/model/producer"
	"kafkasim/model/reader"
	"kafkasim/sim"
)

// validationTrace follows a reader's OffsetsForLeaderEpoch requests (KIP-320
// position validation) as they arrive at each broker, and the answers as they
// arrive back. (A leader change starts a new validation with the new leader
// at once, in Kafka too: only requests to one broker are compared.)
type validationTrace struct {
	reader      string
	sent        map[string][]time.Duration // per broker: arrival of each request
	answered    map[string]int             // per broker: answers received
	overlaps    []string
	timeout     time.Duration
	validations int
}

func (v *validationTrace) Record(r sim.TraceRecord) {
	if r.Kind != "deliver" {
		return
	}
	switch {
	case r.From == v.reader && strings.HasPrefix(r.Detail, "OffsetsForLeaderEpoch") && !strings.Contains(r.Detail, "Response"):
		sent := v.sent[r.Node]
		if n := len(sent); n > v.answered[r.Node] && r.At-sent[n-1] < v.timeout-10*time.Millisecond {
			v.overlaps = append(v.overlaps, r.Node+" at "+r.At.String())
		}
		v.sent[r.Node] = append(sent, r.At)
		v.validations++
	case r.Node == v.reader && strings.HasPrefix(r.Detail, "OffsetsForLeaderEpochResponse"):
		v.answered[r.From]++
	}
}

// Kafka's consumer keeps one position validation in flight per partition
// (SubscriptionState's nextRetryTimeMs: until the answer or the request
// timeout) and waits retry.backoff.ms after a failed one; the reader used to
// send a new OffsetsForLeaderEpoch at every poll while one was unanswered.
func TestReaderKeepsOneValidationInFlight(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		cfg := DefaultConfig(seed)
		cfg.Topics = []TopicSpec{{Name: "orders", Partitions: 1, ReplicationFactor: 3, MinInsyncReplicas: 1}}
		pc := producer.DefaultConfig("", "orders")
		pc.Rate, pc.Keys = 200, 10
		cfg.Producers = []ProducerSpec{{Name: "p", Count: 1, Config: pc}}
		rc := reader.DefaultConfig("", []string{"orders"})
		cfg.Readers = []ReaderSpec{{Name: "c", Count: 1, Config: rc}}
		vt := &validationTrace{reader: "c-0", timeout: rc.RequestTimeout / 10,
			sent: map[string][]time.Duration{}, answered: map[string]int{}}
		cfg.Trace = vt
		c, err := Build(cfg)
		if err != nil {
			t.Fatal(err)
		}
		// Leader changes make the reader validate; a slow network makes
		// each validation slower than a poll.
		for i := 1; i <= 4; i++ {
			c.World.ScheduleFault(time.Duration(8*i)*time.Second, sim.Fault{Kind: sim.FaultCrash, Target: "leader(orders-0)", For: 3 * time.Second})
		}
		c.World.ScheduleFault(5*time.Second, sim.Fault{Kind: sim.FaultSlowNetwork, Target: "c-0", Latency: 400 * time.Millisecond, For: 40 * time.Second})
		c.World.Start()
		c.World.RunUntil(50 * time.Second)
		if vt.validations == 0 {
			t.Fatalf("seed %d: the reader never validated its position: the test does not exercise KIP-320", seed)
		}
		if len(vt.overlaps) > 0 {
			t.Fatalf("seed %d: %d validations sent while an earlier one was unanswered (at %v); %d sent in all",
				seed, len(vt.overlaps), vt.overlaps, vt.validations)
		}
	}
}
