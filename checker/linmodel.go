package checker

import (
	"slices"
	"strconv"
	"strings"

	"github.com/anishathalye/porcupine"
)

// The models porcupine searches: a partition's log (logModel, over
// immutable logs that share their past: lnode) and a group's committed
// offset (regModel, a register). Apart from how they are decided: the scan
// (linscan.go) decides the log model directly, porcupine searches the
// registers, and draws whichever fails.

// lnode is an immutable log: its last record and the log before it. Jump
// pointers (Myers' skew-binary scheme) find an offset in O(log n); a rolling
// hash makes equal logs compare in O(1).
type lnode struct {
	off    int64
	val    int32
	txn    bool
	depth  int32
	parent *lnode
	jump   *lnode
	hash   uint64
}

func newLog() *lnode {
	r := &lnode{off: -1}
	r.jump = r
	return r
}

func mix(h uint64, off int64, val int32) uint64 {
	x := h ^ (uint64(off)*0x9e3779b97f4a7c15 + uint64(uint32(val))*0xbf58476d1ce4e5b9 + 0x94d049bb133111eb)
	x ^= x >> 31
	x *= 0xd6e8feb86659fd93
	x ^= x >> 32
	return x
}

func (p *lnode) push(off int64, val int32, txn bool) *lnode {
	n := &lnode{off: off, val: val, txn: txn, depth: p.depth + 1, parent: p, hash: mix(p.hash, off, val)}
	if p.parent != nil && p.depth-p.jump.depth == p.jump.depth-p.jump.jump.depth {
		n.jump = p.jump.jump
	} else {
		n.jump = p
	}
	return n
}

// find returns the last record at an offset ≤ hi (the root if none).
func (n *lnode) find(hi int64) *lnode {
	for n.off > hi {
		if n.jump.off > hi {
			n = n.jump
		} else {
			n = n.parent
		}
	}
	return n
}

// historyOps is an operation's metadata: the history indexes it stands for
// (the operation itself, which has them, rather than a copy boxed for
// each of millions of operations).
type historyOps interface{ historyOps() [2]int64 }

func (op *logOp) historyOps() [2]int64 {
	if op.unreturned {
		return [2]int64{op.call, -1}
	}
	return [2]int64{op.call, op.ret}
}

func (op *regOp) historyOps() [2]int64 { return op.ops }

// logOp is one operation of a partition's log job, with its interval as
// porcupine takes it (call, ret): the direct check reads these, and the
// porcupine.Operations (72 bytes more each) are built only for a search
// (linJob.porcupineOps). Its fields are ordered so that it packs into 64
// bytes: a long run's partition has hundreds of thousands. Its history
// indexes are call and ret (historyOps), unless unreturned.
type logOp struct {
	off       int64 // append
	call, ret int64
	recs      []linRec // read: descending offsets, no repeats
	val       int32    // append
	proc      int32
	read      bool
	txn       bool // append: a transactional record
	rc        bool
	// unreturned: an append whose send's completion is not in the
	// history (not ok): ret is where a read first saw it.
	unreturned bool
}

type logModel struct {
	init    *lnode
	skipAll bool               // a compacted topic: reads may pass over any record
	names   func(int32) string // the values' names
	// order is every offset the history's appends take, ascending: each of
	// them happened (acknowledged, or seen by a poll), and a record becomes
	// visible (the high watermark passes it) only after every record below
	// it, so appends take effect in offset order. Without this the search
	// would try concurrent appends in every order the gaps allow.
	order []int64
}

// withOps returns the model for a list of operations, starting from log
// init.
func (m logModel) withOps(ops []porcupine.Operation, init *lnode) *logModel {
	return m.with(len(ops), func(i int) *logOp { return ops[i].Input.(*logOp) }, init)
}

// withLog is withOps of a job's logOps.
func (m logModel) withLog(log []logOp, init *lnode) *logModel {
	return m.with(len(log), func(i int) *logOp { return &log[i] }, init)
}

func (m logModel) with(n int, op func(int) *logOp, init *lnode) *logModel {
	m.init = init
	m.order = make([]int64, 0, int(init.depth)+n)
	for k := init; k.depth > 0; k = k.parent {
		m.order = append(m.order, k.off)
	}
	for i := range n {
		if lo := op(i); !lo.read {
			m.order = append(m.order, lo.off)
		}
	}
	slices.Sort(m.order)
	out := m.order[:0]
	for i, o := range m.order {
		if i == 0 || o != m.order[i-1] {
			out = append(out, o)
		}
	}
	m.order = out
	return &m
}

