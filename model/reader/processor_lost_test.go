package reader_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"kafkasim/history"
	"kafkasim/model/reader"
	"kafkasim/sim"
)

// listeningProcessor is a stream processor that notes, in the member's
// history order, the forced commits (a revocation's) and the losses it is
// handed.
type listeningProcessor struct {
	rec   *history.Recorder
	calls []string
	// metadata, when set, is the member's GroupMetadata, noted at Lost.
	metadata func() (string, int32, string, string)
}

func (p *listeningProcessor) BeforeProcess()      {}
func (p *listeningProcessor) Output(reader.Input) {}
func (p *listeningProcessor) Commit(_ []reader.Position, force bool, done func(reset bool)) {
	if force {
		p.calls = append(p.calls, fmt.Sprintf("commit-on-revoke after op %d", len(p.rec.Ops())))
	}
	done(false)
}
func (p *listeningProcessor) Lost(done func()) {
	p.calls = append(p.calls, fmt.Sprintf("lost after op %d", len(p.rec.Ops())))
	if p.metadata != nil {
		_, gen, member, _ := p.metadata()
		p.calls = append(p.calls, fmt.Sprintf("metadata gen=%d member=%s", gen, member))
	}
	done()
}

// A consumer-protocol member fenced by its coordinator (its session
// expired) loses its partitions: a stream processor on it hears Lost, not a
// revocation's commit, before the partitions go (Streams' onPartitionsLost
// runs TaskManager.handleLostAll, whose dirty close aborts the exactly-once
// transaction; committing it would commit what was processed under the
// epoch the member lost beside what it processes again from the committed
// offsets once assigned at the next: fuzz seed 42333). A member left alone
// in the group is never handed Lost.
func TestConsumerProcessorHearsLostWhenFenced(t *testing.T) {
	for _, fence := range []bool{false, true} {
		t.Run(fmt.Sprintf("fenced=%v", fence), func(t *testing.T) {
			cfg := consumerMemberConfig("c-0", reader.CommitAfterProcessing)
			b := newCGBroker(2, 5, false)
			gw := newCGWorld(b, cfg)
			proc := &listeningProcessor{rec: gw.rec}
			// newCGWorld built the node's constructor with cfg: set the
			// processor on the group config it shares.
			cfg.Group.Processor = proc
			gw.w.Start()
			gw.w.RunUntil(8 * time.Second)
			if fence {
				b.fenceNext = gw.members[0]
			}
			gw.w.RunUntil(30 * time.Second)

			var lost []string
			for _, c := range proc.calls {
				if strings.HasPrefix(c, "lost") {
					lost = append(lost, c)
				}
			}
			revoke := int64(-1)
			for _, op := range gw.rec.Ops() {
				if op.Process == "c-0" && op.F == history.FRevoke && op.Type == history.Invoke {
					revoke = op.Index
					break
				}
			}
			if !fence {
				if len(proc.calls) > 0 || revoke >= 0 {
					t.Fatalf("a member never fenced heard %v (first revoke #%d)", proc.calls, revoke)
				}
				return
			}
			if len(proc.calls) != 1 || len(lost) != 1 {
				t.Fatalf("the fenced member's processor heard %v, want one Lost and no commit on revoke", proc.calls)
			}
			var at int64
			fmt.Sscanf(lost[0], "lost after op %d", &at)
			if revoke < 0 || at > revoke {
				t.Fatalf("Lost came after op %d, the partitions were dropped at #%d: want Lost first", at, revoke)
			}
			got := ops(gw.rec, "c-0", history.FAssign, history.FRevoke)
			if !slices.Contains(got, "ok revoke [orders-0 orders-1] gen=1") || !slices.Contains(got, "ok assign [orders-0 orders-1] gen=3") {
				t.Fatalf("c-0's operations:\n%s\nwant the partitions lost at epoch 1 and assigned again at 3", strings.Join(got, "\n"))
			}
		})
	}
}

// firstRevoke is the index of a process's first revoke invocation (-1:
// none).
func firstRevoke(rec *history.Recorder, process string) int64 {
	for _, op := range rec.Ops() {
		if op.Process == process && op.F == history.FRevoke && op.Type == history.Invoke {
			return op.Index
		}
	}
	return -1
}

// A classic member that lost its generation (its poll timer expired: it
// left the group) gives its partitions up as lost at its next join
// (ConsumerCoordinator.onJoinPrepare): its stream processor hears Lost, not
// a commit, before they go. A member still in its generation revoking
// everything for an eager rebalance commits first, as before.
func TestClassicProcessorHearsLostOnlyWhenItsGenerationWasReset(t *testing.T) {
	t.Run("poll timer expired", func(t *testing.T) {
		cfg := memberConfig("c-0", reader.CommitAfterProcessing)
		cfg.MaxPollRecords = 5
		cfg.Group.MaxPollInterval = 2 * time.Second
		cfg.Group.Processing = sim.Fixed(time.Second)
		gw := newGroupWorld(1, 10, cfg)
		proc := &listeningProcessor{rec: gw.rec}
		cfg.Group.Processor = proc // the group config the node shares
		gw.w.Start()
		gw.w.RunUntil(time.Millisecond)
		proc.metadata = gw.member(0).GroupMetadata
		gw.w.RunUntil(8 * time.Second)
		revoke := firstRevoke(gw.rec, "c-0")
		if len(proc.calls) < 2 || revoke < 0 {
			t.Fatalf("heard %v, first revoke #%d: want the partition lost", proc.calls, revoke)
		}
		var at int64
		if _, err := fmt.Sscanf(proc.calls[0], "lost after op %d", &at); err != nil || at > revoke {
			t.Fatalf("heard %v first, the partition dropped at #%d: want Lost before it", proc.calls, revoke)
		}
		// The generation is reset, but what sendOffsetsToTransaction
		// carries is still the last join's (ConsumerCoordinator sets it in
		// onJoinComplete only): a commit from here is refused as a stale
		// member's, not taken as one without a generation.
		var revoked string
		for _, op := range ops(gw.rec, "c-0", history.FRevoke) {
			if strings.HasPrefix(op, "ok revoke") {
				revoked = op
				break
			}
		}
		gen, member := int32(0), ""
		if _, err := fmt.Sscanf(proc.calls[1], "metadata gen=%d member=%s", &gen, &member); err != nil || gen < 1 || member == "" ||
			!strings.HasSuffix(revoked, fmt.Sprintf("gen=%d", gen)) {
			t.Fatalf("at Lost the group metadata was %q; the partitions were revoked as %q: want the generation they were held in", proc.calls[1], revoked)
		}
	})
	t.Run("eager rebalance", func(t *testing.T) {
		c0 := memberConfig("c-0", reader.CommitAfterProcessing, rangeAssignor{})
		c1 := memberConfig("c-1", reader.CommitAfterProcessing, rangeAssignor{})
		c1.Start = 20 * time.Second
		gw := newGroupWorld(4, 5, c0, c1)
		proc := &listeningProcessor{rec: gw.rec}
		c0.Group.Processor = proc
		gw.w.Start()
		gw.w.RunUntil(40 * time.Second)
		revoke := firstRevoke(gw.rec, "c-0")
		if len(proc.calls) != 1 || !strings.HasPrefix(proc.calls[0], "commit-on-revoke") || revoke < 0 {
			t.Fatalf("heard %v, first revoke #%d: want one commit on revoke and no Lost", proc.calls, revoke)
		}
	})
}
