package checker

import (
	"fmt"
	"sort"
)

// Anomaly types, named as Jepsen's Kafka checker names them where it has the
// same notion (jepsen/tests/kafka.clj).
const (
	LostAckedWrite      = "lost-acked-write"
	Unseen              = "unseen"
	Duplicate           = "duplicate"
	InconsistentOffsets = "inconsistent-offsets"
	NonmonotonicPoll    = "nonmonotonic-poll"
	PollSkip            = "poll-skip"
	IntNonmonotonicPoll = "int-nonmonotonic-poll"
	IntPollSkip         = "int-poll-skip"
	NonmonotonicSend    = "nonmonotonic-send"
	KeyOrder            = "key-order"
	AbortedRead         = "aborted-read"
	PrecommittedRead    = "precommitted-read"
	UncommittedRead     = "uncommitted-read"
	PhantomRead         = "phantom-read"
	G0                  = "G0"
	G1c                 = "G1c"
	NonmonotonicCommit  = "nonmonotonic-commit"
	StaleOffsetFetch    = "stale-offset-fetch"
	DoubleOwner         = "double-owner"
	ZombieCommit        = "zombie-commit"
	SkippedRecord       = "skipped-record"
	ReprocessedRecord   = "reprocessed-record"
	DuplicateSideEffect = "duplicate-side-effect"
	Nonlinearizable     = "nonlinearizable"
	// Exactly-once (eos.go).
	DuplicateOutput    = "duplicate-output"
	LostOutput         = "lost-output"
	NonatomicOutput    = "nonatomic-output"
	ZombieWrite        = "zombie-write"
	HangingTransaction = "hanging-transaction"
)

// AnomalyTypes lists every type the checker reports, for docs and validation.
var AnomalyTypes = []string{LostAckedWrite, Unseen, Duplicate, InconsistentOffsets, NonmonotonicPoll, PollSkip,
	IntNonmonotonicPoll, IntPollSkip, NonmonotonicSend, KeyOrder, AbortedRead, PrecommittedRead, UncommittedRead, PhantomRead, G0, G1c,
	NonmonotonicCommit, StaleOffsetFetch, DoubleOwner, ZombieCommit, SkippedRecord, ReprocessedRecord, DuplicateSideEffect,
	DuplicateOutput, LostOutput, NonatomicOutput, ZombieWrite, HangingTransaction, Nonlinearizable}

// Verdicts.
const (
	Violation = "violation" // a guarantee the configuration promises broke
	Permitted = "permitted" // a cost the configuration accepts
)

// Example is the evidence of one anomaly.
type Example struct {
	Partition string  `json:"partition,omitempty"`
	Offset    int64   `json:"offset"`
	Value     string  `json:"value,omitempty"`
	Process   string  `json:"process,omitempty"`
	Ops       []int64 `json:"ops,omitempty"`    // history indices
	Events    []int64 `json:"events,omitempty"` // trace steps, when known
	Detail    string  `json:"detail,omitempty"`
}

