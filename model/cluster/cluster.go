// Package cluster assembles a simulated Kafka cluster on a sim.World: KRaft
// controllers, brokers in racks, the admin client that creates the topics, the
// god-view audit, and the resolver that turns fault targets such as
// "leader(orders-0)" and "active-controller" into nodes when a fault fires.
package cluster

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"kafkasim/history"
	"kafkasim/model/admin"
	"kafkasim/model/audit"
	"kafkasim/model/broker"
	"kafkasim/model/controller"
	"kafkasim/model/extstore"
	"kafkasim/model/metadata"
	"kafkasim/model/partlog"
	"kafkasim/model/processor"
	"kafkasim/model/producer"
	"kafkasim/model/proto"
	"kafkasim/model/raft"
	"kafkasim/model/reader"
	"kafkasim/model/txn"
	"kafkasim/sim"
)

// Bug switches of the bug zoo (docs/bug-zoo.md) that the model has.
const (
	BugKRaftCommitPriorEpoch      = "kraft-commit-prior-epoch"
	BugStaleAlterPartition        = "stale-alter-partition"
	BugHWTruncation               = "hw-truncation"
	BugEpochLookupFirstGreater    = "epoch-lookup-first-greater"
	BugISRJoinAtStaleHW           = "isr-join-at-stale-hw"
	BugNoStrictMinISR             = "no-strict-min-isr"
	BugProducerStateNotReplicated = "producer-state-not-replicated"
	BugNoConsumerEpochValidation  = "no-consumer-epoch-validation"
	BugNoGenerationFencing        = "no-generation-fencing"
	BugGrantBeforeRelease         = "grant-before-release"
	BugNoEpochBumpOnAbort         = "no-epoch-bump-on-abort"
	BugDelayedEndTxn              = "delayed-end-txn"
)

// KnownBugs lists the bug switches the model implements.
var KnownBugs = []string{BugKRaftCommitPriorEpoch, BugStaleAlterPartition, BugHWTruncation, BugEpochLookupFirstGreater,
	BugISRJoinAtStaleHW, BugNoStrictMinISR, BugProducerStateNotReplicated, BugNoConsumerEpochValidation,
	BugNoGenerationFencing, BugGrantBeforeRelease, BugNoEpochBumpOnAbort, BugDelayedEndTxn}

// BrokerSettings are broker-level Kafka configs.
type BrokerSettings struct {
	// ELREnabled is eligible.leader.replicas.enable (default true in 4.2).
	ELREnabled bool
	// UncleanLeaderElection is unclean.leader.election.enable (default false).
	UncleanLeaderElection bool
	// MinInsyncReplicas is min.insync.replicas (default 1).
	MinInsyncReplicas int
	// DefaultReplicationFactor is default.replication.factor (default 1).
	DefaultReplicationFactor int
	// HeartbeatInterval is broker.heartbeat.interval.ms; SessionTimeout is
	// broker.session.timeout.ms.
	HeartbeatInterval time.Duration
	SessionTimeout    time.Duration
	// LeaderImbalanceCheckInterval is leader.imbalance.check.interval.seconds
	// (default 300 s) while auto.leader.rebalance.enable is true (the
	// default); 0 is auto.leader.rebalance.enable=false: the controller
	// never moves leadership back to preferred replicas by itself.
	LeaderImbalanceCheckInterval time.Duration
}

// QuorumSettings are the controller.quorum.* configs, and how many batches
// one metadata fetch response may carry (Kafka bounds it by bytes, 8 MiB,
// which metadata batches rarely reach; a small bound exposes the windows a
// real backlog or segment boundary would).
type QuorumSettings struct {
	ElectionTimeout time.Duration
	FetchTimeout    time.Duration
	FetchMaxBatches int
	// MaxIdleInterval is metadata.max.idle.interval.ms: how often the
	// active controller appends a NoOp record (default 500 ms; 0 none).
	MaxIdleInterval time.Duration
}

