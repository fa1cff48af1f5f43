package scenarios

import (
	"math"
	"strconv"
	"strings"
	"time"

	"kafkasim/checker"
	"kafkasim/godview"
	"kafkasim/model/broker"
	"kafkasim/model/cluster"
	"kafkasim/model/group"
	"kafkasim/model/producer"
	kreader "kafkasim/model/reader"
	"kafkasim/model/record"
	"kafkasim/sim"

	"go.yaml.in/yaml/v3"
)

// ClusterConfig turns the scenario into the model's configuration.
func (s *Scenario) ClusterConfig() cluster.Config {
	b := s.Cluster.Broker
	cfg := cluster.DefaultConfig(s.Seed)
	cfg.Controllers, cfg.Brokers = s.Cluster.Controllers, s.Cluster.Brokers
	cfg.Racks = append([]string(nil), s.Cluster.Racks...)
	cfg.Network = sim.NetworkOptions{Latency: s.Cluster.Network.Latency, LossProbability: s.Cluster.Network.LossProbability,
		DuplicateProbability: s.Cluster.Network.DuplicateProbability, ReorderProbability: s.Cluster.Network.ReorderProbability,
		BandwidthBytesPerSecond: s.Cluster.Network.BandwidthBytesPerSecond}
	cfg.Disk = sim.DiskOptions{WriteLatency: s.Cluster.Disk.WriteLatency, FsyncLatency: s.Cluster.Disk.FsyncLatency,
		WritebackDelay: s.Cluster.Disk.WritebackDelay, CapacityBytes: s.Cluster.Disk.CapacityBytes,
		TornWriteProbability:          s.Cluster.Disk.TornWriteProbability,
		WriteThroughputBytesPerSecond: s.Cluster.Disk.WriteThroughputBytesPerSecond}
	cfg.Broker = cluster.BrokerSettings{
		ELREnabled:               configBool(b, "eligible.leader.replicas.enable"),
		UncleanLeaderElection:    configBool(b, "unclean.leader.election.enable"),
		MinInsyncReplicas:        int(configInt(b, "min.insync.replicas")),
		DefaultReplicationFactor: int(configInt(b, "default.replication.factor")),
		HeartbeatInterval:        configMs(b, "broker.heartbeat.interval.ms"),
		SessionTimeout:           configMs(b, "broker.session.timeout.ms"),
	}
	if configBool(b, "auto.leader.rebalance.enable") {
		cfg.Broker.LeaderImbalanceCheckInterval = time.Duration(configInt(b, "leader.imbalance.check.interval.seconds")) * time.Second
	}
	cfg.Quorum.ElectionTimeout = configMs(b, "controller.quorum.election.timeout.ms")
	cfg.Quorum.FetchTimeout = configMs(b, "controller.quorum.fetch.timeout.ms")
	cfg.Quorum.MaxIdleInterval = configMs(b, "metadata.max.idle.interval.ms")
	d := broker.DefaultDataConfig()
	d.ReplicaLagTimeMax = configMs(b, "replica.lag.time.max.ms")
	d.ReplicaFetchWaitMax = configMs(b, "replica.fetch.wait.max.ms")
	d.ReplicaFetchMaxBytes = int(configInt(b, "replica.fetch.max.bytes"))
	d.ReplicaFetchBackoff = configMs(b, "replica.fetch.backoff.ms")
	d.ReplicaSocketTimeout = configMs(b, "replica.socket.timeout.ms")
	d.HWCheckpointInterval = configMs(b, "replica.high.watermark.checkpoint.interval.ms")
	d.OffsetCheckpointInterval = configMs(b, "log.flush.offset.checkpoint.interval.ms")
	d.RetentionCheckInterval = configMs(b, "log.retention.check.interval.ms")
	d.AddPartitionsRetryBackoff = configMs(b, "add.partitions.to.txn.retry.backoff.ms")
	d.AddPartitionsRetryBackoffMax = configMs(b, "add.partitions.to.txn.retry.backoff.max.ms")
	if b.Get("log.flush.interval.ms") != never {
		d.FlushInterval = configMs(b, "log.flush.interval.ms")
	}
	d.Log.SegmentBytes = configInt(b, "log.segment.bytes")
	d.Log.FlushIntervalMessages = configInt(b, "log.flush.interval.messages")
	d.Log.RetentionTime = configMs(b, "log.retention.ms")
	if configInt(b, "log.retention.ms") < 0 {
		d.Log.RetentionTime = -1
	}
	d.Log.RetentionBytes = configInt(b, "log.retention.bytes")
	d.Log.Compact = strings.HasPrefix(b.Get("log.cleanup.policy"), "compact")
	cfg.Data = d
	for _, t := range s.Topics {
		spec := cluster.TopicSpec{Name: t.Name, Partitions: t.Partitions, ReplicationFactor: t.ReplicationFactor,
			Assignment: t.Assignment, Configs: map[string]string{}}
		// Topic configs go to the controller as Kafka's topic configs do;
		// only those that differ from the broker's are topic overrides.
		for _, k := range t.Config.Keys {
			v := t.Config.Get(k)
			if !t.setsConfig(b, k) {
				continue
			}
			switch k {
			case "min.insync.replicas":
				spec.MinInsyncReplicas = int(configInt(t.Config, k))
			case "unclean.leader.election.enable":
				u := v == "true"
				spec.Unclean = &u
			default:
				spec.Configs[k] = v
			}
		}
		cfg.Topics = append(cfg.Topics, spec)
	}
	cfg.Bugs = append([]string(nil), s.Bugs...)
	for _, p := range s.Producers {
		cfg.Producers = append(cfg.Producers, cluster.ProducerSpec{Name: p.Name, Count: p.Count, Config: p.producerConfig()})
	}
	for _, c := range s.Consumers {
		cfg.Readers = append(cfg.Readers, c.readerSpec())
	}
	if len(s.Groups()) > 0 {
		cfg.Groups = s.groupSettings()
	}
	if s.hasTransactionalClients() {
		cfg.Transactions = s.txnSettings()
	}
	return cfg
}

