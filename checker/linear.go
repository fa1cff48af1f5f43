package checker

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
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

// linRead is one poll's read of a partition. A long run's partitions hold
// millions, so its operation's indexes are kept in 32 bits (call, and ret
// as the distance from call) unless they do not fit (a foreign history's
// sparse indexes): then in linLog.far (linLog.call, linLog.ret).
type linRead struct {
	call uint32 // linFar: call and ret are in linLog.far
	ret  int32  // less call
	proc int32
	// to: one past the read's records in linLog.recs, when it keeps them
	// (keepLinRecs); they begin where the previous read's end (a poll
	// reads a partition's records in one read: addPoll).
	to int32
	rc bool
}

const linFar = math.MaxUint32

// linLog is what a partition's linearizability check needs of its polls.
// The records each read returned are the partition's read observations of
// the read's operation (partJob): a record read is kept once, there. Only a
// history whose indexes do not strictly increase (Check's callers may pass
// one; a decoded history's always do) keeps them here too, in read order,
// since an index then need not name one poll (keepLinRecs).
type linLog struct {
	recs  []linRec
	reads []linRead
	n     int32 // records read so far: the next read's from
	far   map[int32][2]int64
}

// add appends a read whose operation was called at index call and returned
// at ret, its records in recs below to.
func (l *linLog) add(call, ret int64, proc, to int32, rc bool) {
	r := linRead{proc: proc, to: to, rc: rc}
	if d := ret - call; call >= 0 && call < linFar && d >= math.MinInt32 && d <= math.MaxInt32 {
		r.call, r.ret = uint32(call), int32(d)
	} else {
		if l.far == nil {
			l.far = map[int32][2]int64{}
		}
		l.far[int32(len(l.reads))] = [2]int64{call, ret}
		r.call = linFar
	}
	l.reads = append(l.reads, r)
}

// call is the index of read k's invocation.
func (l *linLog) call(k int) int64 {
	if r := &l.reads[k]; r.call != linFar {
		return int64(r.call)
	}
	return l.far[int32(k)][0]
}

// ret is the index of read k's completion.
func (l *linLog) ret(k int) int64 {
	if r := &l.reads[k]; r.call != linFar {
		return int64(r.call) + int64(r.ret)
	}
	return l.far[int32(k)][1]
}

// from is where read k's records begin in recs (keepLinRecs).
func (l *linLog) from(k int) int32 {
	if k == 0 {
		return 0
	}
	return l.reads[k-1].to
}

// readAt is the read whose operation returned at index op, -1 if none:
// reads are in history order, their rets strictly increasing.
func (l *linLog) readAt(op int64) int {
	k := sort.Search(len(l.reads), func(k int) bool { return l.ret(k) >= op })
	if k == len(l.reads) || l.ret(k) != op {
		return -1
	}
	return k
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
		if s.part() != pi || seen[s.proc] {
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