// TopicSpec is a topic to create at start.
type TopicSpec struct {
	Name              string
	Partitions        int
	ReplicationFactor int
	MinInsyncReplicas int   // 0: broker default
	Unclean           *bool // nil: broker default
	Assignment        [][]int32
	// Configs are other topic configs (cleanup.policy, segment.bytes,
	// retention.ms, retention.bytes, flush.messages).
	Configs map[string]string
}

// Config describes a cluster.
type Config struct {
	Seed        uint64
	Controllers int
	Brokers     int
	// Racks: broker-i is in Racks[(i-1) % len(Racks)]; controllers likewise.
	Racks   []string
	Network sim.NetworkOptions
	Disk    sim.DiskOptions
	Limits  sim.Limits
	Broker  BrokerSettings
	Quorum  QuorumSettings
	Topics  []TopicSpec
	Bugs    []string
	Trace   sim.TraceSink
	// HooksOff runs the world without its performance hooks, for tests
	// (sim.Options.HooksOff).
	HooksOff bool
	// Data is the brokers' replication and log configuration.
	Data broker.DataConfig
	// Producers and Readers are the clients: Count instances of each,
	// named <Name>-0 .. <Name>-(Count-1).
	Producers []ProducerSpec
	Readers   []ReaderSpec
	// Groups configures the brokers' group coordinator; nil: the brokers
	// host none (a cluster whose readers have no group).
	Groups *GroupSettings
	// Transactions configures the brokers' transaction coordinator; nil:
	// the brokers host none (no transactional client), and a transactional
	// InitProducerId is answered NOT_COORDINATOR.
	Transactions *TxnSettings
	// FinalReader names the reader (one of Readers, of one instance) that
	// makes the final reads once the cluster has converged: convergence
	// does not wait for it to catch up. Empty: none.
	FinalReader string
}

// compacted reports whether topic's cleanup.policy (its own, or the
// brokers' log.cleanup.policy) compacts it.
func (cfg Config) compacted(topic string) bool {
	for _, t := range cfg.Topics {
		if v, ok := t.Configs["cleanup.policy"]; ok && t.Name == topic {
			return strings.HasPrefix(v, "compact")
		}
	}
	return cfg.Data.Log.Compact
}

// ProducerSpec is a group of producer instances sharing a configuration.
type ProducerSpec struct {
	Name   string
	Count  int
	Config producer.Config // a template: Name, Brokers and Recorder are filled in
}

// ReaderSpec is a group of readers sharing a configuration: assign-mode
// readers, or the members of a consumer group (Config.Group).
type ReaderSpec struct {
	Name   string
	Count  int
	Config reader.Config
	// Static members have group.instance.id "<Name>-<i>", their instance
	// names (a restarted process rejoins as the same member).
	Static bool
	// Processor makes the instances stream processors (model/processor):
	// Config is their consumer half, this the rest (a template: Name,
	// Reader, the producer's Brokers and the Recorder are filled in, and a
	// TransactionalID becomes "<id>-<i>").
	Processor *processor.Config
}

// DefaultConfig is three controllers and three brokers with Kafka's defaults.
func DefaultConfig(seed uint64) Config {
	return Config{
		Seed:        seed,
		Controllers: 3,
		Brokers:     3,
		Network:     sim.DefaultNetworkOptions(),
		Disk:        sim.DefaultDiskOptions(),
		Broker: BrokerSettings{ELREnabled: true, MinInsyncReplicas: 1, DefaultReplicationFactor: 1,
			HeartbeatInterval: 2 * time.Second, SessionTimeout: 9 * time.Second, LeaderImbalanceCheckInterval: 300 * time.Second},
		Quorum: QuorumSettings{ElectionTimeout: time.Second, FetchTimeout: 2 * time.Second, MaxIdleInterval: 500 * time.Millisecond},
		Data:   broker.DefaultDataConfig(),
	}
}

