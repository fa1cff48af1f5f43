package checker

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"kafkasim/history"
)

// inconsistent-offsets, duplicate, aborted-read and phantom-read: what polls
// and acknowledgements put at each offset, over the version order. Two
// values at one offset, one value at several, a read of a send that
// definitely failed or that nobody made.

// checkOffsets: two values at one offset; one value at two offsets; reads
// of writes that definitely failed, or that nobody sent.
func (a *analyzer) checkOffsets() {
	nPos := make([]int32, len(a.valSend))
	for _, pi := range a.sortedParts() {
		po := a.parts[pi]
		for _, obs := range po.groups() {
			off := obs[0].off
			distinct := 0
			for i := range obs {
				if i == 0 || obs[i].val != obs[i-1].val {
					distinct++
					nPos[obs[i].val]++
				}
			}
			if distinct > 1 {
				var names []string
				var ops []int64
				for i := range obs {
					if i == 0 || obs[i].val != obs[i-1].val {
						names = append(names, a.valName(obs[i].val))
					}
					ops = append(ops, obs[i].op)
				}
				sort.Strings(names)
				a.findings = append(a.findings, Finding{Type: InconsistentOffsets, Example: Example{Partition: po.name, Offset: off,
					Value: names[0], Ops: sortedUnique(ops), Detail: "values [" + strings.Join(capList(names, 8), " ") + "] at one offset"}})
			}
		}
	}
	// Values that need their positions and observers spelled out.
	flagged := map[int32]bool{}
	for v := range a.valSend {
		si := a.valSend[v]
		switch {
		case nPos[v] > 1:
			flagged[int32(v)] = true
		case si >= 0 && a.sends[si].typ == history.Fail && nPos[v] > 0:
			flagged[int32(v)] = true
		case si < 0 && len(a.sends) > 0 && nPos[v] > 0:
			flagged[int32(v)] = true
		}
	}
	if len(flagged) == 0 {
		return
	}
	type where struct {
		pos  []string
		part []string
		off  []int64
		ops  []int64
	}
	ws := map[int32]*where{}
	for _, pi := range a.sortedParts() {
		po := a.parts[pi]
		for ob := range po.all() {
			if !flagged[ob.val] {
				continue
			}
			w := ws[ob.val]
			if w == nil {
				w = &where{}
				ws[ob.val] = w
			}
			pos := po.name + "@" + itoa(ob.off)
			if len(w.pos) == 0 || w.pos[len(w.pos)-1] != pos {
				w.pos = append(w.pos, pos)
				w.part = append(w.part, po.name)
				w.off = append(w.off, ob.off)
			}
			w.ops = append(w.ops, ob.op)
		}
	}
	ids := make([]int32, 0, len(ws))
	for v := range ws { // kafkasim:orderless: sorted below
		ids = append(ids, v)
	}
	slices.Sort(ids)
	for _, v := range ids {
		w := ws[v]
		name := a.valName(v)
		si := a.valSend[v]
		if len(w.pos) > 1 {
			a.stats.Duplicates++
			ex := Example{Partition: w.part[0], Offset: w.off[0], Value: name, Ops: sortedUnique(append([]int64(nil), w.ops...)),
				Detail: "one value at " + strconv.Itoa(len(w.pos)) + " offsets: [" + strings.Join(capList(w.pos, 8), " ") + "]"}
			if si >= 0 {
				ex.Process = a.procs[a.sends[si].proc].name
			}
			copies := make([]copyAt, len(w.pos))
			for i := range w.pos {
				copies[i] = copyAt{w.part[i], w.off[i]}
			}
			a.findings = append(a.findings, Finding{Type: Duplicate, Example: ex, copies: copies})
		}
		switch {
		case si >= 0 && a.sends[si].typ == history.Fail:
			s := &a.sends[si]
			a.findings = append(a.findings, Finding{Type: AbortedRead, Example: Example{Partition: w.part[0], Offset: w.off[0], Value: name,
				Process: a.procs[s.proc].name, Ops: append([]int64{a.invoke(s), a.complete(s)}, capOps(sortedUnique(w.ops), 16)...),
				Detail: "read a record whose send definitely failed"}, failedSend: true})
		case si < 0:
			a.findings = append(a.findings, Finding{Type: PhantomRead, Example: Example{Partition: w.part[0], Offset: w.off[0], Value: name,
				Ops: capOps(sortedUnique(w.ops), 16), Detail: "read a record no process sent"}})
		}
	}
}
