package reader_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"kafkasim/history"
	"kafkasim/model/proto"
	"kafkasim/model/reader"
	"kafkasim/sim"
)

// resettingProcessor is a stream processor whose first unit of work with
// records fails: its Commit asks the member to put its positions back to
// the committed offsets (Streams' TaskCorruptedException); every later one
// succeeds.
type resettingProcessor struct {
	outputs, resets int
}

func (p *resettingProcessor) BeforeProcess()      {}
func (p *resettingProcessor) Output(reader.Input) { p.outputs++ }
func (p *resettingProcessor) Lost(done func())    { done() }
func (p *resettingProcessor) Commit(_ []reader.Position, _ bool, done func(reset bool)) {
	if p.outputs > 0 && p.resets == 0 {
		p.resets++
		done(true)
		return
	}
	done(false)
}

// ownershipAuditor records the ownership changes a member tells the group
// audit.
type ownershipAuditor struct{ calls []string }

func (a *ownershipAuditor) PartitionsAssigned(_ sim.NodeID, _, memberID string, gen int32, _ bool, owned []proto.TopicPartition) {
	a.calls = append(a.calls, fmt.Sprintf("assigned %v %s gen=%d", owned, memberID, gen))
}
func (a *ownershipAuditor) PartitionsRevoked(_ sim.NodeID, _ string, tps []proto.TopicPartition) {
	a.calls = append(a.calls, fmt.Sprintf("revoked %v", tps))
}
func (a *ownershipAuditor) PositionReset(sim.NodeID, string, proto.TopicPartition)     {}
func (a *ownershipAuditor) PositionTruncated(sim.NodeID, string, proto.TopicPartition) {}

// A processor's failed unit of work puts the member's positions back to the
// committed offsets: the history shows the member's session of each
// partition end and start again (revoke, assign), but the group audit hears
// no revocation and no grant — Streams' TaskManager.handleCorruption closes
// the tasks dirty and revives them, and the consumer's assignment does not
// change. Told as a grant, a member whose generation the coordinator forgot
// after __consumer_offsets lost the group claimed again, under its old
// member id and generation, a partition the reloaded group had given
// another member in the reused generation number (fuzz: processors, seed 9).
func TestProcessorResetToCommittedIsNoGrant(t *testing.T) {
	cfg := memberConfig("c-0", reader.CommitAfterProcessing)
	proc := &resettingProcessor{}
	aud := &ownershipAuditor{}
	cfg.Group.Processor, cfg.Group.Audit = proc, aud
	gw := newGroupWorld(1, 5, cfg)
	gw.w.Start()
	gw.w.RunUntil(10 * time.Second)
	if proc.resets != 1 {
		t.Fatalf("%d resets, want 1", proc.resets)
	}
	got := ops(gw.rec, "c-0", history.FAssign, history.FRevoke)
	want := []string{
		"invoke assign [orders-0] gen=1", "ok assign [orders-0] gen=1",
		"invoke revoke [orders-0] gen=1", "ok revoke [orders-0] gen=1",
		"invoke assign [orders-0] gen=1", "ok assign [orders-0] gen=1",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("history:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if want := []string{"assigned [orders-0] m1 gen=1"}; !slices.Equal(aud.calls, want) {
		t.Fatalf("the audit heard %v, want only the join's grant %v", aud.calls, want)
	}
	// The positions went back: every record is processed twice.
	if got := only(ops(gw.rec, "c-0", history.FProcess), "ok process"); len(got) != 10 {
		t.Fatalf("processed %d times, want the 5 records twice:\n%s", len(got), strings.Join(got, "\n"))
	}
}