// Cluster is a built cluster.
type Cluster struct {
	cfg         Config
	World       *sim.World
	Audit       *audit.Audit
	Controllers []sim.NodeID
	Brokers     []sim.NodeID // Brokers[i] has broker id i+1
	Admin       sim.NodeID
	Producers   []sim.NodeID
	Readers     []sim.NodeID
	// Stores are the external stores of consumer entries with side
	// effects.
	Stores []sim.NodeID
	// FinalReader is the node of Config.FinalReader, or sim.NoNode.
	FinalReader sim.NodeID
	// History is what the clients recorded.
	History *history.Recorder
	// electionWaits are faults waiting for KRaft elections (see
	// ScheduleFaultAfterElections), in the order they were armed.
	electionWaits []*electionWait
}

type electionWait struct {
	left  int
	fault sim.Fault
}

// electionTap passes a replica's audit calls on and counts its elections
// for the faults that wait for them.
type electionTap struct {
	raft.Auditor
	c *Cluster
}

func (t electionTap) BecameLeader(node sim.NodeID, epoch int32) {
	t.Auditor.BecameLeader(node, epoch)
	t.c.elected()
}

// ScheduleFaultAfterElections arms f at at: it fires when the n-th KRaft
// leader elected after that takes office — at once, after the event that
// elected it and before any message the new leader sent arrives — rather
// than at a time. Selectors resolve when it fires (active-controller is the
// new leader). A fault still waiting when the fault phase ends never fires.
func (c *Cluster) ScheduleFaultAfterElections(at time.Duration, n int, f sim.Fault) error {
	if n < 1 {
		return fmt.Errorf("after %d elections: want at least 1", n)
	}
	if err := f.Validate(); err != nil {
		return err
	}
	c.World.At(at, func() { c.electionWaits = append(c.electionWaits, &electionWait{left: n, fault: f}) })
	return nil
}

func (c *Cluster) elected() {
	kept := c.electionWaits[:0]
	for _, w := range c.electionWaits {
		if w.left--; w.left > 0 {
			kept = append(kept, w)
			continue
		}
		// Scheduled for now, behind the election's own event: the fault
		// log has it, and it is dropped once the fault phase has ended.
		if err := c.World.ScheduleFault(c.World.Now(), w.fault); err != nil {
			panic(err) // validated when armed
		}
	}
	clear(c.electionWaits[len(kept):])
	c.electionWaits = kept
}

// ControllerName and BrokerName are the node names scenarios use.
func ControllerName(i int) string { return fmt.Sprintf("controller-%d", i) }

// BrokerName is broker-<id>.
func BrokerName(id int32) string { return fmt.Sprintf("broker-%d", id) }

// StoreName is the node of the external store the members of consumer
// entry name write their side effects to.
func StoreName(name string) string { return name + "-store" }

// AdminName is the admin client's node.
const AdminName = "admin"

// The roles of the cluster's nodes, as role(R) and random-R name them.
const (
	RoleBroker     = "broker"
	RoleController = "controller"
	RoleProducer   = "producer"
	RoleConsumer   = "consumer"
	RoleAdmin      = "admin"
	// RoleStore is the external store a consumer group's side effects go
	// to (model/extstore).
	RoleStore = "store"
)

// Roles lists them, the ones faults most often pick first.
var Roles = []string{RoleBroker, RoleController, RoleProducer, RoleConsumer, RoleAdmin, RoleStore}

// ClientName is instance i of producer or consumer name ("p-0"); a negative
// i leaves the number off, for messages ("p-").
func ClientName(name string, i int) string {
	if i < 0 {
		return name + "-"
	}
	return fmt.Sprintf("%s-%d", name, i)
}