// groupSettings is the brokers' group coordinator, from the broker keys and
// the __consumer_offsets entry.
func (s *Scenario) groupSettings() *cluster.GroupSettings {
	b := s.Cluster.Broker
	gc := group.DefaultConfig()
	ot := s.OffsetsTopic
	if ot.Name == "" {
		ot = offsetsTopic(b)
	}
	gc.OffsetsTopicNumPartitions, gc.OffsetsTopicReplicationFactor = ot.Partitions, ot.ReplicationFactor
	gc.OffsetsTopicConfigs = map[string]string{}
	for _, k := range ot.Config.Keys {
		v := ot.Config.Get(k)
		if v == b.Get(topicInherits[k]) && !ot.Config.Explicit[k] && !offsetsTopicFixed[k] {
			continue // the broker's own: the controller applies it
		}
		gc.OffsetsTopicConfigs[k] = v
	}
	gc.OffsetsCommitTimeout = configMs(b, "offsets.commit.timeout.ms")
	gc.GroupInitialRebalanceDelay = configMs(b, "group.initial.rebalance.delay.ms")
	gc.GroupMinSessionTimeout = configMs(b, "group.min.session.timeout.ms")
	gc.GroupMaxSessionTimeout = configMs(b, "group.max.session.timeout.ms")
	gc.GroupConsumerSessionTimeout = configMs(b, "group.consumer.session.timeout.ms")
	gc.GroupConsumerHeartbeatInterval = configMs(b, "group.consumer.heartbeat.interval.ms")
	return &cluster.GroupSettings{Coordinator: gc, ConsumerAssignors: configList(b, "group.consumer.assignors")}
}

