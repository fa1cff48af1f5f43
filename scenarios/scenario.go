package scenarios

import (
	"time"

	"kafkasim/sim"
)

// Scenario is a loaded scenario file with every default filled in: what a
// run needs, and what the run store writes back as scenario.yaml.
type Scenario struct {
	Name        string
	Description string
	Seed        uint64
	// Duration is the fault phase; Settle the healing phase after it.
	Duration time.Duration
	Settle   time.Duration

	Cluster Cluster
	// Topics are the topics created at start; OffsetsTopic is not one of
	// them: it is __consumer_offsets as the group coordinator creates it
	// when first used (partitions and replication factor are the broker's
	// offsets.topic.num.partitions and offsets.topic.replication.factor;
	// a topics entry named __consumer_offsets may tune it).
	Topics       []Topic
	OffsetsTopic Topic
	// TxnStateTopic is the __transaction_state entry (Name "": none): its
	// partitions, replication factor and min ISR are the broker's
	// transaction.state.log.* keys; Config holds the other configs it
	// gave.
	TxnStateTopic Topic
	Producers     []Producer
	Consumers     []Consumer
	Faults        []ScheduledFault
	Nemesis       []NemesisRule
	// NemesisIntensity multiplies every nemesis rule's rate; NemesisSwarm
	// lets the seed switch rules off and scale each (kafkasim extensions).
	NemesisIntensity float64
	NemesisSwarm     bool
	Bugs             []string
	Expect           []Expectation

	// File is where the scenario was read from ("" for built ones).
	File string
}

// Cluster is the cluster section.
type Cluster struct {
	Controllers int
	Brokers     int
	Racks       []string
	Network     Network
	Disk        Disk
	// Broker holds the broker-level Kafka configs, every known key set.
	Broker Config
}

// Network is the cluster's network.
type Network struct {
	Latency              sim.Range
	LossProbability      float64
	DuplicateProbability float64
	ReorderProbability   float64
	// BandwidthBytesPerSecond is each link direction's rate; zero:
	// unlimited.
	BandwidthBytesPerSecond int64
}

// Disk is every node's disk.
type Disk struct {
	WriteLatency   sim.Range
	FsyncLatency   sim.Range
	WritebackDelay time.Duration
	// CapacityBytes bounds each disk; zero: unbounded.
	CapacityBytes        int64
	TornWriteProbability float64
	// WriteThroughputBytesPerSecond is each disk's write rate; zero:
	// unlimited.
	WriteThroughputBytesPerSecond int64
}

// Topic is a topic created at start.
type Topic struct {
	Name              string
	Partitions        int
	ReplicationFactor int
	// Assignment is replica-assignment: one list of broker ids per
	// partition, the first the preferred leader; nil lets the controller
	// place replicas.
	Assignment [][]int32
	// Config holds the topic-level Kafka configs, every known key set
	// (inherited from the broker's when not given).
	Config Config
}

// Producer is a group of producer instances <Name>-0 .. <Name>-(Count-1).
type Producer struct {
	Name  string
	Count int
	Topic string
	// Rate is records per second per instance.
	Rate float64
	// Keys is the key space; zero sends null keys.
	Keys int
	// Payload follows the unique id in every value (a kafkasim extension).
	Payload string
	// Start and Stop bound when the instances send (kafkasim extensions;
	// Stop defaults to the end of the fault phase).
	Start, Stop time.Duration
	Config      Config
	// Transactions, when set, makes the producer transactional: Rate is
	// then transactions begun per second per instance (config
	// transactional.id, instance i taking "<id>-<i>").
	Transactions *Transactions
}

// Transactions is what each transaction of a transactional producer does:
// RecordsMin..RecordsMax records, then commit, or abort with probability
// Abort.
type Transactions struct {
	RecordsMin, RecordsMax int
	Abort                  float64
}

