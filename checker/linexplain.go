package checker

import (
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/anishathalye/porcupine"
)

// What a failing job reports: its finding (the operation that cannot be
// placed, and why) and porcupine's visualisation of a window of the history
// up to that operation.

// prefix is the history up to time t: every operation that completed by
// then, and the sends invoked by then (their effects may be needed).
func prefix(ops []porcupine.Operation, t int64) []porcupine.Operation {
	var out []porcupine.Operation
	for _, op := range ops {
		if op.Return <= t || (op.Call <= t && !op.Input.(*logOp).read) {
			out = append(out, op)
		}
	}
	return out
}

func (j *linJob) explainLog(a *analyzer, c logConflict, until time.Time, visMax int) {
	f := &Finding{Type: Nonlinearizable, Example: Example{Partition: j.name, Offset: -1}}
	j.finding = f
	culprit := &j.log[c.culprit]
	f.Process = a.procs[culprit.proc].name
	ops := culprit.historyOps()
	f.Ops = []int64{ops[0]}
	if ops[1] >= 0 {
		f.Ops = append(f.Ops, ops[1])
	}
	if c.other >= 0 {
		ops := j.log[c.other].historyOps()
		f.Ops = append(f.Ops, ops[0])
		if ops[1] >= 0 {
			f.Ops = append(f.Ops, ops[1])
		}
	}
	f.Ops = sortedUnique(f.Ops)
	if culprit.read {
		f.Offset = culprit.recs[len(culprit.recs)-1].off
	} else {
		f.Offset, f.Value = culprit.off, a.valName(culprit.val)
	}
	f.Detail = "no order of " + j.name + "'s sends and polls consistent with their real-time order explains them: " + c.why
	// Porcupine's view of a window of operations up to the culprit.
	pre := prefix(j.porcupineOps(), c.at)
	for k := 32; ; k *= 2 {
		win, init, ok := window(pre, min(k, len(pre)))
		if !ok || len(win) > visMax {
			break
		}
		left := time.Until(until)
		if left <= 0 {
			break
		}
		pm := j.model.withOps(win, init).porcupine()
		r, info := checkVerbose(pm, win, left)
		if r == porcupine.Illegal {
			j.vis = visualize(pm, info)
			break
		}
		if r == porcupine.Unknown || len(win) == len(pre) {
			break
		}
	}
	if j.vis == nil {
		f.Detail += " (no visualisation: the failing window has more than " + strconv.Itoa(visMax) + " operations, or time ran out)"
	}
}

// window takes the last k operations (by completion) of a prefix, widened so
// that no operation left out overlaps one kept, and the log the sends left
// out had built before the window began. Reads left out are dropped.
func window(pre []porcupine.Operation, k int) ([]porcupine.Operation, *lnode, bool) {
	ops := append([]porcupine.Operation(nil), pre...)
	sort.Slice(ops, func(i, j int) bool { return ops[i].Return < ops[j].Return })
	start := len(ops) - k
	if start < 0 {
		start = 0
	}
	minCall := int64(math.MaxInt64)
	for {
		for _, op := range ops[start:] {
			minCall = min(minCall, op.Call)
		}
		s := start
		for s > 0 && ops[s-1].Return >= minCall {
			s--
		}
		if s == start {
			break
		}
		start = s
	}
	var before []*logOp
	for _, op := range ops[:start] {
		if lo := op.Input.(*logOp); !lo.read {
			before = append(before, lo)
		}
	}
	sort.Slice(before, func(i, j int) bool { return before[i].off < before[j].off })
	init := newLog()
	for _, lo := range before {
		if lo.off <= init.off {
			return nil, nil, false
		}
		init = init.push(lo.off, lo.val, lo.txn)
	}
	return ops[start:], init, true
}

func (j *linJob) explainRegister(a *analyzer, until time.Time, visMax int) {
	f := &Finding{Type: Nonlinearizable, register: true, group: j.reg.group,
		Example: Example{Partition: j.reg.part, Offset: -1}}
	j.finding = f
	f.Detail = "group " + j.reg.group + ": no order of the commits and fetch-committed operations of " + j.reg.part +
		" consistent with their real-time order explains what the fetches returned"
	if len(j.ops) > visMax {
		f.Detail += "; no visualisation (more than " + strconv.Itoa(visMax) + " operations)"
		f.Ops = []int64{j.ops[0].Call}
		return
	}
	left := time.Until(until)
	if left <= 0 {
		return
	}
	r, info := checkVerbose(regModel, j.ops, left)
	if r != porcupine.Illegal {
		return
	}
	// The operation that cannot be placed: the earliest-invoked one outside
	// the longest partial linearization (the first of that length in
	// checkVerbose's order).
	in := map[int]bool{}
	longest := 0
	for _, parts := range info.PartialLinearizations() {
		for _, p := range parts {
			if len(p) > longest {
				longest = len(p)
				clear(in)
				for _, id := range p {
					in[id] = true
				}
			}
		}
	}
	best := -1
	for id, op := range j.ops {
		if !in[id] && (best < 0 || op.Call < j.ops[best].Call) {
			best = id
		}
	}
	if best >= 0 {
		op := j.ops[best].Input.(*regOp)
		f.Ops = []int64{op.ops[0]}
		if op.ops[1] >= 0 {
			f.Ops = append(f.Ops, op.ops[1])
		}
		f.Offset = op.value
		f.Process = a.procs[j.ops[best].ClientId].name
		f.Detail += ": " + regModel.DescribeOperation(op, nil) + " (#" + itoa(op.ops[0]) + ") cannot be placed"
	}
	j.vis = visualize(regModel, info)
}