func (p Producer) producerConfig() producer.Config {
	c := p.Config
	pc := producer.DefaultConfig("", p.Topic)
	pc.Rate, pc.Keys, pc.Payload = p.Rate, p.Keys, p.Payload
	pc.Start, pc.Stop = p.Start, p.Stop
	switch c.Get("acks") {
	case "1":
		pc.Acks = 1
	case "0":
		pc.Acks = 0
	default:
		pc.Acks = -1
	}
	pc.EnableIdempotence = configBool(c, "enable.idempotence")
	pc.LingerMs = configMs(c, "linger.ms")
	pc.BatchSize = int(configInt(c, "batch.size"))
	// The loader admits only the codecs record knows.
	pc.Compression, _ = record.ParseCompression(c.Get("compression.type"))
	pc.Retries = int(configInt(c, "retries"))
	pc.RetryBackoff = configMs(c, "retry.backoff.ms")
	pc.RetryBackoffMax = configMs(c, "retry.backoff.max.ms")
	pc.DeliveryTimeout = configMs(c, "delivery.timeout.ms")
	pc.RequestTimeout = configMs(c, "request.timeout.ms")
	pc.MaxInFlight = int(configInt(c, "max.in.flight.requests.per.connection"))
	pc.MetadataMaxAge = configMs(c, "metadata.max.age.ms")
	if t := p.Transactions; t != nil {
		// The cluster gives instance i the id "<transactional.id>-<i>".
		pc.TransactionalID = c.Get("transactional.id")
		pc.TransactionTimeout = configMs(c, "transaction.timeout.ms")
		pc.Transactions = &producer.TxnWorkload{RecordsMin: t.RecordsMin, RecordsMax: t.RecordsMax, Abort: t.Abort}
	}
	return pc
}

func (c Consumer) readerConfig() kreader.Config {
	rc := kreader.DefaultConfig("", c.Topics)
	rc.Isolation = c.Config.Get("isolation.level")
	rc.AutoOffsetReset = c.Config.Get("auto.offset.reset")
	rc.Processing = c.Processing
	rc.MaxPollRecords = int(configInt(c.Config, "max.poll.records"))
	rc.FetchMaxWait = configMs(c.Config, "fetch.max.wait.ms")
	rc.MaxPartitionFetchBytes = int(configInt(c.Config, "max.partition.fetch.bytes"))
	rc.RequestTimeout = configMs(c.Config, "request.timeout.ms")
	rc.RetryBackoff = configMs(c.Config, "retry.backoff.ms")
	rc.RetryBackoffMax = configMs(c.Config, "retry.backoff.max.ms")
	rc.MetadataMaxAge = configMs(c.Config, "metadata.max.age.ms")
	if c.Group != "" {
		rc.Group = c.groupConfig()
		// A member's application polls again as soon as it has processed
		// what the last poll returned: its processing is per record.
		rc.Processing = sim.Range{}
	}
	return rc
}

