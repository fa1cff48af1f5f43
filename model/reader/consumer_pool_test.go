package reader_test

import (
	"testing"
	"time"

	"kafkasim/history"
	"kafkasim/model/reader"
	"kafkasim/sim"
)

// consumerPoolConfig is a consumer-protocol member with a worker pool.
func consumerPoolConfig(name string, commit reader.CommitMode, workers int, processing sim.Range) reader.Config {
	cfg := consumerMemberConfig(name, commit)
	cfg.Group.Workers, cfg.Group.Processing = workers, processing
	cfg.MaxPollRecords = 10
	return cfg
}

// A consumer-protocol member's revocation goes through the same listener
// as a classic member's: at-most-once, with a pool, it committed past its
// records before handing them over, so the commit on revoke must not
// commit the prefix its workers finished, which lies below (fuzz seed 203:
// the commit of 43 was followed by one of 42 on revoke, and the next owner
// processed 42 again).
func TestConsumerPoolBeforeProcessingNeverCommitsBack(t *testing.T) {
	slow := sim.Range{Min: 100 * time.Millisecond, Max: 300 * time.Millisecond}
	c0 := consumerPoolConfig("c-0", reader.CommitBeforeProcessing, 4, slow)
	c1 := consumerPoolConfig("c-1", reader.CommitBeforeProcessing, 4, slow)
	c1.Start = 2 * time.Second
	b := newCGBroker(4, 40, false)
	gw := newCGWorld(b, c0, c1)
	gw.w.Start()
	gw.w.RunUntil(40 * time.Second)
	last := map[string]int64{}
	for _, name := range []string{"c-0", "c-1"} {
		for _, c := range commitsOf(gw.rec, name) {
			for tp, off := range c.Value.Ext.Offsets { // kafkasim:orderless: each checked alone
				if off < last[tp] {
					t.Fatalf("%s committed %s=%d after %d", name, tp, off, last[tp])
				}
				last[tp] = off
			}
		}
	}
	if n := len(only(ops(gw.rec, "c-0", history.FRevoke), "ok ")); n == 0 {
		t.Fatal("c-0 revoked nothing: the test shows nothing")
	}
}

// At-least-once, with a pool, a consumer-protocol member's listener waits
// for the records in processing of the partitions it gives up before it
// commits their prefixes: no record is committed past while in processing,
// and every record is processed once.
func TestConsumerPoolRevocationDrainsInFlightRecordsBeforeItCommits(t *testing.T) {
	slow := sim.Range{Min: 100 * time.Millisecond, Max: 300 * time.Millisecond}
	c0 := consumerPoolConfig("c-0", reader.CommitAfterProcessing, 4, slow)
	c1 := consumerPoolConfig("c-1", reader.CommitAfterProcessing, 4, slow)
	c1.Start = 2 * time.Second
	b := newCGBroker(4, 40, false)
	gw := newCGWorld(b, c0, c1)
	gw.w.Start()
	gw.w.RunUntil(40 * time.Second)

	ps := processings(gw.rec)
	var revoke, listenerCommit history.Op
	for _, op := range gw.rec.Ops() {
		if op.Process != "c-0" {
			continue
		}
		if op.F == history.FRevoke && op.Type == history.OK && revoke.F == "" {
			revoke = op
		}
		if revoke.F == "" && op.F == history.FCommit && op.Type == history.Invoke {
			listenerCommit = op
		}
	}
	if revoke.F == "" || listenerCommit.F == "" {
		t.Fatalf("c-0's revoke %v after commit %v: want a revocation with its commit", revoke, listenerCommit)
	}
	for _, p := range ps {
		if p.process == "c-0" && p.start < listenerCommit.Index && (p.end < 0 || p.end > listenerCommit.Index) {
			t.Fatalf("c-0 committed on revoke (#%d) with orders-%d@%d in processing", listenerCommit.Index, p.partition, p.offset)
		}
	}
	done := map[[2]int64]int{}
	for _, p := range ps {
		if p.okEnd {
			done[[2]int64{int64(p.partition), p.offset}]++
		}
	}
	for part := range int64(4) {
		for off := range int64(40) {
			if n := done[[2]int64{part, off}]; n != 1 {
				t.Fatalf("orders-%d@%d processed %d times, want once", part, off, n)
			}
		}
	}
}
