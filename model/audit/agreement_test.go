package audit

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"kafkasim/model/metadata"
	"kafkasim/model/partlog"
	"kafkasim/model/record"
	"kafkasim/sim"
)

// referenceAgreesUpTo is agreesUpTo as it was before it remembered
// anything: a walk over every committed batch the log's start has not
// passed.
func referenceAgreesUpTo(p *partitionAudit, log *partlog.Log, flipped bool) int64 {
	end := log.LEO()
	i, _ := p.committedAt(log.LogStartOffset())
	cursor := log.Cursor(log.LogStartOffset())
	for ; i < p.committed.Len() && p.committed.At(i).base < end; i++ {
		k := *p.committed.At(i)
		if b := cursor.At(k.base); (b != nil && !keyOf(b).same(k)) || (b == nil && flipped) {
			return k.base
		}
	}
	return end
}

// referenceFirstLost is PartitionLeader's walk as it was before it
// remembered anything.
func referenceFirstLost(p *partitionAudit, log *partlog.Log, flipped bool) int {
	start := log.LogStartOffset()
	cursor := log.Cursor(start)
	for i := range p.committed.Len() {
		k := *p.committed.At(i)
		if k.last() < start {
			continue
		}
		b := cursor.At(k.base)
		if b == nil && cleaned(log, k.base) && !flipped {
			continue
		}
		if b == nil || !keyOf(b).same(k) {
			return i
		}
	}
	return -1
}

// referenceJoinMissing is ISRJoined's walk as it was before it remembered
// anything.
func referenceJoinMissing(p *partitionAudit, ll, ml *partlog.Log) int64 {
	from := max(ml.LogStartOffset(), ll.LogStartOffset())
	missing := int64(-1)
	cursor := ml.Cursor(from)
	ll.Scan(from, p.ackedUpTo+1, func(b *record.Batch) bool {
		got := cursor.At(b.BaseOffset)
		if got == nil && cleaned(ml, b.BaseOffset) {
			return true
		}
		if got != b && (got == nil || !keyOf(got).same(keyOf(b))) {
			missing = b.BaseOffset
			return false
		}
		return true
	})
	return missing
}

// agreementWorld is brokers 1..n, each with a replica log of orders-0, and
// the audit of what was committed in it.
type agreementWorld struct {
	w     *sim.World
	a     *Audit
	p     *partitionAudit
	ids   []sim.NodeID
	nodes []*diskNode
	logs  []*partlog.Log
	cfg   partlog.Config
	epoch int32
	seq   int
}

func newAgreementWorld(n int, cfg partlog.Config) *agreementWorld {
	w := sim.NewWorld(sim.DefaultOptions(1))
	g := &agreementWorld{w: w, cfg: cfg, nodes: make([]*diskNode, n)}
	for i := range n {
		g.ids = append(g.ids, w.AddNode(sim.NodeSpec{Name: fmt.Sprintf("broker-%d", i+1), Role: "broker",
			New: func() sim.Node { g.nodes[i] = &diskNode{}; return g.nodes[i] }}))
	}
	w.Start()
	w.RunUntil(0)
	for i := range n {
		l, _ := partlog.Open(g.nodes[i].env.Disk(), g.nodes[i].gate, "data/orders-0", cfg, partlog.Checkpoints{})
		g.logs = append(g.logs, l)
	}
	g.a = New(w)
	g.a.SetReplicas(func(broker int32, _ metadata.TopicPartition) *partlog.Log { return g.logs[broker-1] })
	g.p = g.a.part(tpOrders)
	return g
}

// batch is a new single-record batch at offset in epoch, keyed for the
// cleaner.
func (g *agreementWorld) batch(offset int64, epoch int32) *record.Batch {
	g.seq++
	return record.New([]record.Record{{Key: fmt.Sprintf("k%d", g.seq%7), HasKey: true, Value: fmt.Sprintf("v%d", g.seq)}},
		record.Producer{ID: record.NoProducer}, false, record.CompressionNone).Stamped(offset, epoch)
}

