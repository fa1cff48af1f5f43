package checker

import (
	"cmp"
	"math"
	"slices"
	"sort"
)

// The direct check of a partition's log (scan): four local conditions,
// O(n log n) at any length, where porcupine's search of a long or failing
// history can be exponential. TestLogScanAgreesWithPorcupine holds it to
// the search.

// logConflict is a reason a log history is not linearizable, found by scan.
type logConflict struct {
	culprit, other int   // indexes in the job's operations (other: -1)
	at             int64 // the culprit's completion
	why            string
}

// scan decides the log model directly. With appends in offset order
// (logModel.order) and reads that change nothing, a history is
// linearizable iff (1) no offset is appended twice; (2) each append was
// invoked before every append of a higher offset was acknowledged (the k-th
// offset cannot become visible after the (k+1)-th); (3) each read's records
// are exactly the appended records of its offset range, less those it may
// pass over; and (4) every append up to a read's highest offset was invoked
// before the read completed. The conditions are necessary, and they
// suffice: take each append at the latest invocation among the appends up
// to its offset (a point that never goes back, inside its interval by (2))
// and each read at the later of its invocation and that point for its
// highest offset (inside its interval by (4)); each read then sees a log
// that holds exactly its range (3), and later appends change nothing there.
// scan returns the violation whose culprit completes first, if any: which
// operation, and why, without porcupine's search, which a long or failing
// history can make exponential.
func (m *logModel) scan(ops []logOp) (logConflict, bool) {
	apps := make([]int, 0, len(ops))
	for i := range ops {
		if !ops[i].read {
			apps = append(apps, i)
		}
	}
	slices.SortStableFunc(apps, func(x, y int) int {
		a, b := &ops[x], &ops[y]
		if c := cmp.Compare(a.off, b.off); c != 0 {
			return c
		}
		return cmp.Compare(a.ret, b.ret)
	})
	best := logConflict{at: math.MaxInt64}
	found := false
	note := func(c logConflict) {
		if c.at < best.at {
			best, found = c, true
		}
	}
	desc := func(i int) string {
		op := &ops[i]
		return m.describeOp(op) + " (#" + itoa(op.call) + ")"
	}
	// The log: one append per offset.
	log := make([]int, 0, len(apps)) // indexes in ops, ascending offsets
	for _, i := range apps {
		if n := len(log); n > 0 && ops[log[n-1]].off == ops[i].off {
			note(logConflict{culprit: i, other: log[n-1], at: max(ops[i].call, ops[log[n-1]].call),
				why: desc(i) + " took offset " + itoa(ops[i].off) + ", which " + desc(log[n-1]) + " had taken"})
			continue
		}
		log = append(log, i)
	}
	offs := make([]int64, len(log))
	maxCall := make([]int, len(log)) // the append of the latest invocation among log[:k+1]
	for k, i := range log {
		offs[k] = ops[i].off
		maxCall[k] = i
		if k > 0 && ops[maxCall[k-1]].call > ops[i].call {
			maxCall[k] = maxCall[k-1]
		}
		if j := maxCall[k]; ops[j].call > ops[i].ret {
			note(logConflict{culprit: j, other: i, at: ops[j].call,
				why: desc(j) + " was invoked after " + desc(i) + ", a higher offset, was acknowledged (#" + itoa(ops[i].ret) + "): offsets become visible in order"})
		}
	}
	for i := range ops {
		r := &ops[i]
		if !r.read {
			continue
		}
		rd := func() string { return m.describeOp(r) + " (#" + itoa(r.call) + "–#" + itoa(r.ret) + ")" }
		lo, hi := r.recs[len(r.recs)-1].off, r.recs[0].off
		k := sort.Search(len(offs), func(k int) bool { return offs[k] >= lo })
		ri := len(r.recs) - 1
		bad := false
		for ; ri >= 0 && !bad; ri-- {
			rec := r.recs[ri]
			for k < len(offs) && offs[k] < rec.off {
				lop := &ops[log[k]]
				if !m.skipAll && !(r.rc && lop.txn) {
					note(logConflict{culprit: i, other: log[k], at: max(r.ret, ops[log[k]].call),
						why: rd() + " did not return offset " + itoa(lop.off) + " (" + m.names(lop.val) + "), which the log holds inside the range it returned"})
					bad = true
					break
				}
				k++
			}
			if bad {
				break
			}
			if k == len(offs) || offs[k] != rec.off {
				note(logConflict{culprit: i, other: -1, at: r.ret,
					why: rd() + " returned " + m.names(rec.val) + " at offset " + itoa(rec.off) + ", where no send that took effect wrote"})
				bad = true
				break
			}
			if lop := &ops[log[k]]; lop.val != rec.val {
				note(logConflict{culprit: i, other: log[k], at: max(r.ret, ops[log[k]].call),
					why: rd() + " returned " + m.names(rec.val) + " at offset " + itoa(rec.off) + ", where " + desc(log[k]) + " wrote"})
				bad = true
				break
			}
			k++
		}
		if bad {
			continue
		}
		// Every append up to the highest offset returned was invoked before
		// the read completed.
		kHi := sort.Search(len(offs), func(k int) bool { return offs[k] >= hi })
		if j := maxCall[kHi]; ops[j].call > r.ret {
			note(logConflict{culprit: i, other: j, at: r.ret,
				why: rd() + " completed before " + desc(j) + " was invoked, yet returned offsets at or above it"})
		}
	}
	return best, found
}
