package checker

import (
	"sort"
	"strings"
)

// Transactional cycles, after Jepsen's kafka.clj (ww-graph, wr-graph, Elle's
// G0 and G1c) over committed transactions:
//
//	ww  T1 -> T2: in one partition's version order a record of T1 comes
//	    before a record of T2, with no other committed transaction's record
//	    in between (Jepsen: the previous value's writer).
//	wr  T1 -> T2: a poll attributed to T2 returned a record of T1. A
//	    read-process-write client polls, then begins a transaction, sends and
//	    commits: the polls a process completed after its previous
//	    transaction ended and before this one's commit was invoked belong to
//	    this one.
//	rt  T1 -> T2: T1's commit was acknowledged before T2 began (realtime
//	    order; "process" order when both ran on one process).
//
// G0 is a cycle of ww edges; G1c a cycle with at least one wr edge. Kafka's
// transactions are atomic but not isolated: records are ordered when they
// are appended, not when their transaction commits. So, as Jepsen's checker
// notes (allowed-error-types), ww and wr cycles are normal for Kafka, and a
// cycle is a violation only if it orders events against themselves in real
// time. To decide that, every committed transaction T is two events: its
// start s(T) (txn-begin's invocation, or its first send) and its commit
// point e(T) (within its txn-commit), with s(T) < e(T). Each edge says which
// events precede which:
//
//	ww T1 -> T2                       s(T1) < e(T2)  (T1 appended before T2 did)
//	wr T1 -> T2, read_uncommitted     s(T1) < e(T2)  (T1 appended, T2 read it)
//	wr T1 -> T2, read_committed       e(T1) < e(T2)  (T1 committed, T2 read it)
//	rt T1 -> T2                       e(T1) < s(T2)
//
// and ww precedence is transitive along a partition's version order (every
// earlier writer's start precedes every later writer's commit point). A cycle
// in this event graph is impossible in any execution: a violation, reported
// as G0 (no wr edge) or G1c, with the transactions it runs through. Cycles
// of the transaction graph that are not event cycles (a "G0" of two
// producers interleaving in two partitions in opposite orders, say) are
// reported as permitted. Both graphs are linear in size (realtime edges go
// through a chain of barrier nodes, ww precedence through a chain of
// per-partition nodes); cycles are found with Tarjan's SCC algorithm and one
// shortest cycle is extracted per strongly connected component.
//
// Transactions that did not commit are not in the graphs (their records are
// aborted-read or uncommitted-read material); non-transactional sends are
// not either.
//
// Known weaknesses (Jepsen's too): no rw (anti-dependency) edges, so G2 is
// not found; a transaction's reads are attributed by process order, so a
// recorder that polls on one process and produces on another shows no wr
// edges; an indeterminate commit that a read_committed reader saw counts as
// committed but has no realtime end.

const (
	edgeInternal uint8 = iota
	edgeWW
	edgeWR
	edgeRT
)

type digraph struct {
	n     int32
	from  []int32
	to    []int32
	kind  []uint8
	label []int32
	start []int32 // CSR: the edges leaving v are adj[start[v]:start[v+1]]
	adj   []int32
	// offset: the offset of the record a ww chain node stands for.
	offset map[int32]int64
}

func (g *digraph) node() int32 {
	g.n++
	return g.n - 1
}

func (g *digraph) edge(u, v int32, kind uint8, label int32) {
	g.from = append(g.from, u)
	g.to = append(g.to, v)
	g.kind = append(g.kind, kind)
	g.label = append(g.label, label)
}

func (g *digraph) freeze() {
	g.start = make([]int32, g.n+1)
	for _, u := range g.from {
		g.start[u+1]++
	}
	for i := int32(0); i < g.n; i++ {
		g.start[i+1] += g.start[i]
	}
	g.adj = make([]int32, len(g.from))
	pos := append([]int32(nil), g.start[:g.n]...)
	for e, u := range g.from {
		g.adj[pos[u]] = int32(e)
		pos[u]++
	}
}

// scc labels each node with its strongly connected component (iterative
// Tarjan) and returns the labels and each component's size.
func (g *digraph) scc() ([]int32, []int32) {
	n := g.n
	index := make([]int32, n)
	low := make([]int32, n)
	comp := make([]int32, n)
	on := make([]bool, n)
	for i := range index {
		index[i], comp[i] = -1, -1
	}
	var stack []int32
	type frame struct{ v, e int32 }
	var call []frame
	var sizes []int32
	next := int32(0)
	visit := func(v int32) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		on[v] = true
		call = append(call, frame{v, g.start[v]})
	}
	for s := int32(0); s < n; s++ {
		if index[s] >= 0 {
			continue
		}
		visit(s)
		for len(call) > 0 {
			f := &call[len(call)-1]
			v := f.v
			if f.e < g.start[v+1] {
				w := g.to[g.adj[f.e]]
				f.e++
				if index[w] < 0 {
					visit(w)
				} else if on[w] {
					low[v] = min(low[v], index[w])
				}
				continue
			}
			call = call[:len(call)-1]
			if low[v] == index[v] {
				c := int32(len(sizes))
				size := int32(0)
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					on[w] = false
					comp[w] = c
					size++
					if w == v {
						break
					}
				}
				sizes = append(sizes, size)
			}
			if len(call) > 0 {
				p := call[len(call)-1].v
				low[p] = min(low[p], low[v])
			}
		}
	}
	return comp, sizes
}

