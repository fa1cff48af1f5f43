package reports

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"kafkasim/history"

	"pgregory.net/rapid"
)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func groupValue(group, member string, generation int32, partitions ...string) history.Value {
	v := history.NoValue()
	x := v.X()
	x.Group, x.MemberID, x.Generation, x.Partitions = group, member, generation, partitions
	if x.Partitions == nil {
		x.Partitions = []string{}
	}
	return v
}

// pair appends an operation's invocation and its completion at once, as
// a member records assign, revoke, crash and restart.
func (b *opsBuilder) pair(t time.Duration, process, f string, v history.Value) {
	b.add(t, process, history.Invoke, f, v)
	b.add(t, process, history.OK, f, v)
}

func processValue(group, member string, generation int32, partition int32, offset int64) history.Value {
	v := groupValue(group, member, generation)
	v.Ext.Partitions = nil
	v.Topic, v.Partition, v.Offset = "orders", partition, offset
	return v
}

func commitValue(group string, offsets map[string]int64) history.Value {
	v := history.NoValue()
	v.X().Group, v.X().Offsets = group, offsets
	return v
}

// groupHistory is a 12-second history of two groups on orders-0..2.
//
// billing (classic, eager): c-0, c-1 and c-2 are assigned a partition
// each in generation 1; c-1 crashes at 5 s; the others revoke everything
// (eager) and generation 2 gives c-0 orders-0 and orders-1; c-1 restarts
// at 8 s and generation 3 gives every member one partition again. c-0
// processes orders-0 0..4, then 4 and 5 again after the rebalance, and
// orders-1 1, which c-1 had processed: two records reprocessed. One commit
// is acknowledged, one fails, one is indeterminate.
//
// ledger (cooperative, with member epochs): d-0 owns orders-0 and
// orders-1 at epoch 5 and keeps orders-0 at epoch 6, giving up orders-1,
// which d-1 gets at epoch 7, half a second later; d-1 revokes it at 11 s
// and nobody owns it again.
func groupHistory() []history.Op {
	var b opsBuilder
	b.pair(ms(1000), "c-0", history.FAssign, groupValue("billing", "c-0-a", 1, "orders-0"))
	b.pair(ms(1000), "c-1", history.FAssign, groupValue("billing", "c-1-a", 1, "orders-1"))
	b.pair(ms(1000), "d-0", history.FAssign, groupValue("ledger", "d-0", 5, "orders-0", "orders-1"))
	b.pair(ms(1000), "d-1", history.FAssign, groupValue("ledger", "d-1", 5))
	b.pair(ms(1200), "c-2", history.FAssign, groupValue("billing", "c-2-a", 1, "orders-2"))
	for o := int64(0); o < 5; o++ {
		at := ms(1300 + 100*int(o))
		b.add(at, "c-0", history.Invoke, history.FProcess, processValue("billing", "c-0-a", 1, 0, o))
		b.add(at+ms(50), "c-0", history.OK, history.FProcess, processValue("billing", "c-0-a", 1, 0, o))
	}
	b.add(ms(1900), "c-1", history.Invoke, history.FProcess, processValue("billing", "c-1-a", 1, 1, 1))
	b.add(ms(1950), "c-1", history.OK, history.FProcess, processValue("billing", "c-1-a", 1, 1, 1))
	b.add(ms(2000), "c-0", history.Invoke, history.FCommit, commitValue("billing", map[string]int64{"orders-0": 5}))
	b.add(ms(2100), "c-0", history.OK, history.FCommit, commitValue("billing", map[string]int64{"orders-0": 5}))
	b.pair(ms(3000), "d-0", history.FAssign, groupValue("ledger", "d-0", 6, "orders-0"))
	b.pair(ms(3500), "d-1", history.FAssign, groupValue("ledger", "d-1", 7, "orders-1"))
	b.add(ms(4900), "c-1", history.Invoke, history.FCommit, commitValue("billing", map[string]int64{"orders-1": 2}))
	b.pair(ms(5000), "c-1", history.FCrash, history.NoValue())
	b.add(ms(5000), "c-1", history.Info, history.FCommit, commitValue("billing", map[string]int64{"orders-1": 2}))
	b.pair(ms(5500), "c-0", history.FRevoke, groupValue("billing", "c-0-a", 1, "orders-0"))
	b.pair(ms(5600), "c-2", history.FRevoke, groupValue("billing", "c-2-a", 1, "orders-2"))
	b.add(ms(5700), "c-2", history.Invoke, history.FCommit, commitValue("billing", map[string]int64{"orders-2": 1}))
	b.add(ms(5800), "c-2", history.Fail, history.FCommit, commitValue("billing", map[string]int64{"orders-2": 1}))
	b.pair(ms(6000), "c-0", history.FAssign, groupValue("billing", "c-0-a", 2, "orders-0", "orders-1"))
	b.pair(ms(6100), "c-2", history.FAssign, groupValue("billing", "c-2-a", 2, "orders-2"))
	for _, r := range []struct {
		p int32
		o int64
	}{{0, 4}, {0, 5}, {1, 1}} {
		b.add(ms(6500), "c-0", history.Invoke, history.FProcess, processValue("billing", "c-0-a", 2, r.p, r.o))
		b.add(ms(6600), "c-0", history.OK, history.FProcess, processValue("billing", "c-0-a", 2, r.p, r.o))
	}
	b.pair(ms(8000), "c-1", history.FRestart, history.NoValue())
	b.pair(ms(9000), "c-0", history.FRevoke, groupValue("billing", "c-0-a", 2, "orders-0", "orders-1"))
	b.pair(ms(9000), "c-2", history.FRevoke, groupValue("billing", "c-2-a", 2, "orders-2"))
	b.pair(ms(9500), "c-0", history.FAssign, groupValue("billing", "c-0-a", 3, "orders-0"))
	b.pair(ms(9500), "c-1", history.FAssign, groupValue("billing", "c-1-b", 3, "orders-1"))
	b.pair(ms(9700), "c-2", history.FAssign, groupValue("billing", "c-2-a", 3, "orders-2"))
	b.pair(ms(11000), "d-1", history.FRevoke, groupValue("ledger", "d-1", 7, "orders-1"))
	b.add(ms(12000), "p-0", history.Invoke, history.FSend, sendValue("p-0:1"))
	return b.ops
}