// groupConfig is a group member's configuration (its group.instance.id
// is set per instance when the cluster is built).
func (c Consumer) groupConfig() *kreader.GroupConfig {
	gc := kreader.DefaultGroupConfig(c.Group)
	switch c.Commit {
	case CommitBeforeProcessing:
		gc.Commit = kreader.CommitBeforeProcessing
	case CommitAfterProcessing, CommitTransactional:
		// A transactional member's commits are its processor's
		// (readerSpec); its auto-commit is off.
		gc.Commit = kreader.CommitAfterProcessing
	default:
		gc.Commit = kreader.CommitAuto
	}
	if c.Config.Get("group.protocol") == string(kreader.ProtocolConsumer) {
		// The loader wrote out the brokers' default assignor when none
		// was set.
		gc.Protocol, gc.ServerAssignor = kreader.ProtocolConsumer, c.Config.Get("group.remote.assignor")
	}
	if c.Config.Get("session.timeout.ms") != "" {
		gc.SessionTimeout = configMs(c.Config, "session.timeout.ms")
	}
	if c.Config.Get("heartbeat.interval.ms") != "" {
		gc.HeartbeatInterval = configMs(c.Config, "heartbeat.interval.ms")
	}
	gc.MaxPollInterval = configMs(c.Config, "max.poll.interval.ms")
	gc.AutoCommitInterval = configMs(c.Config, "auto.commit.interval.ms")
	gc.DefaultAPITimeout = configMs(c.Config, "default.api.timeout.ms")
	gc.RetryBackoff = configMs(c.Config, "retry.backoff.ms")
	gc.RetryBackoffMax = configMs(c.Config, "retry.backoff.max.ms")
	gc.RequestTimeout = configMs(c.Config, "request.timeout.ms")
	gc.Processing = c.Processing
	gc.Workers = max(c.Workers, 1)
	gc.CommitHighestFinished = c.WorkersCommit == "highest-finished"
	switch c.SideEffects {
	case "plain":
		gc.SideEffects = kreader.SideEffectsPlain
	case "idempotent":
		gc.SideEffects = kreader.SideEffectsIdempotent
	}
	if names := configList(c.Config, "partition.assignment.strategy"); len(names) > 0 {
		// The loader admits only the assignors assign knows.
		gc.Assignors, _ = cluster.ClientAssignors(names)
	}
	return &gc
}

// Guarantees is what the scenario's configuration promises, for the checker
// (what happened in the run, such as losses, is added by the runner).
func (s *Scenario) Guarantees() checker.Config {
	cc := checker.Config{ELR: configBool(s.Cluster.Broker, "eligible.leader.replicas.enable"), Bugs: append([]string(nil), s.Bugs...),
		OffsetsTopicPartitions: int(configInt(s.Cluster.Broker, "offsets.topic.num.partitions"))}
	for _, p := range s.Producers {
		cc.Producers = append(cc.Producers, checker.ProducerGuarantees{Prefix: p.Name, Acks: p.Config.Get("acks"),
			Idempotence: configBool(p.Config, "enable.idempotence"),
			MaxInFlight: int(configInt(p.Config, "max.in.flight.requests.per.connection")),
			Retries:     int(min(configInt(p.Config, "retries"), math.MaxInt32))})
	}
	for _, c := range s.Consumers {
		g := checker.ConsumerGuarantees{Prefix: c.Name, Isolation: c.Config.Get("isolation.level"),
			AutoOffsetReset: c.Config.Get("auto.offset.reset")}
		if c.Group != "" {
			g.Group, g.Commit, g.SideEffects = c.Group, c.Commit, c.SideEffects
			g.GroupProtocol = c.Config.Get("group.protocol")
		}
		if c.Commit == CommitTransactional {
			cc.Producers = append(cc.Producers, checker.ProducerGuarantees{Prefix: c.Name, Acks: "all", Idempotence: true, MaxInFlight: 5,
				Retries: math.MaxInt32, TransactionTimeout: configMs(c.Config, "transaction.timeout.ms")})
		} else if p := c.Processor; p != nil && p.ExactlyOnce {
			g.Commit = "transactional"
			cc.Producers = append(cc.Producers, checker.ProducerGuarantees{Prefix: c.Name, Acks: "all", Idempotence: true, MaxInFlight: 5,
				Retries: math.MaxInt32, TransactionTimeout: configMs(p.Producer, "transaction.timeout.ms")})
		} else if p != nil {
			cc.Producers = append(cc.Producers, checker.ProducerGuarantees{Prefix: c.Name, Acks: "all", Idempotence: true, MaxInFlight: 5,
				Retries: math.MaxInt32})
		}
		cc.Consumers = append(cc.Consumers, g)
	}
	for _, t := range s.Topics {
		cc.Topics = append(cc.Topics, checker.TopicGuarantees{Name: t.Name, ReplicationFactor: t.ReplicationFactor,
			MinInsyncReplicas:     int(configInt(t.Config, "min.insync.replicas")),
			Unclean:               configBool(t.Config, "unclean.leader.election.enable"),
			SetsMinInsyncReplicas: t.setsConfig(s.Cluster.Broker, "min.insync.replicas"),
			SetsUnclean:           t.setsConfig(s.Cluster.Broker, "unclean.leader.election.enable"),
			FlushEveryMessage:     configInt(t.Config, "flush.messages") == 1,
			Compact:               strings.HasPrefix(t.Config.Get("cleanup.policy"), "compact")})
	}
	return cc
}