// cycleThrough returns the edges of a shortest cycle from u back to u inside
// u's component (breadth first).
func (g *digraph) cycleThrough(u int32, comp []int32, parent []int32) []int32 {
	c := comp[u]
	var touched []int32
	defer func() {
		for _, v := range touched {
			parent[v] = -1
		}
	}()
	queue := []int32{u}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, e := range g.adj[g.start[v]:g.start[v+1]] {
			w := g.to[e]
			if comp[w] != c {
				continue
			}
			if w == u {
				var path []int32
				for x := e; ; {
					path = append(path, x)
					if g.from[x] == u {
						break
					}
					x = parent[g.from[x]]
				}
				for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
					path[i], path[j] = path[j], path[i]
				}
				return path
			}
			if parent[w] >= 0 {
				continue
			}
			parent[w] = e
			touched = append(touched, w)
			queue = append(queue, w)
		}
	}
	return nil
}

// cycleStep is one edge of a cycle between two transactions.
type cycleStep struct {
	from, to int32
	kind     uint8
	label    int32
	// offset: a ww step of the event graph starts at the record of from
	// at this offset (-1 otherwise).
	offset int64
}

func (a *analyzer) checkCycles() {
	nT := int32(len(a.txns))
	if nT < 2 {
		return
	}
	committed := func(t int32) bool { return a.txns[t].outcome == txnCommitted }
	tg := &digraph{n: nT}                                // transactions, ww and wr (Jepsen's graph)
	eg := &digraph{n: 2 * nT, offset: map[int32]int64{}} // events s(T) = 2T, e(T) = 2T+1, and helper nodes
	nodes := 0
	for t := int32(0); t < nT; t++ {
		if committed(t) {
			eg.edge(2*t, 2*t+1, edgeInternal, -1)
			nodes++
		}
	}
	if nodes < 2 {
		return
	}
	// ww: each partition's committed transactional records in offset order.
	for _, pi := range a.sortedParts() {
		po := a.parts[pi]
		prev, prevAux := int32(-1), int32(-1)
		for _, obs := range po.groups() {
			off := obs[0].off
			v := obs[0].val
			if obs[len(obs)-1].val != v {
				continue // inconsistent offsets: no version order here
			}
			si := a.valSend[v]
			if si < 0 {
				continue
			}
			t := a.txn(&a.sends[si])
			if t < 0 || !committed(t) || t == prev {
				continue
			}
			aux := eg.node()
			eg.offset[aux] = off
			if prev >= 0 {
				tg.edge(prev, t, edgeWW, pi)
				eg.edge(prevAux, 2*t+1, edgeWW, pi)
				eg.edge(prevAux, aux, edgeWW, pi)
			}
			eg.edge(2*t, aux, edgeWW, pi)
			prev, prevAux = t, aux
		}
	}
	// wr: what each committed transaction read.
	for t := int32(0); t < nT; t++ {
		if !committed(t) {
			continue
		}
		refs := append([]readRef(nil), a.txns[t].reads...)
		sort.Slice(refs, func(i, j int) bool {
			if refs[i].txn != refs[j].txn {
				return refs[i].txn < refs[j].txn
			}
			return !refs[i].rc && refs[j].rc
		})
		for i, r := range refs {
			w := r.txn
			if w == t || !committed(w) || (i > 0 && refs[i-1].txn == w && refs[i-1].rc == r.rc) {
				continue
			}
			if i == 0 || refs[i-1].txn != w {
				tg.edge(w, t, edgeWR, -1)
			}
			if r.rc {
				eg.edge(2*w+1, 2*t+1, edgeWR, -1)
			} else {
				eg.edge(2*w, 2*t+1, edgeWR, -1)
			}
		}
	}
	// rt: commit acknowledged before the other began, through barriers.
	type event struct {
		at  int64
		end bool
		t   int32
	}
	var evs []event
	for t := int32(0); t < nT; t++ {
		if !committed(t) {
			continue
		}
		tr := &a.txns[t]
		evs = append(evs, event{at: tr.begin, t: t})
		if tr.okCommit {
			evs = append(evs, event{at: tr.end, end: true, t: t})
		}
	}
	sort.Slice(evs, func(i, j int) bool {
		if evs[i].at != evs[j].at {
			return evs[i].at < evs[j].at
		}
		return !evs[i].end && evs[j].end
	})
	barrier, fresh := int32(-1), false
	for _, ev := range evs {
		if ev.end {
			if !fresh {
				b := eg.node()
				if barrier >= 0 {
					eg.edge(barrier, b, edgeRT, -1)
				}
				barrier, fresh = b, true
			}
			eg.edge(2*ev.t+1, barrier, edgeRT, -1)
		} else {
			if barrier >= 0 {
				eg.edge(barrier, 2*ev.t, edgeRT, -1)
			}
			fresh = false
		}
	}

	eg.freeze()
	comp, sizes := eg.scc()
	parent := make([]int32, eg.n)
	for i := range parent {
		parent[i] = -1
	}
	inViolation := make([]bool, nT)
	for v := int32(0); v < 2*nT; v++ {
		if sizes[comp[v]] >= 2 {
			inViolation[v/2] = true
		}
	}
	reported := make([]bool, len(sizes))
	for v := int32(0); v < 2*nT; v++ {
		c := comp[v]
		if sizes[c] < 2 || reported[c] {
			continue
		}
		reported[c] = true
		path := eg.cycleThrough(v, comp, parent)
		a.reportCycle(a.cycleSteps(eg, path, nT), true)
	}

	tg.freeze()
	comp, sizes = tg.scc()
	parent = make([]int32, tg.n)
	for i := range parent {
		parent[i] = -1
	}
	// A component holding a transaction of a violating cycle is reported
	// by that cycle.
	reported = make([]bool, len(sizes))
	for t := int32(0); t < nT; t++ {
		if inViolation[t] {
			reported[comp[t]] = true
		}
	}
	for t := int32(0); t < nT; t++ {
		c := comp[t]
		if sizes[c] < 2 || reported[c] {
			continue
		}
		reported[c] = true
		path := tg.cycleThrough(t, comp, parent)
		steps := make([]cycleStep, 0, len(path))
		for _, e := range path {
			steps = append(steps, cycleStep{from: tg.from[e], to: tg.to[e], kind: tg.kind[e], label: tg.label[e]})
		}
		a.reportCycle(steps, false)
	}
}

