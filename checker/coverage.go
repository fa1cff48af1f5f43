package checker

import (
	"cmp"
	"math"
	"slices"
	"sort"

	"kafkasim/godview"
)

// poll-skip by coverage: a session that read past a record the final reads
// hold without ever reading it. Apart from pollskip.go because it compares
// each session with the final reads rather than a jump with the known
// offsets; a record inside a jump checkSkips reported goes into that jump's
// finding.

// checkCoverage: a reader reads every record between where its session
// started and how far it got. A record the final reads hold inside that
// range that the session never read was skipped, even if its offset was read
// once with another record (after a truncation the reader must go back:
// KIP-320), if the session read on past that offset once the record could be
// there: a session that read the offset's earlier record and got no further
// before this one was sent skipped nothing (the earlier record's fate is the
// lost-write and inconsistent-offsets rules' to judge). A record inside a
// jump that checkSkips reported is that jump's skip: one jump is one finding,
// which this check names the record of. For a group member a session runs
// from an assign to a revoke.
func (a *analyzer) checkCoverage() {
	type sv struct { // 24 bytes: a partition's reads, twice over
		sess int32
		val  int32
		off  int64
		op   int64 // the poll that read it
	}
	// The jumps checkSkips reported, by session; and those it did not
	// (the cleaner may have removed what they passed over).
	jumps, cleaned := map[int32][]int32{}, map[int32][]int32{}
	for i := range a.skips {
		if c := &a.skips[i]; c.finding >= 0 {
			jumps[c.sess] = append(jumps[c.sess], int32(i))
		} else {
			cleaned[c.sess] = append(cleaned[c.sess], int32(i))
		}
	}
	var finals []observation
	var reads, bySess []sv
	perSess := make([]int32, len(a.sessions)+1)
	var lastOp []int64 // lastOp[k]: the latest poll among run[k:], built when needed
	for _, pi := range a.sortedParts() {
		po := a.parts[pi]
		if po.finalEnd < 0 {
			continue
		}
		// Counted first, so that the lists (reused from partition to
		// partition) grow once rather than by doubling.
		nFinal, nRead := 0, 0
		for ob := range po.reads() {
			if f := a.obsFlags(ob); f&obsFinal != 0 {
				nFinal++
			} else if f&obsRead != 0 {
				nRead++
			}
		}
		finals, reads = slices.Grow(finals[:0], nFinal), slices.Grow(reads[:0], nRead)
		for ob := range po.reads() {
			if a.obsFlags(ob)&obsFinal != 0 {
				if len(finals) == 0 || finals[len(finals)-1].off != ob.off || finals[len(finals)-1].val != ob.val {
					finals = append(finals, *ob)
				}
			} else if a.obsFlags(ob)&obsRead != 0 {
				reads = append(reads, sv{sess: ob.sess, val: ob.val, off: ob.off, op: ob.op})
			}
		}
		if len(finals) == 0 || len(reads) == 0 {
			continue
		}
		// Where the god view saw committed data of the partition lost:
		// offsets at or after it may have been.
		lossFrom := int64(math.MaxInt64)
		for _, l := range a.cfg.Happened.Of(godview.Loss) {
			if l.Partition == po.name {
				lossFrom = min(lossFrom, l.From)
			}
		}
		// The reads come in the observations' order (offset, value,
		// operation): gathering them by session, each session's in that
		// order, is sorting them by (session, offset, value, operation),
		// in linear time.
		bySess = placeBy(slices.Grow(bySess[:0], len(reads))[:len(reads)], reads, perSess, func(r *sv) int { return int(r.sess) })
		reads, bySess = bySess, reads
		for lo := 0; lo < len(reads); {
			hi := lo
			for hi < len(reads) && reads[hi].sess == reads[lo].sess {
				hi++
			}
			run := reads[lo:hi]
			sid := reads[lo].sess
			lo = hi
			s := &a.sessions[sid]
			js, cjs := jumps[sid], cleaned[sid]
			for _, l := range [][]int32{js, cjs} {
				slices.SortFunc(l, func(x, y int32) int { return cmp.Compare(a.skips[x].prev, a.skips[y].prev) })
			}
			lastOp = lastOp[:0]
			f := sort.Search(len(finals), func(i int) bool { return finals[i].off >= s.first })
			r := 0
			for ; f < len(finals) && finals[f].off <= s.max; f++ {
				fin := &finals[f]
				if s.rc && !a.visibleToRC(fin.val) {
					continue
				}
				for r < len(run) && run[r].off < fin.off {
					r++
				}
				found := false
				for k := r; k < len(run) && run[k].off == fin.off; k++ {
					if run[k].val == fin.val {
						found = true
						break
					}
				}
				if !found {
					// The value may sit at another offset too (a duplicate).
					for k := range run {
						if run[k].val == fin.val {
							found = true
							break
						}
					}
				}
				if found || a.compactable(pi, fin.off) {
					// (Replicas compact on their own schedules: the
					// leader the reader read from may have cleaned away
					// a record that the one the final reads read from
					// still holds.)
					continue
				}
				readOther := r < len(run) && run[r].off == fin.off
				// A jump over the offset that checkSkips let pass
				// (compactableBefore): the cleaner may have removed this
				// record if it was sent before the jump (its key comes
				// again); one sent after took the offset later, and the
				// session went past the offset before it was there, as
				// one that read another record there did (fuzz seed
				// 325955). A session that read another record at the offset and
				// then, gone back after a loss (KIP-320), jumped over it
				// in the log the final reads show passed it that way too
				// (fuzz seed 393854); a jump before that read is not its
				// last pass over the offset.
				lastRead := int64(-1) // the latest poll that read another record there
				for k := r; k < len(run) && run[k].off == fin.off; k++ {
					lastRead = max(lastRead, run[k].op)
				}
				passedCleaned := false
				if j := a.jumpOver(cjs, fin.off); j != nil && (!readOther || j.op > lastRead) {
					if si := a.valSend[fin.val]; si < 0 || a.invoke(&a.sends[si]) < j.op {
						continue
					}
					passedCleaned = true
				}
				if j := a.jumpOver(js, fin.off); j != nil {
					a.nameSkipped(j, fin)
					// The records after it that the jump passed over are
					// its too.
					for f+1 < len(finals) && finals[f+1].off < j.next {
						f++
					}
					continue
				}
				if readOther || passedCleaned {
					if len(lastOp) == 0 {
						// A read of a record the god view saw lost (final
						// reads hold another there) is a read of the log
						// that was lost, however late the poll returned it
						// (records fetched before the loss wait in the
						// consumer's buffer): it says nothing of how far the
						// session got in the log the final reads show.
						lastOp = slices.Grow(lastOp, len(run))[:len(run)]
						for k := len(run) - 1; k >= 0; k-- {
							lastOp[k] = -1
							if run[k].off < lossFrom || finalsHold(finals, run[k].off, run[k].val) {
								lastOp[k] = run[k].op
							}
							if k+1 < len(run) {
								lastOp[k] = max(lastOp[k], lastOp[k+1])
							}
						}
					}
					k := r
					for k < len(run) && run[k].off == fin.off {
						k++
					}
					// (Without its send, when the record got there is
					// unknown: a skip.)
					if si := a.valSend[fin.val]; si >= 0 && (k == len(run) || lastOp[k] < a.invoke(&a.sends[si])) {
						continue // it read no further once the record was sent
					}
					// A record at or above the new leader's log end took the
					// offset only after the loss that took the one read there:
					// a session that read no further before that loss was
					// served by leaders that still held the record it read,
					// and had nothing to go back for.
					if end, lossOp, ok := a.lastLossOf(po.name, fin.off); ok && fin.off >= end && lastOp[k] < lossOp {
						continue
					}
				}
				name := a.procs[s.proc].name
				a.findings = append(a.findings, Finding{Type: PollSkip, Example: Example{Partition: po.name, Offset: fin.off,
					Value: a.valName(fin.val), Process: name, Ops: []int64{fin.op},
					Detail: name + " read " + po.name + " from " + itoa(s.first) + " to " + itoa(s.max) + " but never the record at " + itoa(fin.off) + " that the log holds"},
					readOther: readOther})
				break
			}
		}
	}
}

// finalsHold reports whether the final reads (sorted by offset) hold the
// record val at off.
func finalsHold(finals []observation, off int64, val int32) bool {
	for i := sort.Search(len(finals), func(i int) bool { return finals[i].off >= off }); i < len(finals) && finals[i].off == off; i++ {
		if finals[i].val == val {
			return true
		}
	}
	return false
}