// settle lets pending fsyncs complete.
func (g *agreementWorld) settle() { g.w.RunUntil(g.w.Now() + time.Second) }

// check compares, for broker, what the audit finds now with what the
// whole walks find.
func (g *agreementWorld) check(t *rapid.T, broker int32, flipped bool) {
	l := g.logs[broker-1]
	if rapid.Bool().Draw(t, "agreesUpTo") {
		want := referenceAgreesUpTo(g.p, l, flipped)
		if got := g.p.agreesUpTo(broker, l, flipped); got != want {
			t.Fatalf("broker %d (flipped %v): agrees up to %d, the whole walk says %d", broker, flipped, got, want)
		}
		return
	}
	want := referenceFirstLost(g.p, l, flipped)
	if got := g.p.firstLost(broker, l, flipped); got != want {
		t.Fatalf("broker %d (flipped %v, compacted %v): first lost %d, the whole walk says %d", broker, flipped, l.Compacted(), got, want)
	}
}

// The audit's comparisons of a replica's log with what was committed, and
// of a member's log with its leader's when it joins the ISR, look only at
// what may have changed since the last one (agreement.go): they must find
// what a walk over the whole logs and every committed batch finds, through appends (many, across index blocks and segments),
// followers copying, truncations, restarts that lose the page cache or
// keep it, retention, compaction, cleanup policy changes and committed
// data lost.
func TestAgreementFindsWhatTheWholeWalkFinds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := partlog.DefaultConfig()
		cfg.SegmentBytes = rapid.SampledFrom([]int64{1 << 30, 64 << 10, 2 << 10}).Draw(t, "segment.bytes")
		cfg.Compact = rapid.Bool().Draw(t, "compact")
		cfg.RetentionBytes = -1
		n := rapid.IntRange(1, 3).Draw(t, "brokers")
		g := newAgreementWorld(n, cfg)
		broker := func() int32 { return int32(rapid.IntRange(1, n).Draw(t, "broker")) }
		t.Repeat(map[string]func(*rapid.T){
			"": func(t *rapid.T) {
				b := broker()
				g.check(t, b, rapid.IntRange(0, 4).Draw(t, "flipped") == 0)
				if leader, member := broker(), broker(); leader != member {
					ll, ml := g.logs[leader-1], g.logs[member-1]
					want := referenceJoinMissing(g.p, ll, ml)
					if got := g.p.joinMissing(leader, member, ll, ml); got != want {
						t.Fatalf("broker %d joining broker %d's ISR (acknowledged up to %d): missing %d, the whole walk says %d",
							member, leader, g.p.ackedUpTo, got, want)
					}
				}
			},
			"acknowledge": func(t *rapid.T) {
				g.p.ackedUpTo = rapid.Int64Range(-1, g.logs[broker()-1].LEO()).Draw(t, "acknowledged up to")
			},
			"append": func(t *rapid.T) {
				l := g.logs[broker()-1]
				if rapid.IntRange(0, 3).Draw(t, "new epoch") == 0 {
					g.epoch++
				}
				count := rapid.IntRange(1, 40).Draw(t, "count")
				if rapid.IntRange(0, 20).Draw(t, "many") == 0 {
					count = rapid.IntRange(1000, 5000).Draw(t, "count")
				}
				for range count {
					if err := l.Append([]*record.Batch{g.batch(l.LEO(), g.epoch)}, true); err != nil {
						t.Fatal(err)
					}
				}
			},
			"copy": func(t *rapid.T) {
				from, to := g.logs[broker()-1], g.logs[broker()-1]
				var bs []*record.Batch
				for _, b := range from.Batches(to.LEO()) {
					if b.BaseOffset >= to.LEO() {
						bs = append(bs, b)
					}
				}
				if len(bs) > 0 {
					if err := to.Append(bs, false); err != nil {
						t.Fatal(err)
					}
				}
			},
			"commit": func(t *rapid.T) {
				l := g.logs[broker()-1]
				limit := rapid.IntRange(1, 100).Draw(t, "batches")
				l.Scan(g.p.committedEnd(), l.LEO(), func(b *record.Batch) bool {
					if b.BaseOffset >= g.p.committedEnd() {
						g.p.committed.Append(keyOf(b))
						limit--
					}
					return limit > 0
				})
			},
			"lose": func(t *rapid.T) {
				if g.p.committed.Len() == 0 {
					t.Skip("nothing committed")
				}
				i := rapid.IntRange(0, g.p.committed.Len()-1).Draw(t, "from")
				g.a.lose(tpOrders, g.p, i, broker(), 0, CommittedDataKept, "lost in the test")
			},
			"truncate": func(t *rapid.T) {
				l := g.logs[broker()-1]
				skipPastLogEnd(t, l)
				l.TruncateTo(rapid.Int64Range(l.LogStartOffset(), l.LEO()).Draw(t, "to"))
			},
			"truncate fully": func(t *rapid.T) {
				l := g.logs[broker()-1]
				l.TruncateFullyAndStartAt(rapid.Int64Range(0, l.LEO()+5).Draw(t, "start"))
			},
			"flush": func(t *rapid.T) {
				g.logs[broker()-1].Flush()
				g.settle()
			},
			"restart": func(t *rapid.T) {
				b := broker()
				l := g.logs[b-1]
				start := l.LogStartOffset()
				if rapid.Bool().Draw(t, "older log start") {
					start = rapid.Int64Range(0, start).Draw(t, "log start")
				}
				g.w.Crash(g.ids[b-1], rapid.Bool().Draw(t, "power loss"))
				g.w.Restart(g.ids[b-1])
				nd := g.nodes[b-1]
				g.logs[b-1], _ = partlog.Open(nd.env.Disk(), nd.gate, "data/orders-0", l.Config(),
					partlog.Checkpoints{LogStart: start, RecoveryPoint: l.RecoveryPoint})
			},
			"retention": func(t *rapid.T) {
				l := g.logs[broker()-1]
				if rapid.Bool().Draw(t, "whole segments") {
					l.DeleteOldSegments(l.LEO(), int64(g.w.Now()/time.Millisecond)+int64(8*24*time.Hour/time.Millisecond))
					return
				}
				skipPastLogEnd(t, l)
				l.MaybeIncrementLogStartOffset(rapid.Int64Range(l.LogStartOffset(), l.LEO()).Draw(t, "log start"))
			},
			"compact": func(t *rapid.T) {
				l := g.logs[broker()-1]
				l.Compact(rapid.Int64Range(0, l.LEO()).Draw(t, "hw"))
			},
			"cleanup.policy": func(t *rapid.T) {
				l := g.logs[broker()-1]
				c := l.Config()
				c.Compact = !c.Compact
				l.UpdateConfig(c)
			},
		})
	})
}