// Build creates the world and its nodes; nothing runs until World.Start.
func Build(cfg Config) (*Cluster, error) {
	if cfg.Controllers < 1 || cfg.Brokers < 1 {
		return nil, fmt.Errorf("cluster: need at least one controller and one broker")
	}
	if cfg.FinalReader != "" && !slices.ContainsFunc(cfg.Readers, func(r ReaderSpec) bool { return r.Name == cfg.FinalReader && r.Count == 1 }) {
		return nil, fmt.Errorf("cluster: the final reader %q is not a reader of one instance", cfg.FinalReader)
	}
	bugs := map[string]bool{}
	for _, b := range cfg.Bugs {
		if !slices.Contains(KnownBugs, b) {
			return nil, fmt.Errorf("cluster: unknown or not yet modelled bug %q (known: %s)", b, strings.Join(KnownBugs, ", "))
		}
		bugs[b] = true
	}
	opts := sim.Options{Seed: sim.Seed(cfg.Seed), Network: cfg.Network, Disk: cfg.Disk, Limits: cfg.Limits, Trace: cfg.Trace, HooksOff: cfg.HooksOff}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	w := sim.NewWorld(opts)
	c := &Cluster{cfg: cfg, World: w, FinalReader: sim.NoNode}
	c.Audit = audit.New(w)
	rack := func(i int) string {
		if len(cfg.Racks) == 0 {
			return ""
		}
		return cfg.Racks[(i-1)%len(cfg.Racks)]
	}
	// Node ids are fixed before any node is built: controllers first.
	for i := 1; i <= cfg.Controllers; i++ {
		c.Controllers = append(c.Controllers, sim.NodeID(i-1))
	}
	raftCfg := func() raft.Config {
		rc := raft.DefaultConfig(c.Controllers)
		if cfg.Quorum.ElectionTimeout > 0 {
			rc.ElectionTimeout = cfg.Quorum.ElectionTimeout
		}
		if cfg.Quorum.FetchTimeout > 0 {
			rc.FetchTimeout = cfg.Quorum.FetchTimeout
		}
		if cfg.Quorum.FetchMaxBatches > 0 {
			rc.FetchMaxEntries = cfg.Quorum.FetchMaxBatches
		}
		rc.BugCommitPriorEpoch = bugs[BugKRaftCommitPriorEpoch]
		rc.Audit = electionTap{Auditor: c.Audit, c: c}
		return rc
	}
	for i := 1; i <= cfg.Controllers; i++ {
		cc := controller.DefaultConfig(c.Controllers)
		cc.Raft = raftCfg()
		cc.ELREnabled = cfg.Broker.ELREnabled
		cc.UncleanLeaderElection = cfg.Broker.UncleanLeaderElection
		cc.MinInsyncReplicas = max(cfg.Broker.MinInsyncReplicas, 1)
		cc.DefaultReplicationFactor = max(cfg.Broker.DefaultReplicationFactor, 1)
		if cfg.Broker.SessionTimeout > 0 {
			cc.SessionTimeout = cfg.Broker.SessionTimeout
		}
		cc.MaxIdleInterval = cfg.Quorum.MaxIdleInterval
		cc.LeaderImbalanceCheckInterval = cfg.Broker.LeaderImbalanceCheckInterval
		cc.BugStaleAlterPartition = bugs[BugStaleAlterPartition]
		cc.Audit = c.Audit
		id := w.AddNode(sim.NodeSpec{Name: ControllerName(i), Role: RoleController, Rack: rack(i), New: controller.New(cc)})
		if id != c.Controllers[i-1] {
			panic("cluster: controller ids out of order")
		}
		w.Disk(id).Preload(controller.MetaPropertiesFile, []byte(fmt.Sprintf("node.id=%d\nprocess.roles=controller\n", i)))
	}
	nodes := map[int32]sim.NodeID{}
	for i := 1; i <= cfg.Brokers; i++ {
		nodes[int32(i)] = sim.NodeID(cfg.Controllers + i - 1)
	}
	data := cfg.Data
	if data.ReplicaLagTimeMax == 0 {
		data = broker.DefaultDataConfig()
	}
	data.Audit = c.Audit
	data.Bugs = broker.DataBugs{HWTruncation: bugs[BugHWTruncation], EpochLookupFirstGreater: bugs[BugEpochLookupFirstGreater],
		ISRJoinAtStaleHW: bugs[BugISRJoinAtStaleHW], NoStrictMinISR: bugs[BugNoStrictMinISR],
		ProducerStateNotReplicated: bugs[BugProducerStateNotReplicated]}
	if bugs[BugNoEpochBumpOnAbort] || bugs[BugDelayedEndTxn] {
		// Both switches bring back transaction version 1, whose produce
		// only verifies: ReplicaManager asks the coordinator again on
		// CONCURRENT_TRANSACTIONS only where the produce's version
		// supports the epoch bump (transaction version 2).
		data.AddPartitionsRetryBackoffMax = 0
	}
	if cfg.Groups != nil {
		c.Audit.SetGroupMembers(c.groupMembers)
		spec, err := groupCoordinatorSpec(*cfg.Groups, bugs, c.Audit)
		if err != nil {
			return nil, err
		}
		data.Coordinators = append(slices.Clone(data.Coordinators), spec)
	}
	if cfg.Transactions != nil {
		c.Audit.SetTransactions()
		tc := cfg.Transactions.coordinatorConfig()
		tc.NoEpochBumpOnAbort = bugs[BugNoEpochBumpOnAbort]
		tc.DelayedEndTxn = bugs[BugDelayedEndTxn]
		if tc.DelayedEndTxn {
			c.Audit.SetTxnEpochSpansTransactions()
		}
		data.Coordinators = append(slices.Clone(data.Coordinators), txn.Spec(tc))
	}
	answers := &broker.MetadataAnswers{}
	for i := 1; i <= cfg.Brokers; i++ {
		bc := broker.DefaultConfig(int32(i), c.Controllers)
		bc.Raft = raftCfg()
		bc.Rack = rack(i)
		if cfg.Broker.HeartbeatInterval > 0 {
			bc.HeartbeatInterval = cfg.Broker.HeartbeatInterval
		}
		bc.Audit = c.Audit
		bc.Data = data
		bc.Nodes = nodes
		bc.Answers = answers
		id := w.AddNode(sim.NodeSpec{Name: BrokerName(int32(i)), Role: RoleBroker, Rack: bc.Rack, New: broker.New(bc)})
		if id != nodes[int32(i)] {
			panic("cluster: broker ids out of order")
		}
		c.Brokers = append(c.Brokers, id)
	}
	c.Audit.SetReplicas(c.replicaLog)
	var topics []proto.CreatableTopic
	for _, t := range cfg.Topics {
		topics = append(topics, proto.CreatableTopic{Name: t.Name, NumPartitions: t.Partitions, ReplicationFactor: t.ReplicationFactor,
			Assignment: t.Assignment, MinInsyncReplicas: t.MinInsyncReplicas, UncleanLeaderElection: t.Unclean, Configs: t.Configs})
	}
	c.Admin = w.AddNode(sim.NodeSpec{Name: AdminName, Role: RoleAdmin, New: admin.New(admin.Config{
		Controllers: c.Controllers, Topics: topics, RequestTimeout: 5 * time.Second, RetryBackoff: 100 * time.Millisecond})})
	c.History = history.NewRecorder(w.Now)
	for _, ps := range cfg.Producers {
		for i := range ps.Count {
			pc := ps.Config
			pc.Name = ClientName(ps.Name, i)
			if pc.TransactionalID != "" {
				pc.TransactionalID = ClientName(pc.TransactionalID, i) // one transactional.id per instance
			}
			pc.Brokers = c.Brokers
			pc.Recorder = c.History
			pc.ProbeKeys = cfg.compacted(pc.Topic)
			c.Producers = append(c.Producers, w.AddNode(sim.NodeSpec{Name: pc.Name, Role: RoleProducer, New: producer.New(pc)}))
		}
	}
	for _, rs := range cfg.Readers {
		store := sim.NoNode
		if g := rs.Config.Group; g != nil && g.SideEffects != reader.SideEffectsNone {
			mode := extstore.Plain
			if g.SideEffects == reader.SideEffectsIdempotent {
				mode = extstore.Idempotent
			}
			store = w.AddNode(sim.NodeSpec{Name: StoreName(rs.Name), Role: RoleStore, New: extstore.New(mode)})
			c.Stores = append(c.Stores, store)
		}
		for i := range rs.Count {
			rc := rs.Config
			rc.Name = ClientName(rs.Name, i)
			rc.Brokers = c.Brokers
			rc.Recorder = c.History
			rc.NoEpochValidation = bugs[BugNoConsumerEpochValidation]
			rc.FetchAudit = c.Audit
			rc.LinkBandwidthBytesPerSecond = cfg.Network.BandwidthBytesPerSecond
			if rc.Group != nil {
				g := *rc.Group
				if rs.Static {
					g.GroupInstanceID = rc.Name
				}
				g.ClientID = rc.Name
				g.Store = store
				g.Audit = c.Audit
				rc.Group = &g
			}
			newNode := reader.New(rc)
			if rs.Processor != nil {
				pc := *rs.Processor
				pc.Name, pc.Reader, pc.Recorder = rc.Name, rc, c.History
				pc.Producer.Brokers = c.Brokers
				if pc.Producer.TransactionalID != "" {
					pc.Producer.TransactionalID = ClientName(pc.Producer.TransactionalID, i)
				}
				newNode = processor.New(pc)
			}
			// A processor is a consumer group member: faults pick it as a
			// consumer, and the group's checks see its consumer half.
			c.Readers = append(c.Readers, w.AddNode(sim.NodeSpec{Name: rc.Name, Role: RoleConsumer, New: newNode}))
			if rs.Name == cfg.FinalReader {
				c.FinalReader = c.Readers[len(c.Readers)-1]
			}
		}
	}
	// A client process that dies cannot record it: the world tells the
	// history, which completes what the client had open as indeterminate
	// and records the crash, at the simulated time of the death.
	clients := map[sim.NodeID]bool{}
	for _, id := range append(slices.Clone(c.Producers), c.Readers...) {
		clients[id] = true
	}
	w.SetOnStop(func(id sim.NodeID, how string) {
		if clients[id] {
			c.History.Died(w.Name(id), "process died: "+how)
		}
	})
	w.SetResolver(c)
	w.SetCustomFaultHandler(c.customFault)
	return c, nil
}