// Consumer is a group of consumer instances <Name>-0 ...
type Consumer struct {
	Name  string
	Count int
	// Group is the consumer group the instances join (subscribe()); "":
	// assign-mode readers, which read every partition of their topics.
	Group  string
	Topics []string
	// Processing is the time each record takes to process.
	Processing sim.Range
	// The keys below are a group member's ("" or zero without a group).
	// Commit is CommitBeforeProcessing, CommitAfterProcessing,
	// CommitAuto (Config's enable.auto.commit agrees: "true" for auto) or
	// CommitTransactional (Config also holds transactional.id and
	// transaction.timeout.ms).
	Commit string
	// Workers is the pool that processes records (1: the poll loop
	// itself); a partition's offset is committed up to its contiguous
	// completed prefix.
	Workers int
	// SideEffects is "plain" or "idempotent" when each processed record
	// is applied to an external store; "" when none is.
	SideEffects string
	// WorkersCommit is what the worker pool commits: "completed-prefix"
	// (the default) or "highest-finished" (an application bug, for
	// teaching).
	WorkersCommit string
	// Static members have group.instance.id <Name>-<i>
	// (GroupInstanceID).
	Static bool
	// Processor makes the entry a processors entry (processors.go): its
	// instances are stream processors whose consumer half this is.
	Processor *Processor
	// Config holds the consumer keys, and for a group member the group
	// keys its group.protocol takes (classic: partition.assignment.strategy,
	// session.timeout.ms, heartbeat.interval.ms; consumer:
	// group.remote.assignor).
	Config Config
}

// ScheduledFault is one fault of the explicit schedule.
type ScheduledFault struct {
	At    time.Duration
	Fault sim.Fault
	// AfterElections, when positive, makes At the moment the fault is
	// armed: it fires when the AfterElections-th KRaft leader elected after
	// At takes office (an extension: `after-elections: N`).
	AfterElections int
	// Line, Column and Path are where it was written (its kind's key), for
	// messages about it.
	Line, Column int
	Path         string
	// Key is the fault kind's key as written ("crash", "add-partitions").
	Key string
}

// NemesisRule is one rule of the random-fault nemesis.
type NemesisRule struct {
	Rule sim.NemesisRule
	// Line, Column and Path are where it was written (its fault key).
	Line, Column int
	Path         string
	// Key is the fault as written ("crash", "partition", "disk").
	Key string
}

// Expectation is one key of the expect block.
type Expectation struct {
	Key string
	// Cmp is a comparison, or for "converged" a boolean (Bool).
	Cmp  Comparison
	Bool *bool
	Line int
}

// Comparison is "N", ">N", ">=N", "<N", "<=N", "==N" or "!=N".
type Comparison struct {
	Op    string // one of == != > >= < <=
	Value float64
	// Text is the comparison as written, for reports.
	Text string
}

// Holds reports whether x satisfies the comparison.
func (c Comparison) Holds(x float64) bool {
	switch c.Op {
	case ">":
		return x > c.Value
	case ">=":
		return x >= c.Value
	case "<":
		return x < c.Value
	case "<=":
		return x <= c.Value
	case "!=":
		return x != c.Value
	}
	return x == c.Value
}

// Config is a Kafka configuration: keys as Kafka spells them, values in a
// canonical text form ("true", "30000", "all"). Keys keeps them in the
// order of kafkasim's key table.
type Config struct {
	Keys   []string
	Values map[string]string
	// Explicit marks keys the scenario set itself (defaults are not), for
	// the rules Kafka applies only to explicit settings.
	Explicit map[string]bool
}

// Get returns a key's value.
func (c Config) Get(key string) string { return c.Values[key] }

// Set sets a key, keeping table order for new keys.
func (c *Config) Set(key, value string) {
	if c.Values == nil {
		c.Values = map[string]string{}
	}
	if _, ok := c.Values[key]; !ok {
		c.Keys = append(c.Keys, key)
	}
	c.Values[key] = value
}
