package reader_test

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"kafkasim/history"
	"kafkasim/model/extstore"
	"kafkasim/model/reader"
	"kafkasim/sim"
)

// storeWorld is a group world with an external store node of the given
// mode, which every member writes its side effects to.
func storeWorld(mode extstore.Mode, partitions, records int, cfgs ...reader.Config) (*groupWorld, sim.NodeID) {
	gw := &groupWorld{w: sim.NewWorld(sim.DefaultOptions(1)), b: newGroupBroker(partitions, records)}
	bid := gw.w.AddNode(sim.NodeSpec{Name: "broker-1", Role: "broker", New: func() sim.Node { return gw.b }})
	store := gw.w.AddNode(sim.NodeSpec{Name: "store", Role: "store", New: extstore.New(mode)})
	gw.rec = history.NewRecorder(gw.w.Now)
	for _, cfg := range cfgs {
		g := *cfg.Group
		g.SideEffects, g.Store = reader.SideEffects(mode.String()), store
		g.RequestTimeout, g.DefaultAPITimeout = time.Second, 3*time.Second
		cfg.Group = &g
		cfg.Brokers, cfg.Recorder = []sim.NodeID{bid}, gw.rec
		gw.members = append(gw.members, gw.w.AddNode(sim.NodeSpec{Name: cfg.Name, Role: "consumer", New: reader.New(cfg)}))
	}
	return gw, store
}

// Each processed record writes its effect, keyed by the record, and its
// processing ends once the store acknowledged: process invoke,
// side-effect invoke and ok (the record's topic, partition, offset, key,
// group, member id), process ok — with one worker and with four.
func TestSideEffectEndsTheRecordsProcessing(t *testing.T) {
	for _, workers := range []int{1, 4} {
		gw, store := storeWorld(extstore.Plain, 1, 6, poolConfig("c-0", reader.CommitAfterProcessing, workers, sim.Fixed(time.Millisecond)))
		gw.w.Start()
		gw.w.RunUntil(5 * time.Second)
		st := gw.w.Node(store).(*extstore.Store)
		for off := range int64(6) {
			key := "orders-0-" + strconv.FormatInt(off, 10)
			var seq []string
			for _, op := range gw.rec.Ops() {
				v := op.Value
				if (op.F != history.FProcess && op.F != history.FSideEffect) || v.Offset != off {
					continue
				}
				seq = append(seq, op.Type.String()+" "+op.F)
				if op.F == history.FSideEffect && (v.Topic != "orders" || v.Partition != 0 || !v.HasKey || v.Key != key ||
					v.Ext == nil || v.Ext.Group != "g" || v.Ext.MemberID != "m1") {
					t.Fatalf("workers %d: side-effect %+v %+v, want orders-0@%d, key %s, group g, member m1", workers, v, v.Ext, off, key)
				}
			}
			if want := []string{"invoke process", "invoke side-effect", "ok side-effect", "ok process"}; !slices.Equal(seq, want) {
				t.Fatalf("workers %d: record %d's operations %v, want %v", workers, off, seq, want)
			}
			if n := st.Applications(key); n != 1 {
				t.Fatalf("workers %d: %s applied %d times", workers, key, n)
			}
		}
		if c := gw.b.committed["orders-0"]; c.CommittedOffset != 6 {
			t.Fatalf("workers %d: committed %d, want 6", workers, c.CommittedOffset)
		}
	}
}

// ackLost runs a member whose store's acknowledgements are cut off for the
// first 1.5 s: the writes reach the store, their answers do not, so the
// member retries them after request.timeout.ms (1 s).
func ackLost(mode extstore.Mode) (*groupWorld, *extstore.Store) {
	gw, store := storeWorld(mode, 1, 3, poolConfig("c-0", reader.CommitAfterProcessing, 1, sim.Fixed(time.Millisecond)))
	cut := gw.w.CutOneWay([]sim.NodeID{store}, gw.members)
	gw.w.Start()
	gw.w.RunUntil(1500 * time.Millisecond)
	gw.w.Heal(cut)
	gw.w.RunUntil(10 * time.Second)
	return gw, gw.w.Node(store).(*extstore.Store)
}