// Controller returns controller-i's node if it is up.
func (c *Cluster) Controller(id sim.NodeID) *controller.Node {
	n, _ := c.World.Node(id).(*controller.Node)
	return n
}

// Broker returns the broker with broker id b if it is up.
func (c *Cluster) Broker(b int32) *broker.Node {
	if b < 1 || int(b) > len(c.Brokers) {
		return nil
	}
	n, _ := c.World.Node(c.Brokers[b-1]).(*broker.Node)
	return n
}

// BrokerNode is the node id of broker id b.
func (c *Cluster) BrokerNode(b int32) sim.NodeID { return c.Brokers[b-1] }

// AdminNode returns the admin client if it is up.
func (c *Cluster) AdminNode() *admin.Node {
	n, _ := c.World.Node(c.Admin).(*admin.Node)
	return n
}

// ActiveController is the running controller that is active in the highest
// epoch, and its node id, or nil.
func (c *Cluster) ActiveController() (*controller.Node, sim.NodeID) {
	var best *controller.Node
	bestID := sim.NoNode
	for _, id := range c.Controllers {
		n := c.Controller(id)
		if n == nil || c.World.State(id) != sim.Running || !n.Active() {
			continue
		}
		if best == nil || n.Raft().Epoch() > best.Raft().Epoch() {
			best, bestID = n, id
		}
	}
	return best, bestID
}

