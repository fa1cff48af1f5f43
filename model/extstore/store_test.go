package extstore

import (
	"testing"
	"time"

	"kafkasim/sim"
)

// writer sends the keys it is given, one ApplyRequest each, and keeps the
// answers.
type writer struct {
	store   string
	env     sim.Env
	answers map[uint64]bool
}

func (w *writer) Start(env sim.Env) { w.env, w.answers = env, map[uint64]bool{} }
func (w *writer) Deliver(_ sim.NodeID, m sim.Message) {
	if r, ok := m.(*ApplyResponse); ok {
		w.answers[r.CorrelationID] = r.Applied
	}
}
func (w *writer) Fire(sim.Timer) {}

func (w *writer) send(corr uint64, key string) {
	id, _ := w.env.Lookup(w.store)
	w.env.Send(id, &ApplyRequest{CorrelationID: corr, Key: key})
}

func newWorld(t *testing.T, mode Mode) (*sim.World, sim.NodeID, sim.NodeID, *writer) {
	t.Helper()
	w := sim.NewWorld(sim.DefaultOptions(1))
	cl := &writer{store: "store"}
	store := w.AddNode(sim.NodeSpec{Name: "store", New: New(mode)})
	client := w.AddNode(sim.NodeSpec{Name: "c-0", New: func() sim.Node { return cl }})
	w.Start()
	w.RunUntil(0)
	return w, store, client, cl
}

func TestPlainStoreAppliesEveryWrite(t *testing.T) {
	w, store, _, cl := newWorld(t, Plain)
	cl.send(1, "orders-0-7")
	cl.send(2, "orders-0-7")
	cl.send(3, "orders-0-8")
	w.RunFor(time.Second)
	for corr := uint64(1); corr <= 3; corr++ {
		if applied, ok := cl.answers[corr]; !ok || !applied {
			t.Fatalf("write %d: answered %v, applied %v; want applied", corr, ok, applied)
		}
	}
	s := w.Node(store).(*Store)
	if got := s.Applications("orders-0-7"); got != 2 {
		t.Fatalf("orders-0-7 applied %d times, want 2 (a plain store applies a duplicate)", got)
	}
}

func TestIdempotentStoreKeepsOneEffectPerKey(t *testing.T) {
	w, store, _, cl := newWorld(t, Idempotent)
	cl.send(1, "orders-0-7")
	cl.send(2, "orders-0-7") // arrives while the first is being made durable
	w.RunFor(time.Second)
	cl.send(3, "orders-0-7") // arrives once it is durable
	w.RunFor(time.Second)
	if !cl.answers[1] || cl.answers[2] || cl.answers[3] {
		t.Fatalf("answers %v: want the first applied, the others not", cl.answers)
	}
	if got := w.Node(store).(*Store).Applications("orders-0-7"); got != 1 {
		t.Fatalf("applied %d times, want 1", got)
	}
}

func TestRestartedStoreKnowsItsDurableWrites(t *testing.T) {
	w, store, _, cl := newWorld(t, Idempotent)
	cl.send(1, "orders-1-0")
	w.RunFor(time.Second)
	w.Crash(store, true)
	w.Restart(store)
	w.RunFor(time.Second)
	cl.send(2, "orders-1-0")
	w.RunFor(time.Second)
	if !cl.answers[1] || cl.answers[2] {
		t.Fatalf("answers %v: the restarted store must remember the acknowledged write", cl.answers)
	}
	if got := w.Node(store).(*Store).Applications("orders-1-0"); got != 1 {
		t.Fatalf("applied %d times after restart, want 1", got)
	}
}

func TestParseMode(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Mode
		ok   bool
	}{{"plain", Plain, true}, {"idempotent", Idempotent, true}, {"upsert", 0, false}} {
		got, ok := ParseMode(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("ParseMode(%q) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
