// Package broker is a Kafka broker: an observer of the metadata quorum that
// registers with the active controller, keeps its session alive with
// heartbeats, and (as the data plane grows) hosts partition replicas.
package broker

import (
	"time"

	"kafkasim/model/metadata"
	"kafkasim/model/partlog"
	"kafkasim/model/proto"
	"kafkasim/model/raft"
	"kafkasim/model/storage"
	"kafkasim/sim"
)

// Config configures a broker.
type Config struct {
	BrokerID int32
	Rack     string
	// Raft is the observer's configuration: the voters to fetch from.
	Raft raft.Config
	// HeartbeatInterval is broker.heartbeat.interval.ms (2000 ms).
	HeartbeatInterval time.Duration
	// StartingHeartbeatInterval is how often a broker that is catching up
	// heartbeats (Kafka: 10 ms).
	StartingHeartbeatInterval time.Duration
	// ControllerRequestTimeout bounds a registration or heartbeat in flight.
	ControllerRequestTimeout time.Duration
	// Audit sees every committed image change.
	Audit metadata.ImageObserver
	// Data configures the partition replicas.
	Data DataConfig
	// Nodes maps broker ids to nodes (the listeners a broker advertises).
	Nodes map[int32]sim.NodeID
	// Controllers are the controller nodes.
	Controllers []sim.NodeID
	// Answers, when set, is shared by the brokers of a cluster: the last
	// clients' metadata answer any of them built for a topic, which another
	// shares when its partitions read the same (nil: each broker shares
	// only its own).
	Answers *MetadataAnswers
}

// MetadataAnswers is the last clients' metadata answer the brokers of a
// cluster built for a topic. An answer is read only, and what it lists
// depends only on the topic's partitions, which brokers whose images
// reached the same committed offset agree on: on a big cluster each of 30
// brokers built its own copy of the same 3,000 partitions after every
// leader change (12 MB a run of big-cluster-3000.yaml).
type MetadataAnswers struct {
	topic string
	parts []proto.MetadataPartition
}

// DataConfig is the broker's replication and log configuration.
type DataConfig struct {
	// ReplicaLagTimeMax is replica.lag.time.max.ms (30000).
	ReplicaLagTimeMax time.Duration
	// ReplicaFetchWaitMax is replica.fetch.wait.max.ms (500).
	ReplicaFetchWaitMax time.Duration
	// ReplicaFetchMaxBytes is replica.fetch.max.bytes (1 MiB).
	ReplicaFetchMaxBytes int
	// ReplicaFetchBackoff is replica.fetch.backoff.ms (1000).
	ReplicaFetchBackoff time.Duration
	// ReplicaSocketTimeout bounds a follower fetch in flight (30000).
	ReplicaSocketTimeout time.Duration
	// HWCheckpointInterval is replica.high.watermark.checkpoint.interval.ms (5000).
	HWCheckpointInterval time.Duration
	// OffsetCheckpointInterval is log.flush.offset.checkpoint.interval.ms
	// (60000): recovery points and log start offsets.
	OffsetCheckpointInterval time.Duration
	// FlushInterval is log.flush.interval.ms; zero never (Kafka's default).
	FlushInterval time.Duration
	// RetentionCheckInterval is log.retention.check.interval.ms (300000).
	RetentionCheckInterval time.Duration
	// AddPartitionsRetryBackoff is add.partitions.to.txn.retry.backoff.ms
	// (20): how long a leader waits before asking the transaction
	// coordinator again after CONCURRENT_TRANSACTIONS (txnverify.go).
	AddPartitionsRetryBackoff time.Duration
	// AddPartitionsRetryBackoffMax is
	// add.partitions.to.txn.retry.backoff.max.ms (100): how long since the
	// first ask the leader goes on asking; 0 never asks again.
	AddPartitionsRetryBackoffMax time.Duration
	// Log holds the broker defaults of the topic-level log configs.
	Log partlog.Config
	// Audit sees the data plane's god-view checkpoints.
	Audit DataAuditor
	// Coordinators are the coordinators the broker hosts on its internal
	// topics' partitions (internal.go), built anew at every start.
	Coordinators []CoordinatorSpec
	// Bugs switched on (docs/bug-zoo.md names).
	Bugs DataBugs
}

// DataBugs are the bug zoo switches that live in the broker.
type DataBugs struct {
	HWTruncation               bool // hw-truncation
	EpochLookupFirstGreater    bool // epoch-lookup-first-greater
	ISRJoinAtStaleHW           bool // isr-join-at-stale-hw
	NoStrictMinISR             bool // no-strict-min-isr
	ProducerStateNotReplicated bool // producer-state-not-replicated
}

// LostFetchWait is the longest a follower waits on a fetch that gets no
// answer (its leader's machine went down) before it fetches again:
// replica.socket.timeout.ms, then replica.fetch.backoff.ms.
func (c DataConfig) LostFetchWait() time.Duration {
	return c.ReplicaSocketTimeout + c.ReplicaFetchBackoff
}