func TestGroupActivitiesOwnershipAndGaps(t *testing.T) {
	acts := GroupActivities(newOps(groupHistory()))
	if len(acts) != 2 || acts[0].Group != "billing" || acts[1].Group != "ledger" {
		t.Fatalf("groups: %+v", acts)
	}
	own := func(group, p, proc, member string, gen int32, from, to int, open bool) Ownership {
		return Ownership{Group: group, Partition: p, Process: proc, MemberID: member, Generation: gen, From: ms(from), To: ms(to), Open: open}
	}
	gap := func(group, p string, gen int32, from, to int, open bool) OwnerGap {
		return OwnerGap{Group: group, Partition: p, Generation: gen, From: ms(from), To: ms(to), Open: open}
	}
	billing := acts[0]
	wantOwners := []Ownership{
		own("billing", "orders-0", "c-0", "c-0-a", 1, 1000, 5500, false),
		own("billing", "orders-0", "c-0", "c-0-a", 2, 6000, 9000, false),
		own("billing", "orders-0", "c-0", "c-0-a", 3, 9500, 12000, true),
		own("billing", "orders-1", "c-1", "c-1-a", 1, 1000, 5000, false), // the crash
		own("billing", "orders-1", "c-0", "c-0-a", 2, 6000, 9000, false),
		own("billing", "orders-1", "c-1", "c-1-b", 3, 9500, 12000, true),
		own("billing", "orders-2", "c-2", "c-2-a", 1, 1200, 5600, false),
		own("billing", "orders-2", "c-2", "c-2-a", 2, 6100, 9000, false),
		own("billing", "orders-2", "c-2", "c-2-a", 3, 9700, 12000, true),
	}
	if !reflect.DeepEqual(billing.Owners, wantOwners) {
		t.Errorf("billing owners:\n got %+v\nwant %+v", billing.Owners, wantOwners)
	}
	wantGaps := []OwnerGap{
		gap("billing", "orders-0", 2, 5500, 6000, false),
		gap("billing", "orders-0", 3, 9000, 9500, false),
		gap("billing", "orders-1", 2, 5000, 6000, false),
		gap("billing", "orders-1", 3, 9000, 9500, false),
		gap("billing", "orders-2", 2, 5600, 6100, false),
		gap("billing", "orders-2", 3, 9000, 9700, false),
	}
	if !reflect.DeepEqual(billing.Gaps, wantGaps) {
		t.Errorf("billing gaps:\n got %+v\nwant %+v", billing.Gaps, wantGaps)
	}
	if got, want := billing.Unowned(), map[string]time.Duration{"orders-0": ms(1000), "orders-1": ms(1500), "orders-2": ms(1200)}; !reflect.DeepEqual(got, want) {
		t.Errorf("billing unowned %v, want %v", got, want)
	}
	per := billing.UnownedPerRebalance()
	if len(per) != 2 || per[2].Total != ms(2000) || per[2].Longest != ms(1000) || per[3].Total != ms(1700) || per[3].Longest != ms(700) {
		t.Errorf("billing per rebalance %+v", per)
	}
	wantRebalances := []Rebalance{{At: ms(1000), Generation: 1, Members: 3}, {At: ms(6000), Generation: 2, Members: 2}, {At: ms(9500), Generation: 3, Members: 3}}
	if !reflect.DeepEqual(billing.Rebalances, wantRebalances) {
		t.Errorf("billing rebalances %+v", billing.Rebalances)
	}
	if billing.CommitsOK != 1 || billing.CommitsFailed != 1 || billing.CommitsIndeterminate != 1 || billing.Processed != 9 || billing.Reprocessed != 2 {
		t.Errorf("billing commits %d/%d/%d, processed %d, reprocessed %d", billing.CommitsOK, billing.CommitsFailed, billing.CommitsIndeterminate, billing.Processed, billing.Reprocessed)
	}
	if !reflect.DeepEqual(billing.Partitions, []string{"orders-0", "orders-1", "orders-2"}) || billing.End != ms(12000) {
		t.Errorf("billing partitions %v, end %v", billing.Partitions, billing.End)
	}

	ledger := acts[1]
	wantOwners = []Ownership{
		own("ledger", "orders-0", "d-0", "d-0", 5, 1000, 3000, false),
		own("ledger", "orders-0", "d-0", "d-0", 6, 3000, 12000, true), // kept: no gap
		own("ledger", "orders-1", "d-0", "d-0", 5, 1000, 3000, false),
		own("ledger", "orders-1", "d-1", "d-1", 7, 3500, 11000, false),
	}
	if !reflect.DeepEqual(ledger.Owners, wantOwners) {
		t.Errorf("ledger owners:\n got %+v\nwant %+v", ledger.Owners, wantOwners)
	}
	wantGaps = []OwnerGap{gap("ledger", "orders-1", 7, 3000, 3500, false), gap("ledger", "orders-1", -1, 11000, 12000, true)}
	if !reflect.DeepEqual(ledger.Gaps, wantGaps) {
		t.Errorf("ledger gaps:\n got %+v\nwant %+v", ledger.Gaps, wantGaps)
	}
	if per := ledger.UnownedPerRebalance(); len(per) != 1 || per[7].Total != ms(500) {
		t.Errorf("ledger per rebalance %+v (the open gap belongs to none)", per)
	}
	wantRebalances = []Rebalance{{At: ms(1000), Generation: 5, Members: 2}, {At: ms(3000), Generation: 6, Members: 1}, {At: ms(3500), Generation: 7, Members: 1}}
	if !reflect.DeepEqual(ledger.Rebalances, wantRebalances) {
		t.Errorf("ledger rebalances %+v", ledger.Rebalances)
	}
}

