package processor

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"kafkasim/history"
	"kafkasim/model/producer"
	"kafkasim/model/proto"
	"kafkasim/model/reader"
	"kafkasim/sim"
)

// fakeEnv is a processor's environment: it keeps what the node sends and
// the timers it sets.
type fakeEnv struct {
	sim.Env
	inc    uint32
	now    time.Duration
	rng    *rand.Rand
	sent   []sim.Message
	timers []sim.Timer
	exited bool
}

func (e *fakeEnv) ID() sim.NodeID                   { return 9 }
func (e *fakeEnv) Name() string                     { return "etl-0" }
func (e *fakeEnv) Now() time.Duration               { return e.now }
func (e *fakeEnv) WorldTime() time.Duration         { return e.now }
func (e *fakeEnv) Incarnation() uint32              { return e.inc }
func (e *fakeEnv) Rand() *rand.Rand                 { return e.rng }
func (e *fakeEnv) Send(_ sim.NodeID, m sim.Message) { e.sent = append(e.sent, m) }
func (e *fakeEnv) Cancel(sim.TimerID)               {}
func (e *fakeEnv) CloseConnection(sim.NodeID)       {}
func (e *fakeEnv) Connection(sim.NodeID) uint64     { return 1 }
func (e *fakeEnv) Exit()                            { e.exited = true }
func (e *fakeEnv) Note(string, string)              {}
func (e *fakeEnv) After(_ time.Duration, t sim.Timer) sim.TimerID {
	e.timers = append(e.timers, t)
	return sim.TimerID{}
}

func newEnv(inc uint32) *fakeEnv { return &fakeEnv{inc: inc, rng: rand.New(rand.NewPCG(1, 2))} }

func testConfig(exactlyOnce bool) Config {
	rc := reader.DefaultConfig("etl-0", []string{"orders"})
	g := reader.DefaultGroupConfig("etl")
	g.Commit = reader.CommitAfterProcessing
	rc.Group = &g
	rc.Brokers = []sim.NodeID{1}
	pc := producer.DefaultClientConfig("etl-0", "invoices")
	pc.Brokers = []sim.NodeID{1}
	if exactlyOnce {
		pc.TransactionalID = "etl-0"
		rc.Isolation = "read_committed"
	}
	return Config{Name: "etl-0", Reader: rc, Producer: pc, CommitInterval: 100 * time.Millisecond, Recorder: history.NewRecorder(func() time.Duration { return 0 })}
}

// metadataCorrs lists the correlation ids of the metadata requests sent.
func metadataCorrs(sent []sim.Message) []uint64 {
	var out []uint64
	for _, m := range sent {
		if r, ok := m.(*proto.MetadataRequest); ok {
			out = append(out, r.CorrelationID)
		}
	}
	return out
}

// Both halves ask for metadata at start, each on its own channel of the
// incarnation's correlation range; every timer is tagged with its half.
func TestHalvesCountTheirCorrelationIdsApartAndTagTheirTimers(t *testing.T) {
	for _, inc := range []uint32{1, 3} {
		env := newEnv(inc)
		n := New(testConfig(false))().(*Node)
		n.Start(env)
		base := proto.CorrelationBase(inc)
		var consumer, prod int
		for _, c := range metadataCorrs(env.sent) {
			switch {
			case c > base && c < base+proto.ProducerChannel && proto.ChannelOf(c) == 0:
				consumer++
			case c > base+proto.ProducerChannel && proto.ChannelOf(c) == 1:
				prod++
			default:
				t.Fatalf("incarnation %d: metadata request %d outside both halves' ranges", inc, c)
			}
		}
		if consumer != 1 || prod != 1 {
			t.Fatalf("incarnation %d: %d consumer and %d producer metadata requests, want one each", inc, consumer, prod)
		}
		for _, tm := range env.timers {
			ht, ok := tm.(htimer)
			if !ok || (ht.tag != 0 && ht.tag != 1) {
				t.Fatalf("timer %v is not tagged with a half", tm)
			}
		}
	}
}

// An answer both halves may get goes by its correlation id's channel: the
// producer's metadata answer makes the producer (not the consumer) go on to
// its producer id; a timer goes back to the half that set it.
func TestAnswersAndTimersGoToTheirHalf(t *testing.T) {
	env := newEnv(1)
	n := New(testConfig(false))().(*Node)
	n.Start(env)
	var prodCorr uint64
	for _, c := range metadataCorrs(env.sent) {
		if proto.ChannelOf(c) == 1 {
			prodCorr = c
		}
	}
	env.sent = nil
	n.Deliver(1, &proto.MetadataResponse{CorrelationID: prodCorr, Brokers: []proto.MetadataBroker{{ID: 1, Node: 1}},
		Topics: []proto.MetadataTopic{{Name: "invoices", Partitions: []proto.MetadataPartition{{Partition: 0, Leader: 1, LeaderEpoch: 1}}}}})
	var init *proto.InitProducerIDRequest
	for _, m := range env.sent {
		if r, ok := m.(*proto.InitProducerIDRequest); ok {
			init = r
		}
		if _, ok := m.(*proto.FetchRequest); ok {
			t.Fatalf("the consumer half acted on the producer's metadata: %T", m)
		}
	}
	if init == nil || proto.ChannelOf(init.CorrelationID) != 1 {
		t.Fatalf("the idempotent producer asked for no producer id on its channel: %v", env.sent)
	}
	// The consumer half's poll timer: firing it polls (the reader half's
	// own timer kind), and the producer half ignores it.
	for _, tm := range append([]sim.Timer(nil), env.timers...) {
		if ht := tm.(htimer); ht.tag == 0 {
			n.Fire(tm)
		}
	}
	if n.Reader() == nil {
		t.Fatal("an at-least-once processor's consumer half starts at once")
	}
}