// cycleSteps turns a cycle of the event graph into steps between
// transactions.
func (a *analyzer) cycleSteps(g *digraph, path []int32, nT int32) []cycleStep {
	var steps []cycleStep
	cur := cycleStep{from: -1}
	for _, e := range path {
		if g.kind[e] == edgeInternal {
			continue
		}
		u, v := g.from[e], g.to[e]
		if u < 2*nT {
			cur = cycleStep{from: u / 2, kind: g.kind[e], label: g.label[e], offset: -1}
			if off, ok := g.offset[v]; ok && g.kind[e] == edgeWW {
				cur.offset = off
			}
		}
		if v < 2*nT && cur.from >= 0 {
			cur.to = v / 2
			steps = append(steps, cur)
			cur = cycleStep{from: -1}
		}
	}
	return steps
}

func (a *analyzer) txnName(t int32) string {
	tr := &a.txns[t]
	s := a.procs[tr.proc].name + "'s transaction #" + itoa(tr.begin)
	if tr.end >= 0 {
		s += "–#" + itoa(tr.end)
	}
	return s
}

func (a *analyzer) reportCycle(steps []cycleStep, impossible bool) {
	if len(steps) == 0 {
		return
	}
	typ := G0
	var ops []int64
	part := ""
	ww, wr, rt := false, false, false
	var wwFrom []partOffset
	var b strings.Builder
	for i, s := range steps {
		tr := &a.txns[s.from]
		ops = append(ops, tr.begin)
		if tr.end >= 0 {
			ops = append(ops, tr.end)
		}
		if i < 8 {
			b.WriteString(a.txnName(s.from))
		}
		var kind string
		switch s.kind {
		case edgeWW:
			ww = true
			kind = "ww " + a.parts[s.label].name
			if s.offset >= 0 {
				wwFrom = append(wwFrom, partOffset{a.parts[s.label].name, s.offset})
			}
			if part == "" {
				part = a.parts[s.label].name
			}
		case edgeWR:
			wr = true
			typ = G1c
			kind = "wr"
		case edgeRT:
			rt = true
			kind = "realtime"
			if a.txns[s.from].proc == a.txns[s.to].proc {
				kind = "process"
			}
		}
		if i < 8 {
			b.WriteString(" -" + kind + "-> ")
		}
	}
	if len(steps) > 8 {
		b.WriteString("… -> ")
	}
	b.WriteString(a.txnName(steps[0].from))
	a.findings = append(a.findings, Finding{Type: typ, impossible: impossible, viaWW: ww, viaWR: wr, viaRT: rt, wwFrom: wwFrom,
		Example: Example{Partition: part, Process: a.procs[a.txns[steps[0].from].proc].name, Offset: -1,
			Ops: sortedUnique(ops), Detail: b.String()}})
}