// ScheduledFaultFacts is what the scenario's faults may do that Kafka
// permits to cost data or order, for checking a history without the
// simulator's god view (kafkasim check --config): the topics an
// add-partitions fault grows, and a power loss for each fault that may lose
// brokers' page cache (crash, power loss, a torn write or a wiped disk,
// scheduled or drawn by the nemesis). Their times are unknown. The runner
// hands the checker what did happen instead (cluster.Cluster's Facts).
func (s *Scenario) ScheduledFaultFacts() godview.List {
	var facts []godview.Fact
	for _, f := range s.Faults {
		if op, ok := f.Fault.Custom.(cluster.AddPartitions); ok {
			facts = append(facts, godview.Fact{Kind: godview.PartitionsAdded, Topic: op.Topic, Producer: godview.NoProducer})
		}
		if cluster.LosesPageCache(f.Fault) {
			facts = append(facts, godview.Fact{Kind: godview.PowerLoss, Producer: godview.NoProducer})
		}
		if fact, ok := cluster.UncleanRequested(f.Fault); ok {
			facts = append(facts, fact)
		}
		facts = append(facts, cluster.ScheduledConfigFacts(f.Fault)...)
	}
	for _, r := range s.Nemesis {
		if cluster.LosesPageCache(r.Rule.Fault) {
			facts = append(facts, godview.Fact{Kind: godview.PowerLoss, Producer: godview.NoProducer})
		}
	}
	return godview.Scheduled(facts...)
}

// NemesisOptions is the nemesis of the fault phase.
func (s *Scenario) NemesisOptions() sim.NemesisOptions {
	o := sim.NemesisOptions{Swarm: s.NemesisSwarm, Intensity: s.NemesisIntensity, Stop: s.Duration}
	for _, r := range s.Nemesis {
		o.Rules = append(o.Rules, r.Rule)
	}
	return o
}

// FinalReaderName is the reader every run adds for its final reads.
const FinalReaderName = "kafkasim-final"

