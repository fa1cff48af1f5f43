package audit

import (
	"testing"

	"kafkasim/godview"
)

// The group's latest acknowledged commit counts as lost only when the god
// view saw the group's own __consumer_offsets partition lose the commit's
// record after that commit was acknowledged.
func TestLastGroupCommit(t *testing.T) {
	offsetsLoss := func(p string) godview.Fact {
		return godview.Fact{Kind: godview.Loss, Partition: p, From: 3, To: 9, Cause: "unclean-election"}
	}
	for _, tc := range []struct {
		name       string
		run        func(a *Audit)
		wantOffset int64
		wantLost   bool
		wantOK     bool
	}{
		{"no commit", func(a *Audit) {}, 0, false, false},
		{"a commit and no loss", func(a *Audit) {
			offsetCommitted(a, "A", 1, orders0, 28)
		}, 28, false, true},
		{"the group's offsets partition lost data after the commit", func(a *Audit) {
			offsetCommitted(a, "A", 1, orders0, 28)
			a.facts = append(a.facts, offsetsLoss("__consumer_offsets-7"))
		}, 28, true, true},
		{"the loss came before the commit", func(a *Audit) {
			a.facts = append(a.facts, offsetsLoss("__consumer_offsets-7"))
			offsetCommitted(a, "A", 1, orders0, 28)
		}, 28, false, true},
		{"a later commit after the loss is the latest", func(a *Audit) {
			offsetCommitted(a, "A", 1, orders0, 28)
			a.facts = append(a.facts, offsetsLoss("__consumer_offsets-7"))
			offsetCommitted(a, "A", 1, orders0, 30)
		}, 30, false, true},
		{"another offsets partition's loss", func(a *Audit) {
			offsetCommitted(a, "A", 1, orders0, 28)
			a.facts = append(a.facts, offsetsLoss("__consumer_offsets-8"))
		}, 28, false, true},
		{"the data partition's loss is not the commit's", func(a *Audit) {
			offsetCommitted(a, "A", 1, orders0, 28)
			a.facts = append(a.facts, offsetsLoss("orders-0"))
		}, 28, false, true},
		{"a loss seen before the commit, another after", func(a *Audit) {
			a.facts = append(a.facts, offsetsLoss("orders-1"))
			offsetCommitted(a, "A", 1, orders0, 28)
			a.facts = append(a.facts, offsetsLoss("__consumer_offsets-7"))
		}, 28, true, true},
		{"the loss took what came after the commit's record", func(a *Audit) {
			offsetCommittedAt(a, "A", 1, orders0, 28, 2)
			a.facts = append(a.facts, offsetsLoss("__consumer_offsets-7"))
		}, 28, false, true},
		{"the loss ended below the commit's record", func(a *Audit) {
			offsetCommittedAt(a, "A", 1, orders0, 28, 9)
			a.facts = append(a.facts, offsetsLoss("__consumer_offsets-7"))
		}, 28, false, true},
		{"a later loss took it", func(a *Audit) {
			offsetCommittedAt(a, "A", 1, orders0, 28, 9)
			a.facts = append(a.facts, offsetsLoss("__consumer_offsets-7"))
			a.facts = append(a.facts, godview.Fact{Kind: godview.Loss, Partition: "__consumer_offsets-7", From: 9, To: 10, Cause: "unclean-election"})
		}, 28, true, true},
		{"another partition's commit", func(a *Audit) {
			offsetCommitted(a, "A", 1, orders1, 28)
			a.facts = append(a.facts, offsetsLoss("__consumer_offsets-7"))
		}, 0, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, _ := newGroupsAudit(t, nil)
			tc.run(a)
			off, f, lost, ok := a.LastGroupCommit("g", orders0, 7)
			if ok != tc.wantOK || lost != tc.wantLost || (ok && off != tc.wantOffset) {
				t.Fatalf("LastGroupCommit = %d, lost %v, ok %v; want %d, lost %v, ok %v", off, lost, ok, tc.wantOffset, tc.wantLost, tc.wantOK)
			}
			if lost && f.Partition != "__consumer_offsets-7" {
				t.Fatalf("the loss named is %+v, want __consumer_offsets-7's", f)
			}
		})
	}
}
