package producer_test

import (
	"testing"
	"time"

	"kafkasim/history"
	"kafkasim/model/producer"
	"kafkasim/sim"
)

// A producer killed with a produce request parked in its leader (acks=all,
// the followers slow) comes back as a new process; the leader answers the
// old request after the restart. Kafka sends that answer on the dead
// process's connection (NetworkClient matches a response to its request per
// connection), so the new process never sees it: its own send is
// acknowledged by its own answer, not by the one that was meant for the
// request its predecessor numbered the same.
func TestRestartedProducerIgnoresTheAnswerToItsPredecessorsRequest(t *testing.T) {
	w := sim.NewWorld(sim.DefaultOptions(1))
	const delay = 2 * time.Second
	broker := &testBroker{delay: delay}
	bid := w.AddNode(sim.NodeSpec{Name: "broker-1", Role: "broker", New: func() sim.Node { return broker }})
	rec := history.NewRecorder(w.Now)
	cfg := producer.DefaultConfig("p-0", "orders")
	cfg.Brokers, cfg.Recorder = []sim.NodeID{bid}, rec
	pid := w.AddNode(sim.NodeSpec{Name: "p-0", Role: "producer", New: producer.New(cfg)})
	w.Start()
	w.RunUntil(100 * time.Millisecond)
	w.Node(pid).(*producer.Producer).Probe()
	w.RunUntil(200 * time.Millisecond)
	w.Crash(pid, false)
	w.RunUntil(300 * time.Millisecond)
	w.Restart(pid)
	w.RunUntil(500 * time.Millisecond)
	w.Node(pid).(*producer.Producer).Probe()
	w.RunUntil(10 * time.Second)

	if len(broker.attempts) != 2 {
		t.Fatalf("the broker saw %d produce attempts, want 2 (one per process)", len(broker.attempts))
	}
	var sends []history.Op
	for _, op := range rec.Ops() {
		if op.Process == "p-0" && op.F == history.FSend {
			sends = append(sends, op)
		}
	}
	// The first process's send is open for good (it died); the second's
	// invoke and its completion follow.
	if len(sends) != 3 || sends[2].Type != history.OK {
		t.Fatalf("sends %+v, want the first process's invoke and the second's invoke and ok", sends)
	}
	if took := time.Duration(sends[2].Time - sends[1].Time); took < delay {
		t.Fatalf("the restarted producer's send was acknowledged %v after it began, before its own answer could come (%v): by the answer to its predecessor's request", took, delay)
	}
	if sends[2].Value.Offset != 2 {
		t.Fatalf("the restarted producer's send took offset %d, want 2 (its own attempt's)", sends[2].Value.Offset)
	}
}