// restart restarts broker's replica: a process killed (page cache kept) or
// a machine down, its log opened again with the log start checkpointed.
func (g *agreementWorld) restart(broker int32, powerLoss bool, logStart int64) {
	l := g.logs[broker-1]
	g.w.Crash(g.ids[broker-1], powerLoss)
	g.w.Restart(g.ids[broker-1])
	nd := g.nodes[broker-1]
	g.logs[broker-1], _ = partlog.Open(nd.env.Disk(), nd.gate, "data/orders-0", l.Config(),
		partlog.Checkpoints{LogStart: logStart, RecoveryPoint: l.RecoveryPoint})
}

// A replica whose log start had passed a batch that differs from the
// committed one, back from a restart that kept its log (whole index blocks
// shared with the log before: the comparison's memory of it holds) but
// with an older log start: the batch counts again, and is found.
func TestAgreementComparesAgainWhatAnOlderLogStartBringsBack(t *testing.T) {
	g := newAgreementWorld(2, partlog.DefaultConfig())
	x := g.batch(0, 0)
	for i := range 5000 {
		b := g.batch(int64(i), 0)
		if err := g.logs[0].Append([]*record.Batch{b}, true); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			b = x // broker 2 holds another batch at 0
		}
		if err := g.logs[1].Append([]*record.Batch{b}, false); err != nil {
			t.Fatal(err)
		}
		g.p.committed.Append(keyOf(g.logs[0].BatchAt(int64(i))))
	}
	g.p.ackedUpTo = 4999
	g.logs[1].MaybeIncrementLogStartOffset(1)
	if got := g.p.firstLost(2, g.logs[1], false); got != -1 {
		t.Fatalf("first lost %d, want none: the differing batch is below the log start", got)
	}
	if got := g.p.joinMissing(1, 2, g.logs[0], g.logs[1]); got != -1 {
		t.Fatalf("joining the ISR, missing %d, want none: the differing batch is below the log start", got)
	}
	g.restart(2, false, 0)
	l := g.logs[1]
	if l.LogStartOffset() != 0 {
		t.Fatalf("log start %d after the restart, want 0", l.LogStartOffset())
	}
	if below := unchangedBelow(g.p.agreementOf(2).runs, l, 0); below < indexBlock {
		t.Fatalf("unchanged below %d after a restart that kept the log, want at least a whole index block (%d)", below, indexBlock)
	}
	if got, want := g.p.firstLost(2, l, false), referenceFirstLost(g.p, l, false); got != 0 || want != 0 {
		t.Fatalf("first lost %d (the whole walk: %d), want 0: the log start went back past the differing batch", got, want)
	}
	if got, want := g.p.joinMissing(1, 2, g.logs[0], l), referenceJoinMissing(g.p, g.logs[0], l); got != 0 || want != 0 {
		t.Fatalf("joining the ISR, missing %d (the whole walk: %d), want 0: the log start went back past the differing batch", got, want)
	}
}

