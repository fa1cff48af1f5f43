package checker

import (
	"cmp"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anishathalye/porcupine"

	"kafkasim/history"
)

// The jobs: one per partition log and committed-offset register, built in
// name order (linJobs) and run by a pool of workers within the time budget
// (each search gets a share of it). Results are combined in job order, so
// the report never depends on which worker finished first.

// linJob is one partition's or register's check.
type linJob struct {
	name string
	reg  *register // a committed-offset register (nil: a partition's log)
	// log is a partition's operations (nil: a register's); ops are what
	// porcupine searches, a log's built from log when it is searched
	// (porcupineOps).
	log     []logOp
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
	plan := a.linPlan(c, opsMax, &res.stats)
	defer res.note(budget, opsMax)
	if len(plan.parts) == 0 && len(plan.regs) == 0 {
		return res
	}
	// A partition's operations are built when a worker is about to take
	// them, and let go once its log passed: a long run's slabs of
	// operations then never all live at once (the checker's largest
	// tables). Cross-checking with porcupine counts every log among the
	// searches that share the budget, so it builds them all first, as
	// before.
	var jobs []*linJob
	eager := c.CrossCheckLogs
	if eager {
		jobs = plan.buildAll()
		if len(jobs) == 0 {
			return res
		}
	}
	workers := min(runtime.GOMAXPROCS(0), max(len(plan.parts)+len(plan.regs), 1))
	// The budget is for searching, not for building: the time spent
	// building a partition's job moves the deadline on, as it would have
	// if all were built first.
	var deadline atomic.Int64
	deadline.Store(time.Now().Add(budget).UnixNano())
	searched := len(plan.regs) // what porcupine searches: registers, cross-checked logs
	for _, j := range jobs {
		if j.model != nil && j.crossCheck {
			searched++
		}
	}
	share := max(budget*time.Duration(workers)/time.Duration(max(searched, 1)), 50*time.Millisecond)
	var wg sync.WaitGroup
	next := make(chan *linJob)
	// A worker says it is idle before it takes a job, and the next
	// partition's job is built only then: no built job waits for a worker
	// while the others run theirs (a long run's jobs are tens of MB each).
	idle := make(chan struct{}, workers)
	for range workers {
		wg.Go(func() {
			for {
				idle <- struct{}{}
				j, ok := <-next
				if !ok {
					return
				}
				j.run(a, time.Unix(0, deadline.Load()), share, visMax)
				if j.result == porcupine.Ok && j.model != nil && !j.crossCheck {
					j.log, j.ops, j.model = nil, nil, nil // passed: nothing reads them again
				}
			}
		})
	}
	if eager {
		for _, j := range jobs {
			<-idle
			next <- j
		}
	} else {
		// In job order, as before: the logs, then the registers (a
		// failing log's visualisation and the registers' searches share
		// the budget in that order).
		for _, pi := range plan.parts {
			<-idle
			t := time.Now()
			j := plan.partJob(pi)
			deadline.Add(int64(time.Since(t)))
			if j != nil {
				jobs = append(jobs, j)
				next <- j
			} else {
				idle <- struct{}{} // the worker is still idle
			}
		}
		for _, j := range plan.regs {
			<-idle
			jobs = append(jobs, j)
			next <- j
		}
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

// linPlan is what the jobs are built from: the partitions with a log to
// judge and the registers' jobs, each in name order.
type linPlan struct {
	a       *analyzer
	c       *Config
	byPart  [][]int32 // each partition's sends, in history order
	compact map[string]bool
	notOK   []uint64 // a bit per value whose send did not end ok
	parts   []int32  // in name order
	regs    []*linJob
}

// linJobs builds the operations of every partition and register, in name
// order, skipping those with too many.
func (a *analyzer) linJobs(c *Config, opsMax int, st *LinearizabilityStats) []*linJob {
	return a.linPlan(c, opsMax, st).buildAll()
}

// buildAll builds every job of the plan: the partitions' in name order,
// then the registers'.
func (p *linPlan) buildAll() []*linJob {
	var jobs []*linJob
	for _, pi := range p.parts {
		if j := p.partJob(pi); j != nil {
			jobs = append(jobs, j)
		}
	}
	return append(jobs, p.regs...)
}

// linPlan indexes the sends by partition and builds the registers' jobs;
// the partitions' jobs are built one by one (partJob).
func (a *analyzer) linPlan(c *Config, opsMax int, st *LinearizabilityStats) *linPlan {
	inf := a.lastIndex + 1
	byPart := make([][]int32, len(a.parts))
	perPart := make([]int32, len(a.parts))
	for i := range a.sends {
		if p := a.sends[i].part(); p >= 0 {
			perPart[p]++
		}
	}
	for p, n := range perPart {
		byPart[p] = make([]int32, 0, n)
	}
	for i := range a.sends {
		if p := a.sends[i].part(); p >= 0 {
			byPart[p] = append(byPart[p], int32(i))
		}
	}
	compact := map[string]bool{}
	for _, t := range c.Topics {
		compact[t.Name] = t.Compact
	}
	parts := a.sortedParts()
	if len(a.sends) == 0 {
		// A history of reads alone (a recorder around consumers only):
		// what they read was written by nobody the history shows, so no
		// order of its operations explains it; the logs are not judged
		// (phantom-read stays silent for the same reason), committed
		// offsets still are.
		parts = nil
	}
	// The values whose send did not end ok: the only reads partJob
	// keeps, found by a bit each rather than by two lookups per read (a
	// long run reads millions of records, nearly all of acknowledged
	// sends). A value has one send at most (a second is a finding, not a
	// send).
	notOK := make([]uint64, (len(a.valSend)+63)/64)
	for i := range a.sends {
		if v := a.sends[i].val; a.sends[i].typ != history.OK {
			notOK[v>>6] |= 1 << (v & 63)
		}
	}
	p := &linPlan{a: a, c: c, byPart: byPart, compact: compact, notOK: notOK, parts: parts}
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
		p.regs = append(p.regs, &linJob{name: name, reg: reg, ops: ops})
	}
	return p
}

// partJob builds partition pi's job, or nil when it has no operation to
// judge.
func (p *linPlan) partJob(pi int32) *linJob {
	a, notOK, byPart, compact := p.a, p.notOK, p.byPart, p.compact
	po := a.parts[pi]
	// Where polls first saw each value whose send did not say where it
	// went.
	firstRead := map[int32][2]int64{} // value -> (offset, completion)
	for ob := range po.reads() {
		if a.obsFlags(ob)&obsRead == 0 || notOK[ob.val>>6]&(1<<(ob.val&63)) == 0 {
			continue
		}
		if f, ok := firstRead[ob.val]; !ok || ob.op < f[1] {
			firstRead[ob.val] = [2]int64{ob.off, ob.op}
		}
	}
	// Sends that never said where they went, but were read here.
	sends := byPart[pi]
	byPart[pi] = nil // built once: its operations follow
	var unplaced []int32
	for v := range firstRead { // kafkasim:orderless: sorted below
		if si := a.valSend[v]; si >= 0 && a.sends[si].part() < 0 && a.sends[si].typ != history.Fail && a.sendTopic(&a.sends[si]) == po.topic {
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
		return nil
	}
	ops := make([]logOp, 0, n) // one allocation for the partition's operations
	for _, si := range sends {
		s := &a.sends[si]
		if s.typ == history.Fail {
			continue // not counted in n
		}
		complete := a.complete(s)
		op := logOp{off: a.offset(s), val: s.val, txn: a.txn(s) >= 0, proc: s.proc, call: a.invoke(s), ret: complete}
		switch s.typ {
		case history.OK:
		default:
			f, ok := firstRead[s.val]
			if !ok {
				continue // never seen: it may not have happened
			}
			op.off, op.ret = f[0], max(f[1], a.invoke(s))
			op.unreturned = true
		}
		ops = append(ops, op)
	}
	var byRead [][]linRec
	if po.lin.recs == nil {
		byRead = a.readRecords(po)
	}
	// The reads' records, sorted in place: nothing else uses them.
	for k, r := range po.lin.reads {
		var recs []linRec
		if byRead != nil {
			recs = byRead[k]
		} else {
			recs = po.lin.recs[po.lin.from(k):r.to:r.to]
		}
		out := recs
		switch {
		case ascending(recs):
			// A poll returns a partition's records in offset order:
			// reversed, they are sorted, and none repeats.
			slices.Reverse(recs)
		default:
			slices.SortFunc(recs, func(x, y linRec) int {
				if c := cmp.Compare(y.off, x.off); c != 0 {
					return c
				}
				return cmp.Compare(x.val, y.val)
			})
			out = recs[:0]
			for i, x := range recs {
				if i == 0 || x != recs[i-1] {
					out = append(out, x)
				}
			}
		}
		call, ret := po.lin.call(k), po.lin.ret(k)
		ops = append(ops, logOp{read: true, recs: out, rc: r.rc, proc: r.proc, call: call, ret: ret})
	}
	base := logModel{skipAll: compact[a.topics[po.topic]], names: a.valName}
	// The reads' records are the job's now: nothing else reads them.
	po.lin = linLog{}
	return &linJob{name: po.name, log: ops, model: base.withLog(ops, newLog()), crossCheck: p.c.CrossCheckLogs}
}

// porcupineOps returns the job's operations as porcupine takes them.
func (j *linJob) porcupineOps() []porcupine.Operation {
	if j.ops == nil && j.log != nil {
		j.ops = porcupineOps(j.log)
	}
	return j.ops
}

func porcupineOps(log []logOp) []porcupine.Operation {
	ops := make([]porcupine.Operation, len(log))
	for i := range log {
		op := &log[i]
		ops[i] = porcupine.Operation{ClientId: int(op.proc), Input: op, Call: op.call, Return: op.ret, Metadata: op}
	}
	return ops
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
		c, bad := j.model.scan(j.log)
		if !bad {
			j.result = porcupine.Ok
			if j.crossCheck {
				if r, _ := check(j.model.porcupine(), j.porcupineOps(), until); r == porcupine.Illegal {
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

// ascending reports whether recs' offsets strictly ascend.
func ascending(recs []linRec) bool {
	for i := 1; i < len(recs); i++ {
		if recs[i].off <= recs[i-1].off {
			return false
		}
	}
	return true
}

// readRecords returns the records each of a partition's reads returned
// (po.lin.reads' order): the records its operation read (an index names
// one poll: keepLinRecs), taken from the observation store's runs and
// whole reads as they were read, a run's in ascending offsets. partJob
// makes each read's a set, by descending offset (a record read twice is
// kept once).
func (a *analyzer) readRecords(po *partState) [][]linRec {
	reads := po.lin.reads
	if len(reads) == 0 {
		return nil
	}
	// Each run's and whole read's read, found by its operation: reads are
	// in history order, their rets strictly increasing.
	read := po.lin.readAt
	st := &po.obs
	counts := make([]int32, len(reads)+1)
	for _, r := range st.runs {
		if k := read(st.runOp(&r)); k >= 0 {
			counts[k+1] += r.n
		}
	}
	for i := range st.extra {
		if k := read(st.extra[i].op); k >= 0 {
			counts[k+1]++
		}
	}
	for k := 1; k < len(counts); k++ {
		counts[k] += counts[k-1]
	}
	recs := make([]linRec, counts[len(reads)])
	byRead := make([][]linRec, len(reads))
	for k := range reads {
		byRead[k] = recs[counts[k]:counts[k+1]:counts[k+1]]
	}
	next := counts[:len(reads)] // where each read's next record goes
	for _, r := range st.runs {
		if k := read(st.runOp(&r)); k >= 0 {
			first := st.runFirst(&r)
			for j := range int64(r.n) {
				recs[next[k]] = linRec{off: first + j, val: st.canon[first+j-st.base]}
				next[k]++
			}
		}
	}
	for i := range st.extra {
		ob := &st.extra[i]
		if k := read(ob.op); k >= 0 {
			recs[next[k]] = linRec{off: ob.off, val: ob.val}
			next[k]++
		}
	}
	return byRead
}