// A write whose acknowledgement was lost is info, and is sent again (a new
// side-effect operation); a plain store applies it twice.
func TestUnacknowledgedWriteIsRetriedAndAPlainStoreAppliesItTwice(t *testing.T) {
	gw, st := ackLost(extstore.Plain)
	got := ops(gw.rec, "c-0", history.FSideEffect)
	if len(got) < 4 || got[0] != "invoke side-effect gen=-1" || !slices.Contains(got, "info side-effect gen=-1 (no answer within request.timeout.ms)") {
		t.Fatalf("side effects %v, want the first attempt timed out (info) and retried", got)
	}
	if n := st.Applications("orders-0-0"); n < 2 {
		t.Fatalf("orders-0-0 applied %d times by the plain store, want the retry applied again", n)
	}
	for _, op := range gw.rec.Ops() {
		if op.F == history.FSideEffect && op.Type == history.OK {
			if x := op.Value.Ext; x == nil || !x.HasApplied || !x.Applied {
				t.Fatalf("a plain store's acknowledgement not recorded as applied: %+v", op.Value.Ext)
			}
		}
	}
	if c := gw.b.committed["orders-0"]; c.CommittedOffset != 3 {
		t.Fatalf("committed %d, want 3", c.CommittedOffset)
	}
}

// The same with an idempotent store: it keeps one effect per record.
func TestIdempotentStoreAppliesARetriedWriteOnce(t *testing.T) {
	gw, st := ackLost(extstore.Idempotent)
	if got := ops(gw.rec, "c-0", history.FSideEffect); !slices.Contains(got, "info side-effect gen=-1 (no answer within request.timeout.ms)") {
		t.Fatalf("side effects %v, want a retry", got)
	}
	for off := range 3 {
		if n := st.Applications("orders-0-" + strconv.Itoa(off)); n != 1 {
			t.Fatalf("orders-0-%d applied %d times by the idempotent store, want once", off, n)
		}
	}
	if st.Stats.Deduplicated == 0 {
		t.Fatal("the idempotent store deduplicated nothing")
	}
	// The history says which acknowledgements applied the effect: a
	// retried write's says it did not (the lost first attempt had). Some
	// deduplicated retries' answers were cut off too.
	notApplied := 0
	for _, op := range gw.rec.Ops() {
		if op.F == history.FSideEffect && op.Type == history.Invoke && op.Value.Ext != nil && op.Value.Ext.HasApplied {
			t.Fatalf("a side-effect's invoke carries the store's answer: %+v", op.Value.Ext)
		}
		if op.F != history.FSideEffect || op.Type != history.OK {
			continue
		}
		if x := op.Value.Ext; x == nil || !x.HasApplied {
			t.Fatalf("side-effect ok without the store's answer: %+v", op.Value)
		} else if !x.Applied {
			notApplied++
		}
	}
	if notApplied == 0 || notApplied > st.Stats.Deduplicated {
		t.Fatalf("%d side-effect oks say not applied, the store deduplicated %d", notApplied, st.Stats.Deduplicated)
	}
}

// A store cut off for longer than default.api.timeout.ms (3 s) fails the
// record's processing (info) after its attempts; the member processes the
// record again once the backoff passed, and commits past it only once a
// write of it was acknowledged.
func TestGivenUpRecordIsProcessedAgain(t *testing.T) {
	for _, workers := range []int{1, 4} {
		gw, store := storeWorld(extstore.Plain, 1, 3, poolConfig("c-0", reader.CommitAfterProcessing, workers, sim.Fixed(time.Millisecond)))
		cut := gw.w.Partition([]sim.NodeID{store}, gw.members)
		gw.w.Start()
		gw.w.RunUntil(4 * time.Second)
		if c, ok := gw.b.committed["orders-0"]; ok {
			t.Fatalf("workers %d: committed %d while no write was acknowledged", workers, c.CommittedOffset)
		}
		gw.w.Heal(cut)
		gw.w.RunUntil(15 * time.Second)
		got := ops(gw.rec, "c-0", history.FProcess)
		want := []string{"invoke process gen=1 orders-0@0", "info process gen=1 orders-0@0 (side effect not acknowledged within default.api.timeout.ms)",
			"invoke process gen=1 orders-0@0"}
		if workers == 1 && (len(got) < 3 || !slices.Equal(got[:3], want)) {
			t.Fatalf("workers 1: processing %v, want it to begin %v", got, want)
		}
		if !slices.Contains(got, want[1]) || !slices.Contains(got, "ok process gen=1 orders-0@0") {
			t.Fatalf("workers %d: processing %v, want record 0 given up, then processed", workers, got)
		}
		if c := gw.b.committed["orders-0"]; c.CommittedOffset != 3 {
			t.Fatalf("workers %d: committed %d, want 3", workers, c.CommittedOffset)
		}
		attempts := 0
		for _, s := range ops(gw.rec, "c-0", history.FSideEffect) {
			if s == "invoke side-effect gen=-1" { // side effects carry no generation
				attempts++
			}
		}
		if given := min(workers, 3); attempts < 3*given+1 {
			t.Fatalf("workers %d: %d write attempts, want three for each of the %d records given up, and more after", workers, attempts, given)
		}
	}
}
