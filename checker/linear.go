package checker

import (
	"bytes"
	"cmp"
	"math"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"

	"kafkasim/history"
)

// Linearizability with porcupine, per topic-partition and per (group,
// partition) committed offset.
//
// The log model. A partition is an append-only sequence of records at
// increasing offsets (gaps allowed: transaction markers, aborted or
// compacted records take offsets). Operations:
//   - append(offset, value): an acknowledged send, between its invocation and
//     its acknowledgement. It succeeds only at an offset above every record
//     appended so far.
//   - a send whose outcome is unknown (info, or never completed) "maybe"
//     appended. If no poll ever returned its value, it is left out: that it
//     did not happen is consistent with every read. If a poll returned it,
//     it happened, at the offset the poll saw, before that poll completed:
//     its interval is [invocation, first such poll's completion]. (Giving
//     it an open-ended return would let porcupine place it anywhere later,
//     which is sound too, but costs a search step per pending send at every
//     step.)
//   - read(records): a poll's records of the partition. The log must hold
//     exactly those records at those offsets between the lowest and the
//     highest offset returned: each returned record is there, and nothing
//     else is, except records a reader may legitimately pass over (those of
//     transactions, for a read_committed reader; any record of a compacted
//     topic). Where a poll starts and how many records it returns are the
//     reader's business.
//
// The committed-offset model. A register per (group, partition), initially
// -1 (nothing committed): a commit writes it (a failed commit is left out; an
// indeterminate one has an open-ended return, so it may take effect at any
// later point or, placed last, not at all), a fetch-committed reads it.
//
// Deciding. The log model is decided directly (logModel.scan): with appends
// in offset order and reads that change nothing, a history is linearizable
// iff four local conditions hold, checked in O(n log n) at any length. A
// property test holds the direct check to porcupine's search on the same
// model (TestLogScanAgreesWithPorcupine), both ways, on random histories
// that pass and that fail; porcupine itself searches the committed-offset
// registers, within a time budget (a register whose check runs out of time
// is Unknown, never a pass), and visualises every failure. For an illegal
// partition the scan names the operation that cannot be placed and why;
// porcupine then visualises a window of operations before it, taken from
// the history up to that operation's completion (linearizability is
// prefix-closed: keep every operation that completed by then, and the sends
// invoked by then): the window starts from the log the sends acknowledged
// before every operation of the window began (sound: a window that fails
// means the history fails).

// Defaults for the porcupine checks.
const (
	DefaultLinearizabilityBudget = 5 * time.Second
	DefaultLinearizabilityOpsMax = 20000
	DefaultVisualizeOpsMax       = 2000
)

type linRec struct {
	off int64
	val int32
}

type linRead struct {
	call, ret int64
	proc      int32
	from, to  int32 // the read's records in linLog.recs
	rc        bool
}

// linLog is what a partition's linearizability check needs of its polls.
type linLog struct {
	recs  []linRec
	reads []linRead
}

// LinearizabilityStats say what porcupine checked.
type LinearizabilityStats struct {
	// Checked counts the partitions and registers found linearizable.
	Checked int `json:"checked"`
	// Failed, Unknown (out of time) and Skipped (more operations than
	// OpsMax) name partitions ("t-0") and registers ("group/t-0").
	Failed  []string `json:"failed,omitempty"`
	Unknown []string `json:"unknown,omitempty"`
	Skipped []string `json:"skipped,omitempty"`
	OpsMax  int      `json:"ops_max"`
	// Disagreed names the logs the direct check passed and porcupine did
	// not, with Config.CrossCheckLogs: a bug of the checker's (tests).
	Disagreed []string `json:"disagreed,omitempty"`
	// Disabled is set when the configuration turned the checks off.
	Disabled bool `json:"disabled,omitempty"`
	// Note says what the numbers mean when something was not checked.
	Note string `json:"note,omitempty"`
}

type linResult struct {
	stats    LinearizabilityStats
	vis      []Visualization
	acksMemo map[string]string
}

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

func (op *logOp) historyOps() [2]int64 { return op.ops }
func (op *regOp) historyOps() [2]int64 { return op.ops }

type logOp struct {
	read bool
	off  int64    // append
	val  int32    // append
	txn  bool     // append: a transactional record
	recs []linRec // read: descending offsets, no repeats
	rc   bool
	ops  [2]int64 // history indexes (invocation, completion; -1: none)
	proc int32
}