// Metadata is the freshest committed metadata image any running controller
// holds: the god view of "what the cluster decided".
func (c *Cluster) Metadata() *metadata.Image {
	var best *metadata.Image
	for _, id := range c.Controllers {
		if n := c.Controller(id); n != nil && (best == nil || n.Image().Offset > best.Offset) {
			best = n.Image()
		}
	}
	return best
}

// modelSelector is a target selector that needs the model's state.
type modelSelector struct {
	// form is the selector as messages write it.
	form string
	// resolve returns the nodes sel names now; matched is false when sel
	// has another form.
	resolve func(c *Cluster, sel string) (ids []sim.NodeID, matched bool, err error)
	// validate checks sel before a run.
	validate func(c *Cluster, sel string) (matched bool, err error)
}

// modelSelectors are the model's selectors; messages listing what a target
// may be are made from this table.
var modelSelectors = []modelSelector{
	{form: "leader(TOPIC-PARTITION)",
		resolve: func(c *Cluster, sel string) ([]sim.NodeID, bool, error) {
			arg, ok := sim.ParseCall(sel, "leader")
			if !ok {
				return nil, false, nil
			}
			tp, err := ParseTopicPartition(arg)
			if err != nil {
				return nil, true, err
			}
			im := c.Metadata()
			if im == nil {
				return nil, true, nil
			}
			p := im.Partition(tp)
			if p == nil || p.Leader == metadata.NoLeader || int(p.Leader) > len(c.Brokers) {
				return nil, true, nil
			}
			return []sim.NodeID{c.BrokerNode(p.Leader)}, true, nil
		},
		validate: func(c *Cluster, sel string) (bool, error) {
			arg, ok := sim.ParseCall(sel, "leader")
			if !ok {
				return false, nil
			}
			tp, err := ParseTopicPartition(arg)
			if err != nil {
				return true, err
			}
			var names []string
			for _, t := range c.cfg.Topics {
				if t.Name == tp.Topic {
					if int(tp.Partition) >= t.Partitions && len(t.Assignment) <= int(tp.Partition) {
						return true, fmt.Errorf("%s: topic %s has %d partitions", sel, t.Name, max(t.Partitions, len(t.Assignment)))
					}
					return true, nil
				}
				names = append(names, t.Name)
			}
			if len(names) == 0 {
				return true, fmt.Errorf("%s: no topic %q (the scenario has no topics)", sel, tp.Topic)
			}
			return true, fmt.Errorf("%s: no topic %q (topics: %s)", sel, tp.Topic, strings.Join(names, ", "))
		}},
	groupCoordinatorSelector,
	txnCoordinatorSelector,
	{form: "active-controller",
		resolve: func(c *Cluster, sel string) ([]sim.NodeID, bool, error) {
			if sel != "active-controller" {
				return nil, false, nil
			}
			if n, id := c.ActiveController(); n != nil {
				return []sim.NodeID{id}, true, nil
			}
			return nil, true, nil
		},
		validate: func(c *Cluster, sel string) (bool, error) { return sel == "active-controller", nil }},
}