func TestGroupActivitiesWithoutGroups(t *testing.T) {
	r, _ := syntheticRun()
	if acts := GroupActivities(r.history()); acts != nil {
		t.Fatalf("a history without group operations: %+v", acts)
	}
}

func TestGroupLag(t *testing.T) {
	var b opsBuilder
	for o := 0; o < 10; o++ {
		b.add(ms(100*o), "p-0", history.Invoke, history.FSend, sendValue(fmt.Sprint("p-0:", o)))
		b.add(ms(100*(o+1)), "p-0", history.OK, history.FSend, ackValue(fmt.Sprint("p-0:", o), 0, int64(o)))
	}
	b.add(ms(1900), "c-0", history.Invoke, history.FCommit, commitValue("billing", map[string]int64{"orders-0": 5}))
	b.add(ms(2000), "c-0", history.OK, history.FCommit, commitValue("billing", map[string]int64{"orders-0": 5}))
	b.add(ms(2400), "c-1", history.Invoke, history.FPoll, history.NoValue())
	b.add(ms(2500), "c-1", history.OK, history.FPoll, pollValue(history.Record{Topic: "orders", Partition: 1, Offset: 3, Value: "x"}))
	b.add(ms(2900), "c-1", history.Invoke, history.FCommit, commitValue("billing", map[string]int64{"orders-1": 2}))
	b.add(ms(3000), "c-1", history.OK, history.FCommit, commitValue("billing", map[string]int64{"orders-1": 2}))
	// A commit that failed moves nothing.
	b.add(ms(3100), "c-1", history.Invoke, history.FCommit, commitValue("billing", map[string]int64{"orders-1": 4}))
	b.add(ms(3200), "c-1", history.Fail, history.FCommit, commitValue("billing", map[string]int64{"orders-1": 4}))
	b.add(ms(3900), "c-0", history.Invoke, history.FCommit, commitValue("billing", map[string]int64{"orders-0": 10}))
	b.add(ms(4000), "c-0", history.OK, history.FCommit, commitValue("billing", map[string]int64{"orders-0": 10}))
	// A transaction's offsets count once its txn-commit is acknowledged.
	txn := history.NoValue()
	txn.X().Group, txn.X().Offsets, txn.X().TransactionalID = "ledger", map[string]int64{"orders-0": 7}, "t-0"
	b.add(ms(4500), "t-0", history.Invoke, history.FTxnCommit, txn)
	done := history.NoValue()
	done.X().TransactionalID = "t-0"
	b.add(ms(4600), "t-0", history.OK, history.FTxnCommit, done)

	times := []time.Duration{ms(500), ms(2000), ms(2900), ms(3000), ms(3500), ms(4000), ms(4550), ms(4600)}
	lag := GroupLag(newOps(b.ops), []string{"billing", "ledger", "idle"}, times)
	want := [][]float64{
		{0, 5, 5, 7, 7, 2, 2, 2},
		{0, 0, 0, 0, 0, 0, 0, 3},
		{0, 0, 0, 0, 0, 0, 0, 0},
	}
	if !reflect.DeepEqual(lag, want) {
		t.Fatalf("lag\n got %v\nwant %v", lag, want)
	}
}

// rangeSet against a map: add reports exactly the offsets not added before.
func TestRangeSet(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var s rangeSet
		seen := map[int64]bool{}
		for _, o := range rapid.SliceOf(rapid.Int64Range(0, 40)).Draw(t, "offsets") {
			if got := s.add(o); got != !seen[o] {
				t.Fatalf("add(%d) = %v after %v", o, got, seen)
			}
			seen[o] = true
		}
		n := 0
		for i := range s.lo {
			if s.lo[i] >= s.hi[i] || (i > 0 && s.hi[i-1] >= s.lo[i]) {
				t.Fatalf("ranges not sorted, disjoint and apart: %v %v", s.lo, s.hi)
			}
			n += int(s.hi[i] - s.lo[i])
		}
		if n != len(seen) {
			t.Fatalf("ranges hold %d offsets, want %d", n, len(seen))
		}
	})
}