func (m *logModel) step(state, input interface{}) (bool, interface{}) {
	head := state.(*lnode)
	op := input.(*logOp)
	if !op.read {
		if int(head.depth) >= len(m.order) || m.order[head.depth] != op.off {
			return false, head // not the next offset to become visible
		}
		return true, head.push(op.off, op.val, op.txn)
	}
	r := op.recs
	lo := r[len(r)-1].off
	n := head.find(r[0].off)
	i := 0
	for n.off >= lo {
		if r[i].off > n.off {
			return false, head // returned a record at an offset the log does not hold
		}
		if r[i].off == n.off {
			if r[i].val != n.val {
				return false, head
			}
			i++
			if i == len(r) {
				return true, head
			}
		} else if !m.skipAll && !(op.rc && n.txn) {
			return false, head // a record in the range the read did not return
		}
		n = n.parent
	}
	return false, head
}

func (m *logModel) describeOp(input interface{}) string {
	op := input.(*logOp)
	if !op.read {
		s := "send " + m.names(op.val) + " → " + itoa(op.off)
		if op.txn {
			s += " (txn)"
		}
		return s
	}
	var b strings.Builder
	b.WriteString("poll")
	if op.rc {
		b.WriteString(" (read_committed)")
	}
	b.WriteString(" →")
	for i := len(op.recs) - 1; i >= 0; i-- {
		if len(op.recs)-1-i == 6 && i > 0 {
			b.WriteString(" … " + itoa(op.recs[0].off) + "=" + m.names(op.recs[0].val))
			break
		}
		b.WriteString(" " + itoa(op.recs[i].off) + "=" + m.names(op.recs[i].val))
	}
	return b.String()
}

func (m *logModel) describeState(state interface{}) string {
	n := state.(*lnode)
	if n.depth == 0 {
		return "empty log"
	}
	var parts []string
	for k := n; k.depth > 0 && len(parts) < 3; k = k.parent {
		parts = append(parts, itoa(k.off)+"="+m.names(k.val))
	}
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	s := strconv.Itoa(int(n.depth)) + " records"
	if int(n.depth) > len(parts) {
		s += ": …, "
	} else {
		s += ": "
	}
	return s + strings.Join(parts, ", ")
}

func (m *logModel) porcupine() porcupine.Model {
	return porcupine.Model{
		Init: func() interface{} { return m.init },
		Step: func(state, input, _ interface{}) (bool, interface{}) { return m.step(state, input) },
		Equal: func(a, b interface{}) bool {
			x, y := a.(*lnode), b.(*lnode)
			return x == y || (x.depth == y.depth && x.off == y.off && x.hash == y.hash)
		},
		Hash:                      func(s interface{}) uint64 { return s.(*lnode).hash },
		DescribeOperation:         func(input, _ interface{}) string { return m.describeOp(input) },
		DescribeState:             m.describeState,
		DescribeOperationMetadata: describeMeta,
	}
}

func describeMeta(info interface{}) string {
	o, ok := info.(historyOps)
	if !ok {
		return ""
	}
	ops := o.historyOps()
	s := "history #" + itoa(ops[0])
	if ops[1] >= 0 && ops[1] != ops[0] {
		s += "–#" + itoa(ops[1])
	}
	return s
}

type regOp struct {
	write bool
	value int64
	ops   [2]int64
}

var regModel = porcupine.Model{
	Init: func() interface{} { return int64(-1) },
	Step: func(state, input, _ interface{}) (bool, interface{}) {
		op := input.(*regOp)
		if op.write {
			return true, op.value
		}
		return state.(int64) == op.value, state
	},
	Hash: func(s interface{}) uint64 { return uint64(s.(int64)) },
	DescribeOperation: func(input, _ interface{}) string {
		op := input.(*regOp)
		if op.write {
			return "commit " + itoa(op.value)
		}
		return "fetch-committed → " + itoa(op.value)
	},
	DescribeState: func(s interface{}) string {
		if v := s.(int64); v >= 0 {
			return "committed " + itoa(v)
		}
		return "nothing committed"
	},
	DescribeOperationMetadata: describeMeta,
}
