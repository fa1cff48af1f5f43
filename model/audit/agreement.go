package audit

import (
	"math"

	"kafkasim/model/partlog"
	"kafkasim/model/record"
)

// Where a replica's log stops holding what was committed, or what its
// leader's holds, found by comparing only what may have changed since the
// last such comparison: every recovery, election and ISR join asks, and a
// day-long run's log holds millions of batches that stay as they were
// between two asks.

// agreement is what the last comparison of a broker's replica log with what
// was committed found.
type agreement struct {
	broker int32
	// runs are the log's batches then, as the memory that held them
	// (partlog.Log.EachRun): a run met again holds the same batches.
	runs [][]*record.Batch
	// from is the log start then. Every committed batch that ends at or
	// after it and starts below upTo was in the log: the same batch, or,
	// from gapFrom on (math.MaxInt64: none), perhaps no batch at all there
	// (cleaned away, or a gap a corrupt base offset left).
	from, upTo, gapFrom int64
}

// agreementOf returns broker's agreement, added (nothing known) if missing.
func (p *partitionAudit) agreementOf(broker int32) *agreement {
	for i := range p.agreements {
		if p.agreements[i].broker == broker {
			return &p.agreements[i]
		}
	}
	p.agreements = append(p.agreements, agreement{broker: broker, gapFrom: math.MaxInt64})
	return &p.agreements[len(p.agreements)-1]
}

// committedCut forgets what the agreements say of committed batches past
// what is committed now: a loss took them, and batches committed next may
// start below where they did (right after the last one left, or at 0).
func (p *partitionAudit) committedCut() {
	for i := range p.agreements {
		p.agreements[i].upTo = min(p.agreements[i].upTo, p.committedEnd())
	}
}

// firstDisagreement is the index in committed of the first batch, among
// those log's start has not passed, that broker's replica log does not
// hold: where the log holds another batch, or none and gapBad says a gap
// counts, or the first committed batch at or past the log's end;
// committed.Len() when there is none. Only the committed batches from
// where the log may have changed since the last comparison are looked at.
func (p *partitionAudit) firstDisagreement(broker int32, log *partlog.Log, gapBad bool) int {
	g := p.agreementOf(broker)
	start, end := log.LogStartOffset(), log.LEO()
	i, _ := p.committedAt(start)
	resume := start
	gapFrom := int64(math.MaxInt64)
	if start >= g.from {
		// The committed batches below known were found in the log, which
		// holds the same batches below it. (A log start that went back,
		// which only a restart can do, brings back batches that were
		// not compared.)
		known := min(g.upTo, unchangedBelow(g.runs, log, start))
		if gapBad {
			known = min(known, g.gapFrom)
		}
		if known > resume {
			resume = known
			i = max(i, p.committed.Search(func(k *batchKey) bool { return k.base >= known }))
			if g.gapFrom < known {
				gapFrom = g.gapFrom
			}
		}
	}
	cursor := log.Cursor(resume) // committed batches are in offset order
	for ; i < p.committed.Len(); i++ {
		k := p.committed.At(i)
		if k.base >= end {
			break
		}
		b := cursor.At(k.base)
		if b == nil && !gapBad {
			gapFrom = min(gapFrom, k.base)
			continue
		}
		if b == nil || !keyOf(b).same(*k) {
			break
		}
	}
	g.from, g.upTo, g.gapFrom = start, p.committedEnd(), gapFrom
	if i < p.committed.Len() {
		g.upTo = p.committed.At(i).base
	}
	g.runs = takeRuns(log, g.runs[:0])
	return i
}

// joinAgreement is what the last comparison of a member's log with its
// leader's found, when the member joined the leader's ISR (ISRJoined).
type joinAgreement struct {
	leader, member int32
	// leaderRuns and memberRuns are the two logs' batches then.
	leaderRuns, memberRuns [][]*record.Batch
	// from is where the comparison started then (the later log start).
	// Every batch of the leader's log that ends at or after it and starts
	// below upTo was in the member's: the same batch, or, from gapFrom on
	// (math.MaxInt64: none), none there (its cleaner removed it).
	from, upTo, gapFrom int64
}

// joinAgreementOf returns member's join agreement with leader, added
// (nothing known) if missing. Each pair keeps its own: leadership moves at
// every crash, and a member rejoins whichever broker leads.
func (p *partitionAudit) joinAgreementOf(leader, member int32) *joinAgreement {
	for i := range p.joinAgreements {
		if j := &p.joinAgreements[i]; j.leader == leader && j.member == member {
			return j
		}
	}
	p.joinAgreements = append(p.joinAgreements, joinAgreement{leader: leader, member: member, gapFrom: math.MaxInt64})
	return &p.joinAgreements[len(p.joinAgreements)-1]
}

// resume is where a comparison of member's log with leader's, from from,
// must start: below it, the last comparison found them agreeing and
// neither log changed since. gapFrom is the first gap the member's log has
// there (math.MaxInt64: none); gapBad says a gap counts against it.
func (j *joinAgreement) resume(ll, ml *partlog.Log, from int64, gapBad bool) (resume, gapFrom int64) {
	resume, gapFrom = from, math.MaxInt64
	if from < j.from {
		return resume, gapFrom
	}
	known := min(j.upTo, unchangedBelow(j.leaderRuns, ll, ll.LogStartOffset()), unchangedBelow(j.memberRuns, ml, ml.LogStartOffset()))
	if gapBad {
		known = min(known, j.gapFrom)
	}
	if known > resume {
		resume = known
		if j.gapFrom < known {
			gapFrom = j.gapFrom
		}
	}
	return resume, gapFrom
}

// remember records what a comparison of the two logs from from found.
func (j *joinAgreement) remember(ll, ml *partlog.Log, from, upTo, gapFrom int64) {
	j.from, j.upTo, j.gapFrom = from, upTo, gapFrom
	j.leaderRuns = takeRuns(ll, j.leaderRuns[:0])
	j.memberRuns = takeRuns(ml, j.memberRuns[:0])
}

// takeRuns appends log's runs to runs.
func takeRuns(log *partlog.Log, runs [][]*record.Batch) [][]*record.Batch {
	log.EachRun(func(run []*record.Batch) bool {
		runs = append(runs, run)
		return true
	})
	return runs
}

// unchangedBelow is an offset below which log, which starts at start, holds
// exactly the batches it held when runs were taken, but for those below
// start (retention deletes whole segments, from the oldest); math.MinInt64
// when nothing is known to be unchanged.
func unchangedBelow(runs [][]*record.Batch, log *partlog.Log, start int64) int64 {
	below := int64(math.MinInt64)
	j := -1 // the run taken that the log's run now compared was
	log.EachRun(func(run []*record.Batch) bool {
		if j < 0 {
			for j = 0; j < len(runs) && &runs[j][0] != &run[0]; j++ {
			}
			// The runs taken before the log's first are gone: what they
			// held must be below its start, not only below that run.
			if j == len(runs) || (j > 0 && runs[j-1][len(runs[j-1])-1].LastOffset() >= start) {
				return false
			}
		} else if j++; j == len(runs) || &runs[j][0] != &run[0] {
			return false
		}
		taken := runs[j]
		n := min(len(taken), len(run))
		below = taken[n-1].NextOffset()
		// A run that grew past what was taken is the last one taken: the
		// batches after what was taken are new.
		return len(run) == len(taken)
	})
	return below
}
