// Package history is the client history (docs/history.md): operations in
// invocation/completion pairs, Jepsen style, as JSON Lines. The model records
// into a Recorder; the checker reads histories from kafkasim or from a
// recorder around a real cluster.
package history

import (
	"fmt"
	"slices"
	"strconv"
)

// StoreFile is a run store's history: gzip-compressed JSON Lines.
// PlainStoreFile is where run stores kept it before it was compressed.
const (
	StoreFile      = "history.jsonl.gz"
	PlainStoreFile = "history.jsonl"
)

// Type is an operation's type.
type Type uint8

// Types, in the history format's words (docs/history.md).
const (
	Invoke Type = iota
	OK
	Fail // definitely did not happen
	Info // indeterminate: may or may not have happened
)

var typeNames = [...]string{"invoke", "ok", "fail", "info"}

// String is the type's JSON spelling.
func (t Type) String() string { return typeNames[t] }

// ParseType reads a type's JSON spelling.
func ParseType(s string) (Type, bool) {
	for i, n := range typeNames {
		if n == s {
			return Type(i), true
		}
	}
	return 0, false
}

// Operation functions (the "f" field).
const (
	FSend           = "send"
	FPoll           = "poll"
	FCommit         = "commit"
	FFetchCommitted = "fetch-committed"
	FAssign         = "assign"
	FRevoke         = "revoke"
	FTxnBegin       = "txn-begin"
	FTxnCommit      = "txn-commit"
	FTxnAbort       = "txn-abort"
	FSideEffect     = "side-effect"
	FProcess        = "process"
	FCrash          = "crash"
	FRestart        = "restart"
)

// Operations are the history format's functions, in its order: a line
// naming another is not one the checker can judge (a "produce" that it
// silently skipped would make a history of nothing but sends pass).
var Operations = []string{FSend, FPoll, FCommit, FFetchCommitted, FAssign, FRevoke,
	FTxnBegin, FTxnCommit, FTxnAbort, FSideEffect, FProcess, FCrash, FRestart}

// IsOperation says whether f is one of Operations.
func IsOperation(f string) bool { return slices.Contains(Operations, f) }

// Record is one record a poll returned.
//
// The strings come first and the small fields last, so that a record (of
// which a history holds millions) packs into 64 bytes.
type Record struct {
	Topic     string
	Key       string
	Value     string
	Offset    int64
	Partition int32
	HasKey    bool // false: a null key
}

// RecordSource holds records a poll returned, so that a recorder can keep
// a reference instead of a copy of each (a simulated reader's source is the
// record batch it fetched, which model/record.Batch implements). What it
// returns for an index must never change.
type RecordSource interface {
	// PolledRecords calls yield with the offset, key and value of records
	// [lo, hi) of the source, in order. The recorder reads the key and
	// value bytes as strings without copying them: nobody may change them,
	// ever.
	PolledRecords(lo, hi int, yield func(offset int64, key []byte, hasKey bool, value []byte))
}

// RecordSpan is records [Lo, Hi) of Src, read from Topic's Partition.
type RecordSpan struct {
	Src       RecordSource
	Topic     string
	Partition int32
	Lo, Hi    int32
}

// TopicPartition is the "topic-partition" key of a record.
func (r Record) TopicPartition() string { return r.Topic + "-" + strconv.Itoa(int(r.Partition)) }

// Send is one send inside a transaction.
type Send struct {
	Topic     string
	Key       string
	Value     string
	Offset    int64 // -1: unknown
	Partition int32 // -1: unknown
	HasKey    bool
}

// Value is an operation's value; which fields are set depends on F. The
// fields of sends and polls, which make up almost every history, are inline;
// those of groups and transactions sit in Ext, so that an operation stays
// small in memory.
type Value struct {
	Topic     string
	Key       string
	Value     string
	Offset    int64 // -1: not set
	Isolation string
	Records   []Record
	// Error is the error an operation failed with (an extension: readers
	// of the format ignore unknown fields).
	Error string
	Ext   *Ext
	// The small fields sit together, so that an operation (of which a
	// history holds millions) packs into fewer bytes.
	Partition int32 // -1: not set
	HasKey    bool
	Final     bool
	// HasRecords marks a completed poll: records present even when empty.
	HasRecords bool
}

// Ext holds the fields of group and transaction operations.
type Ext struct {
	TransactionalID string
	Group           string
	Offsets         map[string]int64
	Generation      int32 // -1: not set
	MemberID        string
	Partitions      []string
	Sends           []Send
	// LogStartOffsets are, on a final poll, the log start offsets of the
	// partitions the final reads began from ("topic-partition": offset): an
	// acknowledged record below one was deleted by retention, not lost (an
	// extension of the format, docs/history.md).
	LogStartOffsets map[string]int64
	// Positions are, on a final poll, the final reader's position in the
	// partitions whose position this poll moved or first learned
	// ("topic-partition": offset): its final read of the partition has
	// read, or passed over (control records, aborted or compacted ones),
	// every offset below. EndOffsets are the end offsets the final reads
	// read each partition to (ListOffsets latest when they began: the high
	// watermark, or the last stable offset under read_committed), on the
	// first final poll after the reader learned them. A partition's final
	// read reached its end once a position is at or past its end offset.
	// With them, final reads judge an acknowledged write only below where
	// they got to (extensions of the format, docs/history.md); without
	// them (older histories), final polls cover what they name.
	Positions  map[string]int64
	EndOffsets map[string]int64
	// HasApplied and Applied are, on a side-effect's ok, the store's answer:
	// whether it applied the effect (an idempotent store that already holds
	// the key acknowledges without applying it again). Without HasApplied
	// (a recorder that does not know) every acknowledged effect counts as
	// applied by a plain store.
	HasApplied, Applied bool
	// Source is, on a send by a read-process-write processor, the input
	// record the output record was made from (nil: not a processor's send).
	Source *Source
	// Producer is, on a transactional send (or any operation of a
	// transactional producer), the producer id and epoch the client held
	// when it completed (nil: not recorded). An extension of the format:
	// the checker tells a fenced producer's writes (zombie-write) by it.
	Producer *ProducerEpoch
}

// Source is the input record a processor's output record was made from:
// the "source" field of a send.
type Source struct {
	Topic     string
	Partition int32
	Offset    int64
}

// ProducerEpoch is a transactional producer's identity: the "producer_id"
// and "producer_epoch" fields (-1: the field is absent).
type ProducerEpoch struct {
	ID    int64
	Epoch int32
}

// NoValue is a Value with every optional number unset.
func NoValue() Value { return Value{Partition: -1, Offset: -1} }

// X returns the value's Ext, creating it if needed.
func (v *Value) X() *Ext {
	if v.Ext == nil {
		v.Ext = &Ext{Generation: -1}
	}
	return v.Ext
}

// Op is one line of a history.
type Op struct {
	Index   int64
	Time    int64 // nanoseconds
	Process string
	F       string
	Value   Value
	Type    Type
}

// String is a short human form, for reports.
func (o Op) String() string {
	s := fmt.Sprintf("#%d %s %s %s", o.Index, o.Process, o.Type, o.F)
	v := o.Value
	if v.Value != "" {
		s += " " + v.Value
	}
	if v.Topic != "" && v.Partition >= 0 {
		s += fmt.Sprintf(" %s-%d", v.Topic, v.Partition)
	}
	if v.Offset >= 0 {
		s += fmt.Sprintf("@%d", v.Offset)
	}
	if len(v.Records) > 0 {
		s += fmt.Sprintf(" %d records", len(v.Records))
	}
	if v.Error != "" {
		s += " (" + v.Error + ")"
	}
	return s
}
