package scenarios

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"kafkasim/model/cluster"
	"kafkasim/sim"
)

// Resolved renders the scenario with every default filled in, as YAML that
// loads back to the same scenario: the run store's scenario.yaml.
func (s *Scenario) Resolved() ([]byte, error) {
	root := mapping()
	put(root, "name", str(s.Name))
	if s.Description != "" {
		d := str(s.Description)
		if foldable(s.Description) {
			d.Style = yaml.FoldedStyle
		}
		put(root, "description", d)
	}
	put(root, "seed", plain(strconv.FormatUint(s.Seed, 10)))
	put(root, "duration", str(formatDuration(s.Duration)))
	put(root, "settle", str(formatDuration(s.Settle)))

	c := mapping()
	put(c, "controllers", plain(strconv.Itoa(s.Cluster.Controllers)))
	put(c, "brokers", plain(strconv.Itoa(s.Cluster.Brokers)))
	put(c, "racks", flowList(s.Cluster.Racks))
	n := mapping()
	put(n, "latency", str(formatRange(s.Cluster.Network.Latency)))
	put(n, "loss", plain(formatFloat(s.Cluster.Network.LossProbability)))
	put(n, "duplicate", plain(formatFloat(s.Cluster.Network.DuplicateProbability)))
	put(n, "reorder", plain(formatFloat(s.Cluster.Network.ReorderProbability)))
	put(n, "bandwidth", str(formatByteRate(s.Cluster.Network.BandwidthBytesPerSecond)))
	put(c, "network", n)
	d := mapping()
	put(d, "write-latency", str(formatRange(s.Cluster.Disk.WriteLatency)))
	put(d, "fsync-latency", str(formatRange(s.Cluster.Disk.FsyncLatency)))
	put(d, "writeback-delay", str(formatDuration(s.Cluster.Disk.WritebackDelay)))
	put(d, "capacity-bytes", plain(strconv.FormatInt(s.Cluster.Disk.CapacityBytes, 10)))
	put(d, "torn-write-probability", plain(formatFloat(s.Cluster.Disk.TornWriteProbability)))
	put(d, "write-throughput", str(formatByteRate(s.Cluster.Disk.WriteThroughputBytesPerSecond)))
	put(c, "disk", d)
	broker := s.brokerOut()
	put(c, "broker", configNode(broker))
	put(root, "cluster", c)

	topics := seq()
	for _, t := range s.Topics {
		m := mapping()
		put(m, "name", str(t.Name))
		put(m, "partitions", plain(strconv.Itoa(t.Partitions)))
		put(m, "replication.factor", plain(strconv.Itoa(t.ReplicationFactor)))
		put(m, "config", configNode(t.Config))
		if t.Assignment != nil {
			rows := seq()
			for _, row := range t.Assignment {
				ids := make([]string, len(row))
				for i, id := range row {
					ids[i] = strconv.Itoa(int(id))
				}
				rows.Content = append(rows.Content, flowInts(ids))
			}
			put(m, "replica-assignment", rows)
		}
		topics.Content = append(topics.Content, m)
	}
	if ot := s.offsetsTopicOut(broker); s.writesOffsetsTopic(ot, broker) {
		m := mapping()
		put(m, "name", str(ot.Name))
		put(m, "partitions", plain(strconv.Itoa(ot.Partitions)))
		put(m, "replication.factor", plain(strconv.Itoa(ot.ReplicationFactor)))
		put(m, "config", configNode(ot.Config))
		topics.Content = append(topics.Content, m)
	}
	if s.TxnStateTopic.Name != "" {
		m := mapping()
		put(m, "name", str(TxnStateTopicName))
		put(m, "partitions", plain(broker.Get(txnPartsKey)))
		put(m, "replication.factor", plain(broker.Get(txnRFKey)))
		if len(s.TxnStateTopic.Config.Keys) > 0 {
			put(m, "config", configNode(s.TxnStateTopic.Config))
		}
		topics.Content = append(topics.Content, m)
	}
	put(root, "topics", topics)

	producers := seq()
	for _, p := range s.Producers {
		m := mapping()
		put(m, "name", str(p.Name))
		put(m, "count", plain(strconv.Itoa(p.Count)))
		put(m, "topic", str(p.Topic))
		put(m, "rate", str(formatFloat(p.Rate)+"/s"))
		put(m, "keys", plain(strconv.Itoa(p.Keys)))
		if p.Payload != "" {
			put(m, "payload", str(p.Payload))
		}
		put(m, "start", str(formatDuration(p.Start)))
		put(m, "stop", str(formatDuration(p.Stop)))
		if t := p.Transactions; t != nil {
			tm := mapping()
			records := strconv.Itoa(t.RecordsMin)
			if t.RecordsMax != t.RecordsMin {
				records += ".." + strconv.Itoa(t.RecordsMax)
			}
			put(tm, "records", str(records))
			put(tm, "abort", plain(formatFloat(t.Abort)))
			put(m, "transactions", tm)
		}
		put(m, "config", configNode(p.Config))
		producers.Content = append(producers.Content, m)
	}
	put(root, "producers", producers)

	consumers := seq()
	processors := seq()
	for _, cs := range s.Consumers {
		if p := cs.Processor; p != nil {
			m := mapping()
			put(m, "name", str(cs.Name))
			put(m, "count", plain(strconv.Itoa(cs.Count)))
			put(m, "group", str(cs.Group))
			put(m, "input", flowList(cs.Topics))
			put(m, "output", str(p.Output))
			put(m, "processing", str(formatRange(cs.Processing)))
			put(m, "exactly-once", plain(strconv.FormatBool(p.ExactlyOnce)))
			put(m, "commit-interval", str(formatDuration(p.CommitInterval)))
			cfg := copyConfig(cs.Config)
			for _, k := range p.Producer.Keys {
				cfg.Set(k, p.Producer.Get(k))
			}
			put(m, "config", configNode(cfg))
			processors.Content = append(processors.Content, m)
			continue
		}
		m := mapping()
		put(m, "name", str(cs.Name))
		put(m, "count", plain(strconv.Itoa(cs.Count)))
		if cs.Group != "" {
			put(m, "group", str(cs.Group))
		}
		put(m, "topics", flowList(cs.Topics))
		put(m, "processing", str(formatRange(cs.Processing)))
		if cs.Group != "" {
			put(m, "commit", str(cs.Commit))
			put(m, "workers", plain(strconv.Itoa(cs.Workers)))
			if cs.WorkersCommit != "" {
				put(m, "workers-commit", str(cs.WorkersCommit))
			}
			if cs.SideEffects != "" {
				put(m, "side-effects", str(cs.SideEffects))
			}
			put(m, "static", plain(strconv.FormatBool(cs.Static)))
		}
		put(m, "config", configNode(cs.Config))
		consumers.Content = append(consumers.Content, m)
	}
	put(root, "consumers", consumers)
	if len(processors.Content) > 0 {
		put(root, "processors", processors)
	}

	faults := seq()
	for _, f := range s.Faults {
		faults.Content = append(faults.Content, faultNode(f))
	}
	put(root, "faults", faults)
	nem := seq()
	for _, r := range s.Nemesis {
		nem.Content = append(nem.Content, nemesisNode(r))
	}
	put(root, "nemesis", nem)
	put(root, "nemesis-intensity", plain(formatFloat(s.NemesisIntensity)))
	put(root, "nemesis-swarm", plain(strconv.FormatBool(s.NemesisSwarm)))
	put(root, "bugs", flowList(s.Bugs))
	exp := mapping()
	for _, e := range s.Expect {
		if e.Bool != nil {
			put(exp, e.Key, plain(strconv.FormatBool(*e.Bool)))
		} else if _, err := strconv.ParseFloat(e.Cmp.Text, 64); err == nil {
			put(exp, e.Key, plain(e.Cmp.Text))
		} else {
			put(exp, e.Key, str(e.Cmp.Text))
		}
	}
	put(root, "expect", exp)

	var buf bytes.Buffer
	buf.WriteString("# Resolved by kafkasim: the scenario with every default filled in, and its seed.\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}}); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// foldable reports whether a text reads back the same from YAML's folded
// style (description: >): prose does; lines that start or end with blanks
// do not come back as they were, so such text is quoted instead.
func foldable(s string) bool {
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t") || strings.HasSuffix(line, " ") ||
			strings.HasSuffix(line, "\t") || strings.ContainsRune(line, '\r') {
			return false
		}
	}
	return true
}

func faultNode(f ScheduledFault) *yaml.Node {
	m := mapping()
	put(m, "at", str(formatDuration(f.At)))
	if f.AfterElections > 0 {
		put(m, "after-elections", plain(strconv.Itoa(f.AfterElections)))
	}
	ft := f.Fault
	switch f.Key {
	case "partition", "isolate":
		if ft.Kind == sim.FaultPartition {
			groups := seq()
			for _, g := range ft.Groups {
				groups.Content = append(groups.Content, flowList(g))
			}
			groups.Style = yaml.FlowStyle
			put(m, "partition", groups)
			if ft.OneWay {
				put(m, "one-way", plain("true"))
			}
		} else {
			put(m, "isolate", str(ft.Target))
		}
	case "heal":
		put(m, "heal", str("all"))
	case "disk":
		d := mapping()
		d.Style = yaml.FlowStyle
		put(d, "target", str(ft.Target))
		put(d, "fault", str(string(ft.Disk)))
		if ft.File != "" {
			put(d, "file", str(ft.File))
		}
		if ft.SlowFactor != 0 {
			put(d, "factor", plain(strconv.FormatInt(ft.SlowFactor, 10)))
		}
		put(m, "disk", d)
	case "add-partitions":
		op := ft.Custom.(cluster.AddPartitions)
		d := mapping()
		d.Style = yaml.FlowStyle
		put(d, "topic", str(op.Topic))
		put(d, "count", plain(strconv.Itoa(op.Count)))
		put(m, "add-partitions", d)
	case "elect-leaders":
		op := ft.Custom.(cluster.ElectLeaders)
		d := mapping()
		d.Style = yaml.FlowStyle
		if op.Topic != "" {
			put(d, "topic", str(op.Topic))
			put(d, "partition", plain(strconv.Itoa(int(op.Partition))))
		}
		put(d, "type", str(op.Type.String()))
		put(m, "elect-leaders", d)
	case "alter-config":
		put(m, "alter-config", alterConfigNode(ft.Custom.(cluster.AlterConfig)))
	case "reassign":
		put(m, "reassign", reassignNode(ft.Custom.(cluster.Reassign)))
	default:
		put(m, f.Key, str(ft.Target))
	}
	switch f.Key {
	case "disconnect":
		if ft.Peer != "" {
			put(m, "peer", str(ft.Peer))
		}
	case "slow-network":
		put(m, "latency", str(formatDuration(ft.Latency)))
	case "stall":
		names := seq()
		names.Style = yaml.FlowStyle
		for _, n := range ft.Messages {
			names.Content = append(names.Content, str(n))
		}
		put(m, "messages", names)
		if ft.StuckConnections {
			put(m, "stuck-connections", plain("true"))
		}
	case "clock":
		put(m, "offset", str(formatDuration(ft.ClockJump)))
		put(m, "drift-ppm", plain(strconv.FormatInt(ft.DriftPPM, 10)))
	}
	if key := undoKey[f.Key]; key != "" && ft.For > 0 {
		put(m, key, str(formatDuration(ft.For)))
	}
	return m
}

func nemesisNode(n NemesisRule) *yaml.Node {
	r := n.Rule
	m := mapping()
	m.Style = yaml.FlowStyle
	put(m, "fault", str(n.Key))
	if r.Fault.Target != "" {
		put(m, "target", str(r.Fault.Target))
	}
	if n.Key == "partition" {
		put(m, "shape", str(string(r.Shape)))
	}
	if r.Among != "" {
		put(m, "among", str(r.Among))
	}
	if r.Latency.Max > r.Latency.Min {
		put(m, "latency", str(formatRange(r.Latency)))
	} else if r.Fault.Latency > 0 {
		put(m, "latency", str(formatDuration(r.Fault.Latency)))
	}
	if r.Fault.Disk != "" {
		put(m, "disk", str(string(r.Fault.Disk)))
	}
	if r.Fault.File != "" {
		put(m, "file", str(r.Fault.File))
	}
	if r.Fault.SlowFactor != 0 {
		put(m, "factor", plain(strconv.FormatInt(r.Fault.SlowFactor, 10)))
	}
	if r.Fault.ClockJump != 0 {
		put(m, "offset", str(formatDuration(r.Fault.ClockJump)))
	}
	if r.Fault.DriftPPM != 0 {
		put(m, "drift-ppm", plain(strconv.FormatInt(r.Fault.DriftPPM, 10)))
	}
	put(m, "every", str(formatRange(r.Every)))
	if nemesisEnds(n.Key, r.Fault.Disk) {
		put(m, "down", str(formatRange(r.Down)))
	}
	return m
}

func configNode(c Config) *yaml.Node {
	m := mapping()
	for _, k := range c.Keys {
		v := keyValue(c.Get(k))
		switch {
		case listKeys[k]:
			v = flowList(strings.Split(c.Get(k), ","))
		case enumKeys[k]:
			v = str(c.Get(k)) // acks: "1" stays a string
		}
		put(m, k, v)
	}
	return m
}

var enumKeys, listKeys = keysOfKind(kindEnum), keysOfKind(kindList)

func keysOfKind(kind keyKind) map[string]bool {
	m := map[string]bool{}
	for _, t := range [][]kafkaKey{brokerKeys, topicKeys, producerKeys, allConsumerKeys} {
		for _, k := range t {
			if k.kind == kind {
				m[k.name] = true
			}
		}
	}
	return m
}

// writesOffsetsTopic says whether the resolved scenario lists
// __consumer_offsets among its topics: when a consumer group will have the
// coordinator create it, or when its config is not what the coordinator
// gives it (its partitions and replication factor are the broker's keys,
// written out in any case).
func (s *Scenario) writesOffsetsTopic(ot Topic, broker Config) bool {
	if len(s.Groups()) > 0 {
		return true
	}
	def := offsetsTopic(broker).Config
	for _, k := range ot.Config.Keys {
		if ot.Config.Get(k) != def.Get(k) {
			return true
		}
	}
	return false
}

// brokerOut is the broker config as written out: a default that follows
// the cluster (offsets.topic.replication.factor, min(3, brokers)) follows
// it still when the scenario was built in code or a sweep changed its
// brokers.
func (s *Scenario) brokerOut() Config {
	const rfKey = "offsets.topic.replication.factor"
	b := s.Cluster.Broker
	if b.Explicit[rfKey] && b.Explicit[txnRFKey] && b.Explicit[txnMinISR] {
		return b
	}
	out := Config{Keys: b.Keys, Values: copyMap(b.Values), Explicit: b.Explicit}
	if !b.Explicit[rfKey] {
		out.Values[rfKey] = strconv.Itoa(min(3, s.Cluster.Brokers))
	}
	// The transaction coordinator's follow the cluster likewise: the
	// replication factor min(3, brokers), the min ISR min(2, it).
	if !b.Explicit[txnRFKey] {
		out.Values[txnRFKey] = strconv.Itoa(min(3, s.Cluster.Brokers))
	}
	if !b.Explicit[txnMinISR] {
		out.Values[txnMinISR] = strconv.FormatInt(min(2, configInt(out, txnRFKey)), 10)
	}
	return out
}

// offsetsTopicOut is the offsets topic as written out: a scenario built in
// code has none yet (the coordinator's), and its partitions and
// replication factor are the broker's keys.
func (s *Scenario) offsetsTopicOut(broker Config) Topic {
	ot := s.OffsetsTopic
	if ot.Name == "" {
		ot = offsetsTopic(broker)
	}
	ot.Partitions = int(configInt(broker, "offsets.topic.num.partitions"))
	ot.ReplicationFactor = int(configInt(broker, "offsets.topic.replication.factor"))
	return ot
}

func mapping() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"} }
func seq() *yaml.Node     { return &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"} }

func put(m *yaml.Node, key string, v *yaml.Node) {
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
}

func str(s string) *yaml.Node   { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }
func plain(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: s} }

func flowList(items []string) *yaml.Node {
	n := seq()
	n.Style = yaml.FlowStyle
	for _, it := range items {
		n.Content = append(n.Content, str(it))
	}
	return n
}

func flowInts(items []string) *yaml.Node {
	n := seq()
	n.Style = yaml.FlowStyle
	for _, it := range items {
		n.Content = append(n.Content, plain(it))
	}
	return n
}

// formatDuration writes a duration the loader reads back exactly.
func formatDuration(d time.Duration) string {
	switch {
	case d == 0:
		return "0s"
	case d < 0:
		return "-" + formatDuration(-d)
	case d%time.Second == 0:
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	case d%time.Millisecond == 0:
		return strconv.FormatInt(int64(d/time.Millisecond), 10) + "ms"
	case d%time.Microsecond == 0:
		return strconv.FormatInt(int64(d/time.Microsecond), 10) + "us"
	}
	return strconv.FormatInt(int64(d), 10) + "ns"
}

func formatRange(r sim.Range) string {
	if r.Min == r.Max {
		return formatDuration(r.Min)
	}
	return formatDuration(r.Min) + ".." + formatDuration(r.Max)
}

func formatFloat(x float64) string {
	s := strconv.FormatFloat(x, 'f', -1, 64)
	if strings.ContainsAny(s, "eE") {
		s = fmt.Sprintf("%v", x)
	}
	return s
}