// ResolveTarget resolves the selectors that need the model's state.
func (c *Cluster) ResolveTarget(selector string) ([]sim.NodeID, error) {
	for _, s := range modelSelectors {
		if ids, matched, err := s.resolve(c, selector); matched {
			return ids, err
		}
	}
	return nil, sim.ErrUnknownSelector
}

// SelectorForms lists the model's selectors, for messages.
func (c *Cluster) SelectorForms() []string {
	out := make([]string, len(modelSelectors))
	for i, s := range modelSelectors {
		out[i] = s.form
	}
	return out
}

// TargetForms lists every way a fault may name its targets, for messages
// written before there is a cluster: the names the cluster gives its nodes,
// the model's selectors, then the world's.
func TargetForms() []string {
	var out []string
	for _, f := range sim.SelectorForms() {
		if strings.Contains(f, "ROLE") {
			for _, role := range Roles {
				out = append(out, strings.Replace(f, "ROLE", role, 1))
			}
			continue
		}
		if f != sim.NodeNameForm {
			out = append(out, f)
			continue
		}
		out = append(out, strings.TrimSuffix(BrokerName(1), "1")+"N", strings.TrimSuffix(ControllerName(1), "1")+"N",
			ClientName("NAME", -1)+"I (instance I of producer or consumer NAME, e.g. "+ClientName("p", 0)+")", AdminName)
		out = append(out, (&Cluster{}).SelectorForms()...)
	}
	return out
}

