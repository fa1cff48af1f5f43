package checker

import (
	"kafkasim/history"
)

// The history analysis. An analyzer takes a history one operation at a time
// and keeps only compact facts about it (numbered processes, partitions and
// values; one small record per send, per record read and per transaction),
// never the operations themselves: a history can be streamed through it
// (CheckReader). The checks that need the whole version order run once at
// the end (finish).
//
// Where it is stronger than Jepsen's checker:
//   - lost is told from unseen by final reads (docs/history.md): a final read
//     reads every partition to its end, so an acknowledged record missing
//     from it is gone, not merely not yet read. Without final reads, a write
//     is lost only if reads went past its offset and never saw it (Jepsen's
//     rule); otherwise it is unseen.
//   - sends are matched to their completions by value, so a producer with
//     many sends in flight (as Kafka's are) is checked correctly.
//   - a consumer's session is per partition: an assign or a revoke resets
//     only the partitions it names (see groups.go).
//
// Operations are taken in history order, which is index order (docs/history.md):
// "before" and "after" between operations compare their indexes.

// analyzer is one history's analysis: the configuration it is judged
// against, the tables ingestion fills and the checks read, and what the
// checks found. The parts are embedded, so their fields read as the
// analyzer's own.
type analyzer struct {
	cfg *Config

	numbering
	records
	finalCover
	lazyIndexes
	results
}

// numbering: every process, partition, topic, key and value gets a number
// when it first appears (index.go); the facts refer to them by number.
type numbering struct {
	procIDs  map[string]int32
	procs    []*procState
	partIDs  map[partKey]int32
	parts    []*partState
	partName map[string]int32
	topicIDs map[string]int32
	topics   []string
	keyIDs   map[string]int32
	keys     []string
	valIDs   valIndex // and each value's name: valName
	// valSend and valFlags are each value's valInfo (val), in two
	// tables: a long run numbers millions of values, and one table of
	// valInfo would pad each to 8 bytes.
	valSend  []int32
	valFlags []uint8

	lastPart   partKey // a one-entry cache for partID
	lastPartID int32
}

// records: the compact facts ingestion keeps about the history, a record per
// send, reader session, jump in a session, transaction and transactional
// read, and the groups' state.
type records struct {
	sends    []sendRec
	sessions []session
	skips    []skipCandidate
	txns     []txnRec
	txnReads []txnRead
	groups   groupState
	members  groupMembers
	lossOps  lossOps
	eos      eosState

	// far: what of a send does not fit its sendRec, by value; sendTxn:
	// the transactional sends' transactions, by value.
	far     map[int32]*sendFar
	sendTxn map[int32]int32

	lastIndex int64
	nOps      int64
	// linRecs: the partitions keep their reads' records for
	// linearizability apart from their observations (keepLinRecs).
	linRecs bool
	// rcFlipped: the polls whose isolation is not their session's
	// (obsFlags).
	rcFlipped map[opSession]bool
}

// finalCover: what final reads cover (mergeFinal, lost.go): for final
// readers whose polls say how far they read (positions, end offsets), each
// partition below where they got to, all of it once they reached its end
// (partState.finalTo, finalReached); for those whose polls do not (older
// histories), whole topics (a reader without an assignment that returned
// their records reads every partition of them), single partitions (those a
// final reader was assigned, or returned records of), or everything (a
// final reader without an assignment that returned nothing at all, in a
// history of one topic: every partition it read was empty).
type finalCover struct {
	finalTopic map[int32]bool
	finalPart  map[int32]bool
	finalAll   bool
	finalBegin int64 // op index of the first final poll (-1: none yet)
}

// lazyIndexes: the indexes a check builds at its first question, from the
// version order.
type lazyIndexes struct {
	// skipped are the offsets skipped-record reported, by group and
	// partition: an input no member processed is owed an output only
	// where its group was owed the input (lost-output asks).
	skipped    map[skipAt]bool
	spans      map[int32][]readSpan    // readAcross's index
	compaction map[int32]*compactIndex // compactable's index
	// readOffsets: where polls first read each value (checkLostNoAck's
	// index).
	readOffsets map[int32]int64
	// inTxnGroups: the groups whose offsets were committed in transactions
	// (groupInTxn's index).
	inTxnGroups map[string]bool
}

// results: what the checks found, and the counts of the report.
type results struct {
	findings []Finding
	stats    Stats
}

func newAnalyzer(cfg *Config) *analyzer {
	a := &analyzer{cfg: cfg,
		numbering: numbering{procIDs: map[string]int32{}, partIDs: map[partKey]int32{}, partName: map[string]int32{},
			topicIDs: map[string]int32{}, keyIDs: map[string]int32{}, lastPartID: -1},
		records:    records{groups: newGroupState(), lossOps: newLossOps(cfg.Happened)},
		finalCover: finalCover{finalTopic: map[int32]bool{}, finalPart: map[int32]bool{}, finalBegin: -1}}
	sends := 0
	if cfg.Sizes != nil {
		sends = cfg.Sizes.Sends
	}
	// Every value sent is numbered once: the sends, the values and their
	// numbers are as many as the send invocations.
	a.valIDs = newValIndex(sends)
	a.valSend, a.valFlags, a.sends = make([]int32, 0, sends), make([]uint8, 0, sends), make([]sendRec, 0, sends)
	return a
}

// finish runs the checks that need the whole history.
func (a *analyzer) finish() {
	if len(a.txns) > 0 {
		a.lateTxnReads()
	}
	a.resolveTxns()
	a.placeAcks()
	a.build()
	a.countStats()
	a.checkOffsets()
	a.checkSends()
	a.checkSkips()
	a.checkCoverage()
	a.checkLost()
	a.checkTxnReads()
	a.checkCycles()
	a.checkGroupMembers()
	a.checkEOS()
	// The known offsets served the checks above alone: let them go
	// before linearizability builds its jobs (a long run's are tens of
	// MB, as many as its records).
	for _, po := range a.parts {
		po.offsets, po.visRC = nil, nil
	}
}

func (a *analyzer) countStats() {
	for i := range a.sends {
		s := &a.sends[i]
		a.stats.Attempted++
		outcome := s.typ
		if a.txn(s) >= 0 && s.typ != history.Fail {
			switch a.txns[a.txn(s)].outcome {
			case txnCommitted:
				if s.typ != history.OK {
					outcome = history.Info
				}
			case txnAborted:
				// Taken back by its producer: not a failed write.
				a.stats.Aborted++
				continue
			case txnNeverCommitted:
				outcome = history.Fail
			default:
				outcome = history.Info
			}
		}
		switch {
		case outcome == history.OK || s.noAck():
			a.stats.Acked++
		case outcome == history.Fail:
			a.stats.Failed++
		default:
			a.stats.Indeterminate++
		}
	}
	if n := a.stats.Attempted - a.stats.Aborted; n > 0 {
		a.stats.Availability = float64(a.stats.Acked) / float64(n)
	}
	for i := range a.txns {
		switch a.txns[i].outcome {
		case txnCommitted:
			a.stats.TxnCommitted++
		case txnAborted:
			a.stats.TxnAborted++
		case txnNeverCommitted:
			a.stats.TxnNeverCommitted++
		default:
			a.stats.TxnIndeterminate++
		}
	}
}

// skipAt is a group's offset of a partition.
type skipAt struct {
	group string
	part  int32
	off   int64
}