type logModel struct {
	init    *lnode
	skipAll bool // a compacted topic: reads may pass over any record
	names   []string
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
	m.init = init
	m.order = make([]int64, 0, int(init.depth)+len(ops))
	for k := init; k.depth > 0; k = k.parent {
		m.order = append(m.order, k.off)
	}
	for _, op := range ops {
		if lo := op.Input.(*logOp); !lo.read {
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
		s := "send " + m.names[op.val] + " → " + itoa(op.off)
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
			b.WriteString(" … " + itoa(op.recs[0].off) + "=" + m.names[op.recs[0].val])
			break
		}
		b.WriteString(" " + itoa(op.recs[i].off) + "=" + m.names[op.recs[i].val])
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
		parts = append(parts, itoa(k.off)+"="+m.names[k.val])
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

// linJob is one partition's or register's check.
type linJob struct {
	name    string
	reg     *register // a committed-offset register (nil: a partition's log)
	ops     []porcupine.Operation
	model   *logModel
	finding *Finding
	vis     []byte
	result  porcupine.CheckResult
	// crossCheck: porcupine searches the log too (Config.CrossCheckLogs);
	// disagreed: it found no linearization of a log the scan passed.
	crossCheck, disagreed bool
}

func (c *Config) checkLinearizability(a *analyzer) *linResult {
	res := &linResult{acksMemo: map[string]string{}}
	opsMax := c.LinearizabilityOpsMax
	if opsMax == 0 {
		opsMax = DefaultLinearizabilityOpsMax
	}
	res.stats.OpsMax = opsMax
	if c.SkipLinearizability {
		res.stats.Disabled = true
		res.stats.Note = "linearizability was not checked (turned off)"
		return res
	}
	budget := c.LinearizabilityBudget
	if budget <= 0 {
		budget = DefaultLinearizabilityBudget
	}
	visMax := c.VisualizeOpsMax
	if visMax <= 0 {
		visMax = DefaultVisualizeOpsMax
	}
	jobs := a.linJobs(c, opsMax, &res.stats)
	defer res.note(budget, opsMax)
	if len(jobs) == 0 {
		return res
	}
	workers := min(runtime.GOMAXPROCS(0), len(jobs))
	deadline := time.Now().Add(budget)
	searched := 0 // what porcupine searches: registers, cross-checked logs
	for _, j := range jobs {
		if j.model == nil || j.crossCheck {
			searched++
		}
	}
	share := max(budget*time.Duration(workers)/time.Duration(max(searched, 1)), 50*time.Millisecond)
	var wg sync.WaitGroup
	next := make(chan *linJob)
	for range workers {
		wg.Go(func() {
			for j := range next {
				j.run(a, deadline, share, visMax)
			}
		})
	}
	for _, j := range jobs {
		next <- j
	}
	close(next)
	wg.Wait()
	for _, j := range jobs {
		switch {
		case j.result == porcupine.Ok:
			res.stats.Checked++
			if j.disagreed {
				res.stats.Disagreed = append(res.stats.Disagreed, j.name)
			}
		case j.result == porcupine.Illegal:
			res.stats.Failed = append(res.stats.Failed, j.name)
			a.findings = append(a.findings, *j.finding)
			if j.vis != nil {
				res.vis = append(res.vis, Visualization{Partition: j.name, HTML: j.vis})
			}
		default:
			res.stats.Unknown = append(res.stats.Unknown, j.name)
		}
	}
	return res
}

func (res *linResult) note(budget time.Duration, opsMax int) {
	var notes []string
	if len(res.stats.Unknown) > 0 {
		notes = append(notes, strconv.Itoa(len(res.stats.Unknown))+" ran out of the "+budget.String()+" budget (LinearizabilityBudget): unknown, not passed")
	}
	if len(res.stats.Skipped) > 0 {
		notes = append(notes, strconv.Itoa(len(res.stats.Skipped))+" committed-offset registers skipped for having more than "+strconv.Itoa(opsMax)+
			" operations (LinearizabilityOpsMax): not checked")
	}
	res.stats.Note = strings.Join(notes, "; ")
}

// linJobs builds the operations of every partition and register, in name
// order, skipping those with too many.
func (a *analyzer) linJobs(c *Config, opsMax int, st *LinearizabilityStats) []*linJob {
	inf := a.lastIndex + 1
	byPart := make([][]int32, len(a.parts))
	perPart := make([]int32, len(a.parts))
	for i := range a.sends {
		if p := a.sends[i].part; p >= 0 {
			perPart[p]++
		}
	}
	for p, n := range perPart {
		byPart[p] = make([]int32, 0, n)
	}
	for i := range a.sends {
		if p := a.sends[i].part; p >= 0 {
			byPart[p] = append(byPart[p], int32(i))
		}
	}
	compact := map[string]bool{}
	for _, t := range c.Topics {
		compact[t.Name] = t.Compact
	}
	var jobs []*linJob
	parts := a.sortedParts()
	if len(a.sends) == 0 {
		// A history of reads alone (a recorder around consumers only):
		// what they read was written by nobody the history shows, so no
		// order of its operations explains it; the logs are not judged
		// (phantom-read stays silent for the same reason), committed
		// offsets still are.
		parts = nil
	}
	// The values whose send did not end ok: the only reads the loop below
	// keeps, found by a bit each rather than by two lookups per read (a
	// long run reads millions of records, nearly all of acknowledged
	// sends). A value has one send at most (a second is a finding, not a
	// send).
	notOK := make([]uint64, (len(a.vals)+63)/64)
	for i := range a.sends {
		if v := a.sends[i].val; a.sends[i].typ != history.OK {
			notOK[v>>6] |= 1 << (v & 63)
		}
	}
	for _, pi := range parts {
		po := a.parts[pi]
		// Where polls first saw each value whose send did not say where it
		// went.
		firstRead := map[int32][2]int64{} // value -> (offset, completion)
		for i := range po.obs {
			ob := &po.obs[i]
			if ob.flags&obsRead == 0 || notOK[ob.val>>6]&(1<<(ob.val&63)) == 0 {
				continue
			}
			if f, ok := firstRead[ob.val]; !ok || ob.op < f[1] {
				firstRead[ob.val] = [2]int64{ob.off, ob.op}
			}
		}
		// Sends that never said where they went, but were read here.
		sends := byPart[pi]
		var unplaced []int32
		for v := range firstRead { // kafkasim:orderless: sorted below
			if si := a.vals[v].send; si >= 0 && a.sends[si].part < 0 && a.sends[si].typ != history.Fail && a.sends[si].topic == po.topic {
				unplaced = append(unplaced, si)
			}
		}
		if len(unplaced) > 0 {
			slices.Sort(unplaced)
			sends = append(append([]int32(nil), sends...), unplaced...)
		}
		n := len(po.lin.reads)
		for _, si := range sends {
			if a.sends[si].typ != history.Fail {
				n++
			}
		}
		if n == 0 {
			continue
		}
		ops := make([]porcupine.Operation, 0, n)
		slab := make([]logOp, n) // one allocation for the partition's operations
		for _, si := range sends {
			s := &a.sends[si]
			op := &slab[len(ops)]
			*op = logOp{off: s.offset, val: s.val, txn: s.txn >= 0, ops: [2]int64{s.invoke, s.complete}, proc: s.proc}
			ret := s.complete
			switch s.typ {
			case history.Fail:
				continue
			case history.OK:
			default:
				f, ok := firstRead[s.val]
				if !ok {
					continue // never seen: it may not have happened
				}
				op.off, ret = f[0], max(f[1], s.invoke)
				op.ops[1] = -1
			}
			ops = append(ops, porcupine.Operation{ClientId: int(s.proc), Input: op, Call: s.invoke, Return: ret, Metadata: op})
		}
		// The reads' records, sorted in place: nothing else uses them.
		for _, r := range po.lin.reads {
			recs := po.lin.recs[r.from:r.to:r.to]
			slices.SortFunc(recs, func(x, y linRec) int {
				if c := cmp.Compare(y.off, x.off); c != 0 {
					return c
				}
				return cmp.Compare(x.val, y.val)
			})
			out := recs[:0]
			for i, x := range recs {
				if i == 0 || x != recs[i-1] {
					out = append(out, x)
				}
			}
			op := &slab[len(ops)]
			*op = logOp{read: true, recs: out, rc: r.rc, ops: [2]int64{r.call, r.ret}, proc: r.proc}
			ops = append(ops, porcupine.Operation{ClientId: int(r.proc), Input: op, Call: r.call, Return: r.ret, Metadata: op})
		}
		base := logModel{skipAll: compact[a.topics[po.topic]], names: a.valNames}
		jobs = append(jobs, &linJob{name: po.name, ops: ops, model: base.withOps(ops, newLog()), crossCheck: c.CrossCheckLogs})
	}
	// Committed offsets, by group then partition.
	regs := append([]*register(nil), a.groups.regs...)
	sort.Slice(regs, func(i, j int) bool {
		if regs[i].group != regs[j].group {
			return regs[i].group < regs[j].group
		}
		return regs[i].part < regs[j].part
	})
	for _, reg := range regs {
		name := reg.group + "/" + reg.part
		var ops []porcupine.Operation
		for _, cr := range reg.commits {
			op := &regOp{write: true, value: cr.value, ops: [2]int64{cr.invoke, cr.complete}}
			ret := cr.complete
			switch {
			case cr.typ == history.Fail:
				continue
			case cr.typ != history.OK:
				ret = inf // it may take effect at any later point, or never
			}
			ops = append(ops, porcupine.Operation{ClientId: int(cr.proc), Input: op, Call: cr.invoke, Return: ret, Metadata: op})
		}
		for _, f := range reg.fetches {
			op := &regOp{value: f.value, ops: [2]int64{f.invoke, f.complete}}
			ops = append(ops, porcupine.Operation{ClientId: int(f.proc), Input: op, Call: f.invoke, Return: f.complete, Metadata: op})
		}
		if len(reg.fetches) == 0 || len(ops) == 0 {
			continue // nothing read: nothing to check
		}
		if opsMax > 0 && len(ops) > opsMax {
			st.Skipped = append(st.Skipped, name)
			continue
		}
		jobs = append(jobs, &linJob{name: name, reg: reg, ops: ops})
	}
	return jobs
}

// porcupineModel is the job's model.
func (j *linJob) porcupineModel() porcupine.Model {
	if j.model != nil {
		return j.model.porcupine()
	}
	return regModel
}

// check runs porcupine within the job's time; ok is false when it ran out.
func check(model porcupine.Model, ops []porcupine.Operation, until time.Time) (porcupine.CheckResult, bool) {
	left := time.Until(until)
	if left <= 0 {
		return porcupine.Unknown, false
	}
	r := porcupine.CheckOperationsTimeout(model, ops, left)
	return r, r != porcupine.Unknown
}

func (j *linJob) run(a *analyzer, deadline time.Time, share time.Duration, visMax int) {
	until := time.Now().Add(share)
	if deadline.Before(until) {
		until = deadline
	}
	if j.model != nil {
		// The direct check decides the log model (it agrees with
		// porcupine's search on every history: TestLogScanAgreesWithPorcupine)
		// in O(n log n), at any length; porcupine shows the failing ones.
		c, bad := j.model.scan(j.ops)
		if !bad {
			j.result = porcupine.Ok
			if j.crossCheck {
				if r, _ := check(j.model.porcupine(), j.ops, until); r == porcupine.Illegal {
					j.disagreed = true
				}
			}
			return
		}
		j.result = porcupine.Illegal
		j.explainLog(a, c, until, visMax)
		return
	}
	j.result, _ = check(j.porcupineModel(), j.ops, until)
	if j.result == porcupine.Illegal {
		j.explainRegister(a, until, visMax)
	}
}

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
func (m *logModel) scan(ops []porcupine.Operation) (logConflict, bool) {
	apps := make([]int, 0, len(ops))
	for i, op := range ops {
		if !op.Input.(*logOp).read {
			apps = append(apps, i)
		}
	}
	slices.SortStableFunc(apps, func(x, y int) int {
		a, b := &ops[x], &ops[y]
		if c := cmp.Compare(a.Input.(*logOp).off, b.Input.(*logOp).off); c != 0 {
			return c
		}
		return cmp.Compare(a.Return, b.Return)
	})
	best := logConflict{at: math.MaxInt64}
	found := false
	note := func(c logConflict) {
		if c.at < best.at {
			best, found = c, true
		}
	}
	desc := func(i int) string {
		op := ops[i].Input.(*logOp)
		return m.describeOp(op) + " (#" + itoa(op.ops[0]) + ")"
	}
	// The log: one append per offset.
	log := make([]int, 0, len(apps)) // indexes in ops, ascending offsets
	for _, i := range apps {
		if n := len(log); n > 0 && ops[log[n-1]].Input.(*logOp).off == ops[i].Input.(*logOp).off {
			note(logConflict{culprit: i, other: log[n-1], at: max(ops[i].Call, ops[log[n-1]].Call),
				why: desc(i) + " took offset " + itoa(ops[i].Input.(*logOp).off) + ", which " + desc(log[n-1]) + " had taken"})
			continue
		}
		log = append(log, i)
	}
	offs := make([]int64, len(log))
	maxCall := make([]int, len(log)) // the append of the latest invocation among log[:k+1]
	for k, i := range log {
		offs[k] = ops[i].Input.(*logOp).off
		maxCall[k] = i
		if k > 0 && ops[maxCall[k-1]].Call > ops[i].Call {
			maxCall[k] = maxCall[k-1]
		}
		if j := maxCall[k]; ops[j].Call > ops[i].Return {
			note(logConflict{culprit: j, other: i, at: ops[j].Call,
				why: desc(j) + " was invoked after " + desc(i) + ", a higher offset, was acknowledged (#" + itoa(ops[i].Return) + "): offsets become visible in order"})
		}
	}
	for i, op := range ops {
		r := op.Input.(*logOp)
		if !r.read {
			continue
		}
		rd := func() string { return m.describeOp(r) + " (#" + itoa(r.ops[0]) + "–#" + itoa(r.ops[1]) + ")" }
		lo, hi := r.recs[len(r.recs)-1].off, r.recs[0].off
		k := sort.Search(len(offs), func(k int) bool { return offs[k] >= lo })
		ri := len(r.recs) - 1
		bad := false
		for ; ri >= 0 && !bad; ri-- {
			rec := r.recs[ri]
			for k < len(offs) && offs[k] < rec.off {
				lop := ops[log[k]].Input.(*logOp)
				if !m.skipAll && !(r.rc && lop.txn) {
					note(logConflict{culprit: i, other: log[k], at: max(op.Return, ops[log[k]].Call),
						why: rd() + " did not return offset " + itoa(lop.off) + " (" + m.names[lop.val] + "), which the log holds inside the range it returned"})
					bad = true
					break
				}
				k++
			}
			if bad {
				break
			}
			if k == len(offs) || offs[k] != rec.off {
				note(logConflict{culprit: i, other: -1, at: op.Return,
					why: rd() + " returned " + m.names[rec.val] + " at offset " + itoa(rec.off) + ", where no send that took effect wrote"})
				bad = true
				break
			}
			if lop := ops[log[k]].Input.(*logOp); lop.val != rec.val {
				note(logConflict{culprit: i, other: log[k], at: max(op.Return, ops[log[k]].Call),
					why: rd() + " returned " + m.names[rec.val] + " at offset " + itoa(rec.off) + ", where " + desc(log[k]) + " wrote"})
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
		if j := maxCall[kHi]; ops[j].Call > op.Return {
			note(logConflict{culprit: i, other: j, at: op.Return,
				why: rd() + " completed before " + desc(j) + " was invoked, yet returned offsets at or above it"})
		}
	}
	return best, found
}

func (j *linJob) explainLog(a *analyzer, c logConflict, until time.Time, visMax int) {
	f := &Finding{Type: Nonlinearizable, Example: Example{Partition: j.name, Offset: -1}}
	j.finding = f
	culprit := j.ops[c.culprit].Input.(*logOp)
	f.Process = a.procs[culprit.proc].name
	f.Ops = []int64{culprit.ops[0]}
	if culprit.ops[1] >= 0 {
		f.Ops = append(f.Ops, culprit.ops[1])
	}
	if c.other >= 0 {
		o := j.ops[c.other].Input.(*logOp)
		f.Ops = append(f.Ops, o.ops[0])
		if o.ops[1] >= 0 {
			f.Ops = append(f.Ops, o.ops[1])
		}
	}
	f.Ops = sortedUnique(f.Ops)
	if culprit.read {
		f.Offset = culprit.recs[len(culprit.recs)-1].off
	} else {
		f.Offset, f.Value = culprit.off, a.valNames[culprit.val]
	}
	f.Detail = "no order of " + j.name + "'s sends and polls consistent with their real-time order explains them: " + c.why
	// Porcupine's view of a window of operations up to the culprit.
	pre := prefix(j.ops, c.at)
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
		r, info := porcupine.CheckOperationsVerbose(pm, win, left)
		if r == porcupine.Illegal {
			var b bytes.Buffer
			if porcupine.Visualize(pm, info, &b) == nil {
				j.vis = b.Bytes()
			}
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
	r, info := porcupine.CheckOperationsVerbose(regModel, j.ops, left)
	if r != porcupine.Illegal {
		return
	}
	// The operation that cannot be placed: the earliest-invoked one outside
	// the longest partial linearization.
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
	var b bytes.Buffer
	if porcupine.Visualize(regModel, info, &b) == nil {
		j.vis = b.Bytes()
	}
}

// weakestAcks is the weakest acks setting among the producers of a
// partition.
func (l *linResult) weakestAcks(c *Config, a *analyzer, partition string) string {
	if v, ok := l.acksMemo[partition]; ok {
		return v
	}
	pi := a.partByName(partition)
	weakest := "all"
	seen := map[int32]bool{}
	for i := range a.sends {
		s := &a.sends[i]
		if s.part != pi || seen[s.proc] {
			continue
		}
		seen[s.proc] = true
		switch c.producer(a.procs[s.proc].name).Acks {
		case "0":
			weakest = "0"
		case "1":
			if weakest != "0" {
				weakest = "1"
			}
		}
	}
	l.acksMemo[partition] = weakest
	return weakest
}
