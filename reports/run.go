package reports

import (
	"time"

	"kafkasim/history"
)

// Run is everything a report shows about one run: plain data, filled in by
// the runner, so that this package knows nothing of how a run is executed.
type Run struct {
	Scenario    string
	Description string
	Seed        uint64
	Version     string
	TraceHash   string // 16 hex digits
	Events      uint64
	SimTime     time.Duration
	WallTime    time.Duration
	// Verdict is the run's outcome in one word: "pass", "fail" (an
	// expectation or invariant failed), "liveness" (the cluster did not
	// converge after healing) or "crash" (the simulator itself failed).
	Verdict string
	// Headline says in a sentence or two what happened, e.g. "3
	// acknowledged writes lost (permitted: acks=1 ...)".
	Headline     string
	Expectations []Expectation
	Writes       Writes
	Reads        Reads
	Anomalies    []Anomaly
	Invariants   []Invariant
	// Converged and ConvergeDetail: whether the cluster healed after settle.
	Converged      bool
	ConvergeDetail string
	Faults         []Fault
	// Phases are where the run's phases end, for marking them on every
	// time axis; zero when unknown (the liveness heal in the fault log then
	// marks the end of the fault phase).
	Phases Phases
	// Timeline is the god view sampled at regular simulated times.
	Timeline []Sample
	// Final is each partition's state when the run ended.
	Final []PartitionState
	// Ops is the client history (docs/history.md); History, when
	// set, serves it instead (a run's recorder).
	Ops     []history.Op
	History History
	// Linearizability holds porcupine's visualisations of partitions that
	// failed the linearizability check (empty when none failed or the check
	// did not run).
	Linearizability []Visualization
	// Config lists the effective configuration, key = value, for the report.
	Config []KeyValue
}

// Expectation is one key of the scenario's expect block.
type Expectation struct {
	Key  string // e.g. "lost-acked-write"
	Want string // e.g. ">0"
	Got  string // e.g. "3"
	OK   bool
}

// Writes are the history's send outcomes.
type Writes struct {
	Attempted, Acked, Failed, Indeterminate, LostAcked int
	// Aborted: sends of transactions their producer aborted.
	Aborted      int
	Availability float64
}

// Reads are the history's poll figures.
type Reads struct {
	Polls, Records, Duplicates int
}

// Anomaly is one checker finding type with its verdict.
type Anomaly struct {
	Type     string // "lost-acked-write", ...
	Verdict  string // "violation" or "permitted"
	Count    int
	Because  string
	Examples []Example
}

// Example is the evidence of one finding.
type Example struct {
	Partition string // "orders-0"
	Offset    int64  // -1 when none
	Value     string
	Process   string
	Ops       []int64  // history indexes
	Events    []uint64 // trace steps, when known
	Detail    string   // a sentence in Kafka words
}

// Invariant is a god-view invariant and how it fared.
type Invariant struct {
	Name   string // "single-leader-per-epoch"
	Status string // "ok" or "violated"
	Detail string
}

// Fault is one line of the fault log.
type Fault struct {
	At      time.Duration
	Kind    string   // "crash", "partition", "disk", ...
	What    string   // the fault in scenario words
	Origin  string   // "schedule", "nemesis/0", "heal"
	Nodes   []string // the nodes it acted on
	Undo    bool     // the end of an earlier fault (restart, heal)
	Skipped string   // why it did nothing, if it did nothing
}

// Phases are the ends of a run's phases. After SettleEnd the runner waits
// for the cluster to converge, writes one probe record per partition, and
// then reads every partition from its log start (the final reads, found in
// the history by their final flag).
type Phases struct {
	// FaultsEnd ends the fault phase: every fault is healed (the
	// scenario's duration).
	FaultsEnd time.Duration
	// SettleEnd ends the settle phase (duration + settle).
	SettleEnd time.Duration
}

// Sample is the god view at one simulated time.
type Sample struct {
	At               time.Duration
	ActiveController string // "" when none
	ControllerEpoch  int32
	Partitions       []PartitionSample
	// Down lists nodes that are not running (crashed, paused, shut down).
	Down []string
}

// PartitionSample is one partition at one time, as the committed metadata
// and the leader's replica see it.
type PartitionSample struct {
	Name        string // "orders-0"
	Leader      int32  // -1: none
	LeaderEpoch int32
	ISR         []int32
	ELR         []int32
	HW          int64 // the leader's high watermark; -1 when unknown
	LEO         int64 // the leader's log end offset; -1 when unknown
}

// PartitionState is a partition at the end of the run, for describe topics.
type PartitionState struct {
	Topic        string
	Partition    int32
	Leader       int32
	LeaderEpoch  int32
	Replicas     []int32
	ISR          []int32
	ELR          []int32
	LastKnownELR []int32 `json:",omitempty"`
	HW           int64
	// LSO is the leader's last stable offset (nil: no leader, or a run
	// store written before it was recorded: the high watermark then).
	LSO            *int64 `json:",omitempty"`
	LEO            int64
	LogStartOffset int64
	// ReplicaLEO is each replica's log end offset (-1: replica down).
	ReplicaLEO map[int32]int64
}

// Visualization is porcupine's HTML for one partition.
type Visualization struct {
	Partition string
	HTML      []byte
}

// KeyValue is one configuration entry.
type KeyValue struct{ Key, Value string }
