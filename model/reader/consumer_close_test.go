package reader_test

import (
	"strings"
	"testing"
	"time"

	"kafkasim/history"
	"kafkasim/model/reader"
)

// A consumer-protocol member committing before processing is closed while
// its commit past a batch is in flight: the close unsubscribes, which runs
// onPartitionsRevoked at once. Its commit on revoke must not commit what it
// processed: that lies below the commit in flight, which would be
// overwritten, and the next owner would process the batch again (fuzz
// seeds 100813 and 101346 with --groups). The group's committed offset
// ends at the highest the member had acknowledged.
func TestConsumerMemberClosedMidCommitBeforeProcessingKeepsItsCommit(t *testing.T) {
	c0 := consumerMemberConfig("c-0", reader.CommitBeforeProcessing)
	c0.MaxPollRecords = 2
	b := newCGBroker(1, 40, false)
	gw := newCGWorld(b, c0)
	stopped, seen, commits := false, 0, 0
	gw.w.SetAfterEvent(func() {
		ops := gw.rec.Ops()
		for ; seen < len(ops); seen++ {
			op := ops[seen]
			if stopped || op.Process != "c-0" || op.F != history.FCommit || op.Type != history.Invoke {
				continue
			}
			// The third commit: the member is well into its partition.
			if commits++; commits == 3 {
				stopped = true
				gw.w.Shutdown(gw.members[0])
			}
		}
	})
	gw.w.Start()
	gw.w.RunUntil(20 * time.Second)
	if !stopped {
		t.Fatal("c-0 made no third commit to close it in")
	}
	got := ops(gw.rec, "c-0", history.FCommit, history.FProcess, history.FRevoke)
	acked := int64(-1)
	for _, op := range gw.rec.Ops() {
		if op.Process == "c-0" && op.F == history.FCommit && op.Type == history.OK {
			acked = max(acked, op.Value.Ext.Offsets["orders-0"])
		}
	}
	if c := b.committed["orders-0"]; acked < 0 || c.CommittedOffset != acked {
		t.Fatalf("orders-0 committed at %d, but c-0's commits were acknowledged up to %d:\n%s", c.CommittedOffset, acked,
			strings.Join(got[max(len(got)-12, 0):], "\n"))
	}
}