// crossCheck validates what needs the whole scenario: node names, and every
// fault's targets against the cluster the scenario builds. It runs whatever
// errors the sections had, and leaves out a check an error already covers:
// a selector naming broker-5 is not reported when the broker count itself
// was wrong.
func (r *reader) crossCheck(s *Scenario, root *yaml.Node) {
	nodesKnown := !r.failedAt("cluster.controllers") && !r.failedAt("cluster.brokers")
	names := map[string]string{cluster.AdminName: "the admin client", cluster.ClientName(FinalReaderName, 0): "kafkasim's final reader"}
	servers := map[string]bool{}
	for i := 1; i <= s.Cluster.Controllers; i++ {
		names[cluster.ControllerName(i)] = "a controller"
		servers[cluster.ControllerName(i)] = true
	}
	for i := 1; i <= s.Cluster.Brokers; i++ {
		names[cluster.BrokerName(int32(i))] = "a broker"
		servers[cluster.BrokerName(int32(i))] = true
	}
	// The clients the cluster below is built with: those whose names are
	// known and distinct.
	clientsKnown := !r.failedOn("producers") && !r.failedOn("consumers")
	clients := func(kind, path string, name string, count int) bool {
		if r.failedOn(path) || r.failedAt(path+".name") || r.failedAt(path+".count") {
			clientsKnown = false
			return false
		}
		for j := range count {
			n := cluster.ClientName(name, j)
			if other, ok := names[n]; ok {
				if nodesKnown || !servers[n] {
					key := path + ".name"
					r.fail(r.where(key, root), key, "%s instance %q would have the name of %s", kind, n, other)
				}
				clientsKnown = false
				return false
			}
		}
		for j := range count {
			names[cluster.ClientName(name, j)] = kind + " " + name
		}
		return true
	}
	cfg := s.ClusterConfig()
	cfg.Producers, cfg.Readers = nil, nil
	for i, p := range s.Producers {
		if clients("producer", r.producerPaths[i], p.Name, p.Count) {
			cfg.Producers = append(cfg.Producers, cluster.ProducerSpec{Name: p.Name, Count: p.Count, Config: p.producerConfig()})
		}
	}
	for i, c := range s.Consumers {
		if clients("consumer", r.consumerPaths[i], c.Name, c.Count) {
			cfg.Readers = append(cfg.Readers, c.readerSpec())
		}
	}
	c, err := cluster.Build(cfg)
	if err != nil {
		r.fail(root, "", "%v", err)
		return
	}
	w := c.World
	// leader(T-P) may name a partition an add-partitions fault creates:
	// selectors are resolved when their fault fires.
	grown := map[string]int{}
	for _, f := range s.Faults {
		if op, ok := f.Fault.Custom.(cluster.AddPartitions); ok {
			grown[op.Topic] = max(grown[op.Topic], op.Count)
		}
	}
	validate := func(sel string) error {
		if matched, err := groupCoordinatorTarget(sel, s); matched {
			return err
		}
		if arg, ok := sim.ParseCall(sel, "leader"); ok {
			if tp, err := cluster.ParseTopicPartition(arg); err == nil && int(tp.Partition) < grown[tp.Topic] {
				return nil
			}
		}
		return w.ValidateSelector(sel)
	}
	// known says whether what sel depends on was read without error.
	known := func(sel string) bool {
		if arg, ok := sim.ParseCall(sel, "leader"); ok {
			tp, err := cluster.ParseTopicPartition(arg)
			if err != nil {
				return true
			}
			if r.topicNamesDoubtful || r.grownDoubtful {
				return false
			}
			if i, ok := r.topicIndex[tp.Topic]; ok {
				p := r.topicPaths[i]
				return !r.failedAt(p+".partitions") && !r.failedAt(p+".replica-assignment")
			}
			return true
		}
		if _, ok := ParseGroupCoordinator(sel); ok {
			return !r.failedAt("consumers")
		}
		if _, ok := sim.ParseCall(sel, "rack"); ok {
			return !r.failedAt("cluster.racks")
		}
		return nodesKnown && clientsKnown
	}
	check := func(sel string, line, column int, path string) {
		if err := validate(sel); err != nil && known(sel) {
			r.fail(&yaml.Node{Line: line, Column: column}, path, "%v", err)
		}
	}
	for _, f := range s.Faults {
		for _, sel := range f.Fault.Selectors() {
			check(sel, f.Line, f.Column, f.Path)
		}
	}
	for _, n := range s.Nemesis {
		sels := n.Rule.Fault.Selectors()
		if n.Rule.Among != "" {
			sels = append(sels, n.Rule.Among)
		}
		for _, sel := range sels {
			check(sel, n.Line, n.Column, n.Path)
		}
	}
}

// keyValue renders a config value as YAML: numbers and booleans plain,
// anything else a string.
func keyValue(v string) *yaml.Node {
	if v == "true" || v == "false" {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: v}
	}
	if _, err := strconv.ParseInt(v, 10, 64); err == nil {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: v}
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}
}

// setsConfig reports whether the topic sets config k itself (a topic
// override the controller keeps): given explicitly, or different from the
// broker's (b) value it would inherit.
func (t *Topic) setsConfig(b Config, k string) bool {
	return t.Config.Get(k) != b.Get(topicInherits[k]) || t.Config.Explicit[k]
}