// An exactly-once processor's consumer half starts only once its producer
// has its transactions initialized; a restarted incarnation is a new
// process whose halves count from the new incarnation's base.
func TestExactlyOnceMemberWaitsForInitTransactions(t *testing.T) {
	env := newEnv(2)
	n := New(testConfig(true))().(*Node)
	n.Start(env)
	if n.Reader() != nil {
		t.Fatal("the member started before InitTransactions completed")
	}
	for _, c := range metadataCorrs(env.sent) {
		if proto.ChannelOf(c) != 1 || c <= proto.CorrelationBase(2) {
			t.Fatalf("before the member starts only the producer asks, on its channel: %d", c)
		}
	}
	n.OnTxnResult(producer.TxnOpInit, history.OK, "")
	if n.Reader() == nil {
		t.Fatal("the member did not start once InitTransactions completed")
	}
	consumer := 0
	for _, c := range metadataCorrs(env.sent) {
		if proto.ChannelOf(c) == 0 {
			consumer++
		}
	}
	if consumer != 1 {
		t.Fatalf("the member sent %d metadata requests on its channel, want 1", consumer)
	}
}

// A fenced producer is created again: its correlation ids move to the next
// producer generation, timers of the old one still reach it, and the
// processor initializes transactions anew before it goes on.
func TestFencedProducerIsCreatedAgain(t *testing.T) {
	env := newEnv(1)
	n := New(testConfig(true))().(*Node)
	n.Start(env)
	n.OnTxnResult(producer.TxnOpInit, history.OK, "")
	first := n.Producer()
	done := false
	n.refence(&txnCommit{done: func(reset bool) { done = reset }})
	if n.Producer() == first || n.old != first || n.pgen != 1 {
		t.Fatalf("the producer was not created again (gen %d)", n.pgen)
	}
	last := metadataCorrs(env.sent)
	if c := last[len(last)-1]; c < proto.ProducerChannel+producerGenerationStep {
		t.Fatalf("the new producer's ids %d overlap the old one's", c)
	}
	if done {
		t.Fatal("the member went on before the new producer was initialized")
	}
	n.OnTxnResult(producer.TxnOpInit, history.OK, "")
	if !done {
		t.Fatal("the member's positions were not reset once the new producer was initialized")
	}
}

// txnOps are the node's transaction operations, as "type f".
func txnOps(rec *history.Recorder) []string {
	var out []string
	for _, op := range rec.Ops() {
		if op.F == history.FTxnBegin || op.F == history.FTxnCommit || op.F == history.FTxnAbort {
			out = append(out, op.Type.String()+" "+op.F)
		}
	}
	return out
}

// Partitions lost (onPartitionsLost) abort the exactly-once processor's
// open transaction, recorded as a txn-abort, and the member goes on once
// the abort ended — here its producer was fenced, so once it is created
// again; with no transaction open, or at-least-once, the member goes on at
// once and nothing is recorded. A loss while a commit is under way waits
// for it (Streams' one thread).
func TestLostAbortsTheOpenTransaction(t *testing.T) {
	for _, c := range []struct {
		name                string
		exactlyOnce, inTxn  bool
		wantOps             []string
		doneBeforeReinit    bool
		wantProducerCreated bool
	}{
		{"at-least-once", false, false, nil, true, false},
		{"no transaction open", true, false, nil, true, false},
		{"transaction open", true, true, []string{"invoke txn-abort", "fail txn-abort"}, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(1)
			cfg := testConfig(c.exactlyOnce)
			n := New(cfg)().(*Node)
			n.Start(env)
			if c.exactlyOnce {
				n.OnTxnResult(producer.TxnOpInit, history.OK, "")
			}
			n.inTxn = c.inTxn
			first := n.Producer()
			done := false
			n.Lost(func() { done = true })
			// The test's producer never got its producer id: its abort
			// fails at once, as a fenced one's does.
			if done != c.doneBeforeReinit {
				t.Fatalf("done %v before the producer was initialized again, want %v", done, c.doneBeforeReinit)
			}
			if created := n.Producer() != first; created != c.wantProducerCreated {
				t.Fatalf("producer created again: %v, want %v", created, c.wantProducerCreated)
			}
			if got := txnOps(cfg.Recorder); !slices.Equal(got, c.wantOps) {
				t.Fatalf("recorded %v, want %v", got, c.wantOps)
			}
			if c.wantProducerCreated {
				n.OnTxnResult(producer.TxnOpInit, history.OK, "")
				if !done || n.inTxn {
					t.Fatalf("done %v, in a transaction %v once the new producer was initialized", done, n.inTxn)
				}
			}
		})
	}
	t.Run("waits for the commit under way", func(t *testing.T) {
		env := newEnv(1)
		n := New(testConfig(true))().(*Node)
		n.Start(env)
		n.OnTxnResult(producer.TxnOpInit, history.OK, "")
		n.busy = true
		done := false
		n.Lost(func() { done = true })
		if done || len(n.waiting) != 1 {
			t.Fatalf("done %v, %d waiting: the loss did not wait for the commit", done, len(n.waiting))
		}
		n.ended(func(bool) {}, false)
		if !done {
			t.Fatal("the loss did not run once the commit ended")
		}
	})
}