// CreatedPartitions is how many partitions topic had when it was created
// (an add-partitions fault may add more).
func (c *Cluster) CreatedPartitions(topic string) int {
	for _, t := range c.cfg.Topics {
		if t.Name == topic {
			return max(t.Partitions, len(t.Assignment))
		}
	}
	return 0
}

// ValidateSelector checks the model's selectors before a run.
func (c *Cluster) ValidateSelector(selector string) error {
	for _, s := range modelSelectors {
		if matched, err := s.validate(c, selector); matched {
			return err
		}
	}
	return sim.ErrUnknownSelector
}

// ParseTopicPartition parses "orders-0".
func ParseTopicPartition(s string) (metadata.TopicPartition, error) {
	i := strings.LastIndexByte(s, '-')
	if i <= 0 {
		return metadata.TopicPartition{}, fmt.Errorf("%q is not TOPIC-PARTITION", s)
	}
	p, err := strconv.Atoi(s[i+1:])
	if err != nil || p < 0 {
		return metadata.TopicPartition{}, fmt.Errorf("%q is not TOPIC-PARTITION", s)
	}
	return metadata.TopicPartition{Topic: s[:i], Partition: int32(p)}, nil
}

// replicaLog is the god view of a replica's log, for the audit.
func (c *Cluster) replicaLog(b int32, tp metadata.TopicPartition) *partlog.Log {
	n := c.Broker(b)
	if n == nil {
		return nil
	}
	return n.PartitionLog(tp)
}

// Producer returns a producer instance if it is up.
func (c *Cluster) Producer(id sim.NodeID) *producer.Producer {
	p, _ := c.World.Node(id).(*producer.Producer)
	return p
}

// Reader returns a reader instance if it is up.
func (c *Cluster) Reader(id sim.NodeID) *reader.Reader {
	switch n := c.World.Node(id).(type) {
	case *reader.Reader:
		return n
	case *processor.Node:
		return n.Reader()
	}
	return nil
}

// AddPartitions is the admin operation of the custom fault add-partitions.
type AddPartitions struct {
	Topic string
	Count int
}

func (a AddPartitions) String() string {
	return fmt.Sprintf("add-partitions %s to %d", a.Topic, a.Count)
}

// ElectLeaders is the admin operation of the custom fault elect-leaders:
// an ElectLeaders request (KIP-460) of Type for Topic-Partition, or for
// every partition of every topic when Topic is "" (Kafka's null
// topicPartitions).
type ElectLeaders struct {
	Type      proto.ElectionType
	Topic     string
	Partition int32
}

func (e ElectLeaders) String() string {
	if e.Topic == "" {
		return fmt.Sprintf("elect-leaders %s (all partitions)", e.Type)
	}
	return fmt.Sprintf("elect-leaders %s %s-%d", e.Type, e.Topic, e.Partition)
}

func (c *Cluster) customFault(f sim.Fault) (string, error) {
	switch op := f.Custom.(type) {
	case ElectLeaders:
		a := c.AdminNode()
		if a == nil {
			return "", fmt.Errorf("the admin client is down")
		}
		var parts []proto.TopicPartition
		if op.Topic != "" {
			parts = []proto.TopicPartition{{Topic: op.Topic, Partition: op.Partition}}
		}
		a.ElectLeaders(op.Type, parts)
		return "requested", nil
	case AddPartitions:
		a := c.AdminNode()
		if a == nil {
			return "", fmt.Errorf("the admin client is down")
		}
		a.AddPartitions(op.Topic, op.Count)
		return "requested", nil
	case AlterConfig:
		return c.alterConfig(op)
	case Reassign:
		return c.reassign(op)
	}
	return "", fmt.Errorf("unknown admin operation %v", f.Custom)
}