// Finding is one anomaly found in a history, before its verdict.
type Finding struct {
	Type string
	Example

	iso string // the isolation level of the reads involved
	// others are the processes that took part beside Example.Process
	// (the other readers of a record an aborted, uncommitted or
	// precommitted read is about), for counts per client (CountOf).
	others     []string
	failedSend bool   // aborted-read: the send itself failed (not its transaction)
	group      string // the consumer group of a committed offset
	inTxn      bool   // a committed offset written by a transaction
	// Cycles: the cycle orders events against real time; its edges.
	impossible, viaWW, viaWR, viaRT bool
	// wwFrom: where the cycle's ww steps start (the earlier record's
	// partition and offset).
	wwFrom []partOffset
	// Linearizability: the finding is about a committed-offset register.
	register bool
	// Duplicate: every position reads saw the value at.
	copies []copyAt
	// Poll-skip: the reader read another record at the skipped offset.
	readOther bool
	// Nonmonotonic-poll: between the two polls, auto.offset.reset moved
	// the reader's position back over both offsets after OFFSET_OUT_OF_RANGE
	// (god view: out-of-range-rewind).
	rewound bool
	// Lost-acked-write: when the write was acknowledged (ns; 0 unknown);
	// noAck: an acks=0 send nobody read, whose offset nobody knows.
	ackedAt int64
	noAck   bool
	// Nonmonotonic-send: no record of the producer, acknowledged or read,
	// lies below the one that landed first (the later send's).
	firstOfProducer bool
	// Nonmonotonic-send: where a copy of the record sent earlier lies
	// below the one that landed first (-1: none), the earlier record
	// having been written again later.
	earlierCopyAt int64
	// Nonatomic-output: the group's offset had already passed the input
	// when the output's transaction began to commit.
	offsetPassedFirst bool
	// Nonatomic-output: the transaction's offset of the input partition
	// did not pass the input (nil otherwise).
	offsetBelow *offsetBelow
	// Reprocessed-record: the attempts that were not in an aborted
	// transaction.
	committedAttempts int
	// Reprocessed-record: the starts of the two attempts whose repeat is
	// judged (the first two not in an aborted transaction, when there are
	// two; else the first two), when hasAttempts; else Ops[0] and Ops[1].
	attempts    [2]int64
	hasAttempts bool
	// Reprocessed-record: when the judged attempts' member read the record
	// (ns): the completion of the poll that returned it, else the
	// attempt's start; 0 or less: unknown.
	reads [2]int64
	// Reprocessed-record, duplicate-side-effect: the invocation of the
	// commit past the record its first (judged) processing's member made
	// before that processing began (processRec.commit), when hasCommitFirst.
	commitFirst    int64
	hasCommitFirst bool
	// The same of the second processing or effect: a member that committed
	// past the record, kept it polled while the coordinator lost that
	// commit, and processed it after another member had started from what
	// the coordinator still held.
	commitSecond    int64
	hasCommitSecond bool
	// Hanging-transaction: the transaction's outcome appeared (its commit
	// or abort completed ok), the process that wrote it, and how long (ns)
	// after its last operation the final reads began.
	resolved bool
	txnProc  string
	idleFor  int64
}

// offsetBelow is a nonatomic-output whose transaction committed its input
// partition's offset at or below the input: the operation after which the
// processor held the input record, and the transaction's commit
// invocation (op indexes); and the input record it processed (-1: unknown).
type offsetBelow struct {
	read, commit int64
	val          int32
}

// copyAt is one position of a record.
type copyAt struct {
	part string
	off  int64
}

// Anomaly is every finding of one type, with its verdict.
type Anomaly struct {
	Type     string    `json:"type"`
	Verdict  string    `json:"verdict"`
	Count    int       `json:"count"`
	Because  string    `json:"because"`
	Example  Example   `json:"example"`
	Examples []Example `json:"-"`
	// procs are, per finding, the processes that took part in it (its
	// example's process and the others).
	procs [][]string
}

// ExamplesMax bounds the evidence kept per anomaly type.
const ExamplesMax = 20

// group gathers findings by type, in the order of AnomalyTypes.
func group(findings []Finding) map[string][]Finding {
	out := map[string][]Finding{}
	for _, f := range findings {
		out[f.Type] = append(out[f.Type], f)
	}
	for _, fs := range out { // kafkasim:orderless: sorts each slice in place
		sort.SliceStable(fs, func(i, j int) bool { return firstOp(fs[i]) < firstOp(fs[j]) })
	}
	return out
}

func firstOp(f Finding) int64 {
	if len(f.Ops) == 0 {
		return 1 << 62
	}
	return f.Ops[0]
}

func (e Example) String() string {
	s := ""
	switch {
	case e.Partition != "" && e.Offset >= 0:
		s += fmt.Sprintf("%s@%d", e.Partition, e.Offset)
	case e.Partition != "":
		s += e.Partition // a finding of no one offset (a cycle through the partition)
	}
	if e.Value != "" {
		s += " " + e.Value
	}
	if e.Detail != "" {
		if s != "" {
			s += ": "
		}
		s += e.Detail
	}
	return s
}

// partOffset is a record's place: its partition and offset.
type partOffset struct {
	partition string
	offset    int64
}