// DefaultDataConfig has Kafka's defaults.
func DefaultDataConfig() DataConfig {
	return DataConfig{
		ReplicaLagTimeMax:            30 * time.Second,
		ReplicaFetchWaitMax:          500 * time.Millisecond,
		ReplicaFetchMaxBytes:         1 << 20,
		ReplicaFetchBackoff:          time.Second,
		ReplicaSocketTimeout:         30 * time.Second,
		HWCheckpointInterval:         5 * time.Second,
		OffsetCheckpointInterval:     60 * time.Second,
		RetentionCheckInterval:       5 * time.Minute,
		AddPartitionsRetryBackoff:    20 * time.Millisecond,
		AddPartitionsRetryBackoffMax: 100 * time.Millisecond,
		Log:                          partlog.DefaultConfig(),
	}
}

// DefaultConfig has Kafka's defaults.
func DefaultConfig(id int32, voters []sim.NodeID) Config {
	return Config{
		BrokerID:                  id,
		Raft:                      raft.DefaultConfig(voters),
		HeartbeatInterval:         2 * time.Second,
		StartingHeartbeatInterval: 10 * time.Millisecond,
		ControllerRequestTimeout:  2 * time.Second,
		Data:                      DefaultDataConfig(),
		Controllers:               voters,
	}
}

// Node is one broker.
type Node struct {
	cfg   Config
	env   sim.Env
	gate  *storage.Gate
	raft  *raft.Raft
	image *metadata.Image
	life  lifecycle
	rm    *replicaManager
}

// New returns a constructor for brokers with cfg.
func New(cfg Config) func() sim.Node {
	return func() sim.Node { return &Node{cfg: cfg} }
}

// Start boots the broker: metadata log recovery, then registration.
func (n *Node) Start(env sim.Env) {
	n.env = env
	n.gate = storage.NewGate(env)
	n.image = metadata.NewImage(env.Name(), n.cfg.Audit)
	rc := n.cfg.Raft
	rc.OnCommit = n.onCommit
	rc.OnTruncate = n.onTruncate
	rc.OnRoleChange = func() {}
	n.raft = raft.New(env, n.gate, rc)
	n.gate.OnDurable = n.onDurable
	n.raft.Start()
	n.rm = newReplicaManager(n)
	n.life.start(n)
}

// ID is the broker id.
func (n *Node) ID() int32 { return n.cfg.BrokerID }

// Image is the broker's committed metadata (god view).
func (n *Node) Image() *metadata.Image { return n.image }

// Raft is the broker's observer replica of the metadata log (god view).
func (n *Node) Raft() *raft.Raft { return n.raft }

// Deliver routes metadata fetches to the observer, a coordinator's
// requests to it (or answers that no coordinator here serves them),
// controller answers to the lifecycle, and the data plane to the replica
// manager.
func (n *Node) Deliver(from sim.NodeID, m sim.Message) {
	if n.raft.Deliver(from, m) || n.rm.toCoordinator(from, m) || n.rm.deliver(from, m) || n.rm.notCoordinator(from, m) {
		return
	}
	n.life.deliver(from, m)
}

// Fire routes timers.
func (n *Node) Fire(t sim.Timer) {
	if n.gate.Fire(t) || n.rm.gate.Fire(t) || n.raft.Fire(t) || n.rm.fire(t) {
		return
	}
	n.life.fire(t)
}

func (n *Node) onDurable(token any) {
	if _, ok := token.(exitToken); ok {
		n.env.Exit() // the clean-shutdown file is on disk
		return
	}
	n.raft.Durable(token)
}

// Stop starts a controlled shutdown.
func (n *Node) Stop() { n.life.stop() }

// onCommit applies committed metadata, and hands each batch to the replica
// manager so that replicas follow leadership and ISR changes.
func (n *Node) onCommit(hw int64) {
	log := n.raft.Log()
	for n.image.Offset < hw && n.image.Offset < log.EndOffset() {
		e := log.Entry(n.image.Offset)
		if e.Control {
			n.image.Skip(e.Offset)
			continue
		}
		batch, err := metadata.DecodeEntry(e)
		if err == nil {
			err = n.image.Apply(e.Offset, batch)
		}
		if err != nil {
			n.env.Note("broker", "fatal: metadata: "+err.Error())
			n.image.Skip(e.Offset)
			continue
		}
		if n.rm != nil {
			n.rm.metadataApplied(batch)
		}
	}
}

// onTruncate rebuilds the image if committed metadata was truncated (only a
// bug in the quorum can cause it; the audit reports it).
func (n *Node) onTruncate(to int64) {
	if n.image.Offset <= to {
		return
	}
	n.image = metadata.NewImage(n.env.Name(), nil)
	log := n.raft.Log()
	for off := int64(0); off < to; off++ {
		e := log.Entry(off)
		if e.Control {
			n.image.Skip(off)
			continue
		}
		if batch, err := metadata.DecodeEntry(e); err == nil && n.image.Apply(off, batch) == nil {
			continue
		}
		n.image.Skip(off)
	}
	n.image.Observer = n.cfg.Audit
}