// A member whose cleaner removed batches its leader still holds joins the
// ISR: the gaps are the cleaner's. Once its topic no longer compacts,
// the same gaps (its log unchanged since) are batches it lacks.
func TestJoinAgreementGapsCountOnceTheMemberNoLongerCompacts(t *testing.T) {
	cfg := partlog.DefaultConfig()
	cfg.Compact, cfg.SegmentBytes = true, 2<<10
	g := newAgreementWorld(2, cfg)
	for range 100 {
		b := g.batch(g.logs[0].LEO(), 0)
		for _, l := range g.logs {
			if err := l.Append([]*record.Batch{b}, l == g.logs[0]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if g.logs[1].Compact(g.logs[1].LEO()) == 0 {
		t.Fatal("the member's cleaner removed nothing")
	}
	g.p.ackedUpTo = g.logs[0].LEO() - 1
	if got := g.p.joinMissing(1, 2, g.logs[0], g.logs[1]); got != -1 {
		t.Fatalf("missing %d, want none: the member's cleaner removed what it lacks", got)
	}
	c := g.logs[1].Config()
	c.Compact = false
	g.logs[1].UpdateConfig(c)
	want := referenceJoinMissing(g.p, g.logs[0], g.logs[1])
	if want < 0 {
		t.Fatal("the whole walk finds nothing missing")
	}
	if got := g.p.joinMissing(1, 2, g.logs[0], g.logs[1]); got != want {
		t.Fatalf("missing %d, the whole walk says %d", got, want)
	}
}

// indexBlock is how many batches partlog keeps in one run (a block of its
// index) once a segment holds more than one.
const indexBlock = 4096

// skipPastLogEnd skips an action that draws an offset between the log
// start and the log end when a truncation inside a batch left the log end
// below the log start (fuzz of the generator: a range [1, 0]).
func skipPastLogEnd(t *rapid.T, l *partlog.Log) {
	if l.LogStartOffset() > l.LEO() {
		t.Skip("log start past the log end")
	}
}
