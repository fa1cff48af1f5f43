package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"kafkasim/checker"
	"kafkasim/model/cluster"
	"kafkasim/sim"
)

// Limits (docs/scenarios.md): beyond them a scenario is an input error, not
// a slow run.
const (
	ControllersMax = 7
	BrokersMax     = 64
	PartitionsMax  = 10_000
	TopicsMax      = 1000
	// InstancesMax bounds the producer instances of a scenario, all entries
	// together, and likewise its consumer instances.
	InstancesMax    = 256
	PhaseMax        = 24 * time.Hour
	FileBytesMax    = 1 << 20
	DefaultDuration = 60 * time.Second
	DefaultSettle   = 30 * time.Second
	NemesisRulesMax = 64
	FaultsMax       = 10_000
	// ElectionsMax bounds a fault's after-elections.
	ElectionsMax         = 1000
	DefaultSeed          = 1
	defaultRatePerSecond = 100
)

// LoadFile reads and validates a scenario file.
func LoadFile(path string) (*Scenario, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// readFile reads an input file of at most FileBytesMax bytes.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{File: path, Msg: fmt.Sprintf("cannot read: %v", unwrapPathError(err))}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, FileBytesMax+1))
	if err != nil {
		return nil, &Error{File: path, Msg: fmt.Sprintf("cannot read: %v", err)}
	}
	if len(data) > FileBytesMax {
		return nil, &Error{File: path, Msg: fmt.Sprintf("file is larger than %d bytes", FileBytesMax)}
	}
	return data, nil
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// Parse validates a scenario given as bytes; file names it in errors.
func Parse(file string, data []byte) (*Scenario, error) {
	s, _, err := parse(file, data)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// parse is Parse, returning for tests what it read even when it has errors,
// and the reader (what it walked).
func parse(file string, data []byte) (*Scenario, *reader, error) {
	root, err := parseDocument(file, data)
	if err != nil {
		return nil, nil, err
	}
	r := newReader(file, len(data))
	s := r.scenario(root, file)
	// Checks across sections run whatever else is wrong, so that one round
	// reports every problem; each skips what an error already covers.
	r.crossCheck(s, root)
	if r.failures == 0 {
		r.fitsWrittenOut(s, root)
	}
	if r.failures > 0 {
		return s, r, r.report()
	}
	s.File = file
	return s, r, nil
}

// fitsWrittenOut checks that the scenario with every default filled in (the
// run store's scenario.yaml, which replay loads) is a file the loader takes.
func (r *reader) fitsWrittenOut(s *Scenario, root *yaml.Node) {
	out, err := s.Resolved()
	if err != nil {
		r.fail(root, "", "cannot write the scenario out with its defaults: %v", err)
		return
	}
	if len(out) > FileBytesMax {
		r.fail(root, "", "written out with every default filled in (the run store's scenario.yaml) the scenario takes %d bytes, more than the %d a scenario file may: fewer topics, clients or faults, or shorter payloads", len(out), FileBytesMax)
	}
}

// parseDocument parses a file holding one YAML document and returns its
// root node, or an error with the line YAML names.
func parseDocument(file string, data []byte) (*yaml.Node, error) {
	if len(data) > FileBytesMax {
		return nil, &Error{File: file, Msg: fmt.Sprintf("file is larger than %d bytes", FileBytesMax)}
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{File: file, Msg: "the file is empty"}
		}
		e := &Error{File: file, Msg: err.Error()}
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			fmt.Sscan(m[1], &e.Line)
			e.Msg = "invalid YAML: " + m[2]
		} else {
			e.Msg = "invalid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")
		}
		return nil, e
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &Error{File: file, Line: extra.Line, Msg: "a file holds one YAML document; found a second"}
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	return root, nil
}

var topKeys = []string{"name", "description", "seed", "duration", "settle", "cluster", "topics", "producers",
	"consumers", "processors", "faults", "nemesis", "nemesis-intensity", "nemesis-swarm", "bugs", "expect"}

func (r *reader) scenario(root *yaml.Node, file string) *Scenario {
	s := &Scenario{Seed: DefaultSeed, Duration: DefaultDuration, Settle: DefaultSettle, NemesisIntensity: 1}
	s.Cluster = defaultCluster()
	if root.Kind != yaml.MappingNode {
		r.fail(root, "", "a scenario is a mapping of keys (name, cluster, topics, ...), got %s", kindName(root))
		return s
	}
	var nodes = map[string]field{}
	for _, f := range r.fields(root, "", topKeys) {
		nodes[f.name] = f
	}
	// Order matters: the cluster before topics (replication factors are
	// checked against brokers), topics before clients and faults.
	if f, ok := nodes["name"]; ok {
		s.Name = r.name(f, "scenario name")
	} else {
		base := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(file), ".yaml"), ".yml")
		if safeName.MatchString(base) && !strings.Contains(base, "..") {
			s.Name = base
		} else {
			r.fail(root, "name", "missing, and the file name %q cannot stand in for it", base)
		}
	}
	if f, ok := nodes["description"]; ok {
		s.Description = strings.TrimSpace(r.str(f))
	}
	if f, ok := nodes["seed"]; ok {
		if v, ok := r.uint(f); ok {
			s.Seed = v
		}
	}
	if f, ok := nodes["duration"]; ok {
		if v, ok := r.duration(f, time.Millisecond, PhaseMax); ok {
			s.Duration = v
		}
	}
	if f, ok := nodes["settle"]; ok {
		if v, ok := r.duration(f, 0, PhaseMax); ok {
			s.Settle = v
		}
	}
	if f, ok := nodes["cluster"]; ok {
		r.cluster(f, &s.Cluster)
	}
	r.groupCoordinatorDefaults(s)
	if f, ok := nodes["topics"]; ok {
		r.topics(f, s)
	}
	if f, ok := nodes["producers"]; ok {
		r.producers(f, s)
	}
	if f, ok := nodes["consumers"]; ok {
		r.consumers(f, s)
	}
	if f, ok := nodes["processors"]; ok {
		r.processors(f, s)
	}
	r.groupsAgree(s)
	r.txnCoordinatorDefaults(s)
	if f, ok := nodes["bugs"]; ok {
		r.bugs(f, s)
	}
	if f, ok := nodes["nemesis-intensity"]; ok {
		if v, ok := r.float(f, 0, 100); ok {
			s.NemesisIntensity = v
		}
	}
	if f, ok := nodes["nemesis-swarm"]; ok {
		if v, ok := r.bool(f); ok {
			s.NemesisSwarm = v
		}
	}
	if f, ok := nodes["faults"]; ok {
		r.faults(f, s)
	}
	if f, ok := nodes["nemesis"]; ok {
		r.nemesis(f, s)
	}
	if f, ok := nodes["expect"]; ok {
		r.expect(f, s)
	}
	// The expectations every run has unless the scenario says otherwise.
	has := map[string]bool{}
	for _, e := range s.Expect {
		has[e.Key] = true
	}
	if !has["violations"] {
		s.Expect = append([]Expectation{{Key: "violations", Cmp: Comparison{Op: "==", Value: 0, Text: "0"}}}, s.Expect...)
	}
	if !has["converged"] {
		yes := true
		s.Expect = append(s.Expect, Expectation{Key: "converged", Bool: &yes})
	}
	if s.Bugs == nil {
		s.Bugs = []string{}
	}
	return s
}

func defaultCluster() Cluster {
	net := sim.DefaultNetworkOptions()
	disk := sim.DefaultDiskOptions()
	return Cluster{
		Controllers: 3,
		Brokers:     3,
		Racks:       []string{},
		Network:     Network{Latency: net.Latency},
		Disk:        Disk{WriteLatency: disk.WriteLatency, FsyncLatency: disk.FsyncLatency, WritebackDelay: disk.WritebackDelay},
		Broker:      defaults(brokerKeys),
	}
}

func (r *reader) cluster(f field, c *Cluster) {
	for _, g := range r.fields(f.value, f.path, []string{"controllers", "brokers", "racks", "network", "disk", "broker"}) {
		switch g.name {
		case "controllers":
			if n, ok := r.int(g, 1, ControllersMax); ok {
				c.Controllers = int(n)
			}
		case "brokers":
			if n, ok := r.int(g, 1, BrokersMax); ok {
				c.Brokers = int(n)
			}
		case "racks":
			c.Racks = []string{}
			seen := map[string]bool{}
			for i, item := range r.list(g) {
				if item == nil {
					continue
				}
				h := field{value: item, key: item, path: index(g.path, i)}
				name := r.name(h, "rack name")
				if name != "" && seen[name] {
					r.fail(item, h.path, "rack %q listed twice", name)
				}
				seen[name] = true
				c.Racks = append(c.Racks, name)
			}
		case "network":
			for _, h := range r.fields(g.value, g.path, []string{"latency", "loss", "duplicate", "reorder", "bandwidth"}) {
				switch h.name {
				case "latency":
					if v, ok := r.rangeOf(h, time.Minute); ok {
						c.Network.Latency = v
					}
				case "loss":
					if v, ok := r.float(h, 0, 1); ok {
						c.Network.LossProbability = v
					}
				case "duplicate":
					if v, ok := r.float(h, 0, 1); ok {
						c.Network.DuplicateProbability = v
					}
				case "reorder":
					if v, ok := r.float(h, 0, 1); ok {
						c.Network.ReorderProbability = v
					}
				case "bandwidth":
					if v, ok := r.byteRate(h); ok {
						c.Network.BandwidthBytesPerSecond = v
					}
				}
			}
		case "disk":
			for _, h := range r.fields(g.value, g.path, []string{"write-latency", "fsync-latency", "writeback-delay", "capacity-bytes", "torn-write-probability", "write-throughput"}) {
				switch h.name {
				case "write-latency":
					if v, ok := r.rangeOf(h, time.Minute); ok {
						c.Disk.WriteLatency = v
					}
				case "fsync-latency":
					if v, ok := r.rangeOf(h, time.Minute); ok {
						c.Disk.FsyncLatency = v
					}
				case "writeback-delay":
					if v, ok := r.duration(h, 0, PhaseMax); ok {
						c.Disk.WritebackDelay = v
					}
				case "capacity-bytes":
					if v, ok := r.int(h, 0, 1<<50); ok {
						c.Disk.CapacityBytes = v
					}
				case "torn-write-probability":
					if v, ok := r.float(h, 0, 1); ok {
						c.Disk.TornWriteProbability = v
					}
				case "write-throughput":
					if v, ok := r.byteRate(h); ok {
						c.Disk.WriteThroughputBytesPerSecond = v
					}
				}
			}
		case "broker":
			r.kafkaConfig(g, brokerKeys, &c.Broker)
		}
	}
}

// kafkaConfig reads a mapping of Kafka keys into cfg, which holds the
// defaults, and remembers where each key was written.
func (r *reader) kafkaConfig(f field, keys []kafkaKey, cfg *Config) {
	table := keyTable(keys)
	var ok bool
	for _, g := range r.fields(f.value, f.path, keyNames(keys)) {
		r.remember(g.path, g.key)
		var raw string
		if v := g.value; table[g.name].kind == kindList && v != nil && v.Kind == yaml.SequenceNode {
			raw = strings.Join(r.strings(g), ",")
		} else if raw, ok = r.scalar(g); !ok {
			continue
		}
		v, err := table[g.name].parse(raw)
		if err != nil {
			r.fail(g.value, g.path, "%v", err)
			continue
		}
		cfg.Set(g.name, v)
		cfg.Explicit[g.name] = true
	}
}

var topicName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,249}$`)

func (r *reader) topics(f field, s *Scenario) {
	seen := map[string]bool{}
	items := r.list(f)
	if len(items) > TopicsMax {
		r.fail(f.value, f.path, "%d topics is more than %d", len(items), TopicsMax)
		items = items[:TopicsMax]
	}
	brokers := s.Cluster.Brokers
	if r.failedAt("cluster.brokers") {
		brokers = BrokersMax // not known: do not echo its error for every replica
	}
	for i, item := range items {
		if item == nil {
			continue
		}
		path := index(f.path, i)
		if r.internalTopic(item, path, s) {
			continue
		}
		t := Topic{Partitions: 1, ReplicationFactor: int(configInt(s.Cluster.Broker, "default.replication.factor"))}
		t.Config = topicDefaults(s.Cluster.Broker)
		var partitionsSet, rfSet bool
		var rfNode, partNode *yaml.Node
		fields := r.fields(item, path, []string{"name", "partitions", "replication.factor", "config", "replica-assignment"})
		for _, g := range fields {
			switch g.name {
			case "name":
				name, ok := r.scalar(g)
				if !ok {
					continue
				}
				if !topicName.MatchString(name) || name == "." || name == ".." {
					r.fail(g.value, g.path, "%q is not a legal Kafka topic name (letters, digits, '.', '_', '-'; at most 249)", name)
					continue
				}
				if seen[name] {
					r.fail(g.value, g.path, "topic %q defined twice", name)
				}
				seen[name] = true
				t.Name = name
			case "partitions":
				if n, ok := r.int(g, 1, PartitionsMax); ok {
					t.Partitions, partitionsSet, partNode = int(n), true, g.value
				}
			case "replication.factor":
				if n, ok := r.int(g, 1, BrokersMax); ok {
					t.ReplicationFactor, rfSet, rfNode = int(n), true, g.value
				}
			case "config":
				r.kafkaConfig(g, topicKeys, &t.Config)
			case "replica-assignment":
				t.Assignment = r.assignment(g, brokers)
			}
		}
		if t.Name == "" && deref(item).Kind == yaml.MappingNode && !r.failedAt(path+".name") {
			r.fail(item, path+".name", "every topic needs a name")
		}
		if t.Assignment != nil {
			if partitionsSet && t.Partitions != len(t.Assignment) {
				r.fail(partNode, path+".partitions", "%d partitions, but replica-assignment lists %d", t.Partitions, len(t.Assignment))
			}
			t.Partitions = len(t.Assignment)
			rf := len(t.Assignment[0])
			if rfSet && rf != t.ReplicationFactor {
				r.fail(rfNode, path+".replication.factor", "replication factor %d, but replica-assignment gives %d replicas a partition", t.ReplicationFactor, rf)
			}
			t.ReplicationFactor = rf
		}
		// The checks below compare values; one that failed to parse would
		// only echo its own error.
		rfKnown := !r.failedAt(path+".replication.factor") && !r.failedAt(path+".replica-assignment") &&
			!r.failedAt("cluster.broker.default.replication.factor")
		if rfKnown && !r.failedAt("cluster.brokers") && t.ReplicationFactor > s.Cluster.Brokers {
			r.fail(nodeOr(rfNode, item), path+".replication.factor", "replication factor %d is more than the cluster's brokers (%d)", t.ReplicationFactor, s.Cluster.Brokers)
		}
		minISRKnown := !r.failedAt(path+".config.min.insync.replicas") && !r.failedAt("cluster.broker.min.insync.replicas")
		if minISR := int(configInt(t.Config, "min.insync.replicas")); rfKnown && minISRKnown && minISR > t.ReplicationFactor {
			key := path + ".config.min.insync.replicas"
			if !t.Config.Explicit["min.insync.replicas"] {
				key = "cluster.broker.min.insync.replicas"
			}
			at := r.where(key, item)
			r.fail(at, key, "min.insync.replicas %d is more than topic %s's replication factor %d: acks=all writes could never succeed", minISR, t.Name, t.ReplicationFactor)
		}
		r.topicPaths = append(r.topicPaths, path)
		s.Topics = append(s.Topics, t)
	}
	// When a topic's name is not known, "no topic X" elsewhere may be about
	// that one, and would only echo its error.
	r.topicNamesDoubtful = r.failedOn(f.path)
	for i := range items {
		p := index(f.path, i)
		r.topicNamesDoubtful = r.topicNamesDoubtful || r.failedOn(p) || r.failedAt(p+".name")
	}
	r.topicIndex = map[string]int{}
	for i, t := range s.Topics {
		if _, dup := r.topicIndex[t.Name]; !dup && t.Name != "" {
			r.topicIndex[t.Name] = i
		}
	}
}

// topicDefaults is a topic config inheriting every key from the broker's.
func topicDefaults(broker Config) Config {
	c := Config{Values: map[string]string{}, Explicit: map[string]bool{}}
	for _, k := range topicKeys {
		c.Set(k.name, broker.Get(topicInherits[k.name]))
	}
	return c
}

func (r *reader) assignment(f field, brokers int) [][]int32 {
	rows := r.list(f)
	if len(rows) == 0 {
		r.fail(nodeOr(f.value, f.key), f.path, "want one list of broker ids per partition")
		return nil
	}
	if len(rows) > PartitionsMax {
		r.fail(f.value, f.path, "%d partitions is more than %d", len(rows), PartitionsMax)
		return nil
	}
	var out [][]int32
	for i, row := range rows {
		if row == nil {
			return nil
		}
		rp := index(f.path, i)
		items := r.list(field{value: row, key: row, path: rp})
		if len(items) == 0 {
			r.fail(row, rp, "want a non-empty list of broker ids")
			return nil
		}
		var ids []int32
		seen := map[int64]bool{}
		for j, it := range items {
			if it == nil {
				return nil
			}
			n, ok := r.int(field{value: it, key: it, path: index(rp, j)}, 1, int64(brokers))
			if !ok {
				return nil
			}
			if seen[n] {
				r.fail(it, index(rp, j), "broker %d appears twice in one partition's replicas", n)
				return nil
			}
			seen[n] = true
			ids = append(ids, int32(n))
		}
		if len(out) > 0 && len(ids) != len(out[0]) {
			r.fail(row, rp, "every partition needs the same number of replicas: %d here, %d in partition 0", len(ids), len(out[0]))
			return nil
		}
		out = append(out, ids)
	}
	return out
}

func (r *reader) topicNamed(s *Scenario, name string) *Topic {
	if i, ok := r.topicIndex[name]; ok {
		return &s.Topics[i]
	}
	return nil
}

func (r *reader) producers(f field, s *Scenario) {
	instances := 0
	for i, item := range r.clients(f, "producer") {
		if item == nil {
			continue
		}
		path := index(f.path, i)
		p := Producer{Count: 1, Rate: defaultRatePerSecond, Stop: s.Duration, Config: defaults(producerKeys)}
		var topicNode, stopNode, countNode *yaml.Node
		stopSet := false
		for _, g := range r.fields(item, path, []string{"name", "count", "topic", "rate", "keys", "payload", "config", "start", "stop", "transactions"}) {
			switch g.name {
			case "transactions":
				p.Transactions = r.transactions(g)
			case "name":
				p.Name = r.name(g, "producer name")
				r.remember(g.path, g.key)
			case "count":
				if n, ok := r.int(g, 0, InstancesMax); ok {
					p.Count, countNode = int(n), g.value
				}
			case "topic":
				p.Topic, topicNode = r.str(g), g.value
			case "rate":
				if v, ok := r.rate(g); ok {
					p.Rate = v
				}
			case "keys":
				if n, ok := r.int(g, 0, 1_000_000); ok {
					p.Keys = int(n)
				}
			case "payload":
				if v, ok := r.scalar(g); ok {
					if len(v) > 1<<20 {
						r.fail(g.value, g.path, "a payload of %d bytes is more than 1 MiB", len(v))
					}
					p.Payload = v
				}
			case "config":
				r.kafkaConfig(g, allProducerKeys, &p.Config)
			case "start":
				if v, ok := r.duration(g, 0, PhaseMax); ok {
					p.Start = v
				}
			case "stop":
				if v, ok := r.duration(g, 0, PhaseMax); ok {
					p.Stop = v
				}
				stopSet, stopNode = true, g.value
			}
		}
		if p.Name == "" {
			p.Name = defaultClientName("p", i)
		}
		p.Count = r.instances(&instances, p.Count, nodeOr(countNode, item), path, "producer")
		switch {
		case p.Topic == "" && len(s.Topics) == 1:
			p.Topic = s.Topics[0].Name
		case internalTopics[p.Topic] != "":
			r.fail(topicNode, path+".topic", "%s", internalTopicRefusal(p.Topic))
		case r.topicNamesDoubtful:
		case p.Topic == "":
			r.fail(item, path+".topic", "which topic? the scenario has %d topics", len(s.Topics))
		case r.topicNamed(s, p.Topic) == nil:
			r.fail(topicNode, path+".topic", "no topic %q in topics", p.Topic)
		}
		if stopSet && p.Stop > s.Duration && !r.failedAt("duration") {
			r.fail(stopNode, path+".stop", "%v is after the fault phase ends (duration %v): producers stop before the settle phase", p.Stop, s.Duration)
		}
		if p.Start > p.Stop && (stopSet || !r.failedAt("duration")) {
			r.fail(item, path+".start", "start %v is after stop %v", p.Start, p.Stop)
		}
		r.transactional(item, path, &p)
		r.producerRules(item, path, &p)
		r.producerPaths = append(r.producerPaths, path)
		s.Producers = append(s.Producers, p)
	}
}

// clients returns a producers or consumers list, at most InstancesMax
// entries of it (an entry has at least one instance, or is pointless).
func (r *reader) clients(f field, kind string) []*yaml.Node {
	items := r.list(f)
	if len(items) > InstancesMax {
		r.fail(f.value, f.path, "%d %s entries is more than the %d %s instances a scenario may have", len(items), kind, InstancesMax, kind)
		items = items[:InstancesMax]
	}
	return items
}

// instances adds an entry's count to the scenario's instances of its kind,
// and returns what fits within InstancesMax: the count, unless the limit
// is passed (an error).
func (r *reader) instances(total *int, count int, at *yaml.Node, path, kind string) int {
	if *total+count > InstancesMax {
		r.fail(at, path+".count", "%d more %s instances make %d, more than the %d a scenario may have", count, kind, *total+count, InstancesMax)
		count = InstancesMax - *total
	}
	*total += count
	return count
}

func defaultClientName(prefix string, i int) string {
	if i == 0 {
		return prefix
	}
	return fmt.Sprintf("%s%d", prefix, i+1)
}

// producerRules applies Kafka's own checks of a producer configuration
// (ProducerConfig.postProcessAndValidateIdempotenceConfigs and
// KafkaProducer.configureDeliveryTimeout).
// transactions reads a producer's transactions entry: records (a count,
// or a range "1..4"), abort (a probability).
func (r *reader) transactions(f field) *Transactions {
	t := &Transactions{RecordsMin: 1, RecordsMax: 1}
	if f.value == nil || f.value.Kind != yaml.MappingNode {
		r.fail(f.value, f.path, "want a mapping such as { records: 1..4, abort: 0.25 }")
		return t
	}
	for _, g := range r.fields(f.value, f.path, []string{"records", "abort"}) {
		switch g.name {
		case "records":
			s, ok := r.scalar(g)
			if !ok {
				continue
			}
			lo, hi, found := strings.Cut(strings.TrimSpace(s), "..")
			if !found {
				hi = lo
			}
			a, err1 := strconv.Atoi(strings.TrimSpace(lo))
			b, err2 := strconv.Atoi(strings.TrimSpace(hi))
			switch {
			case err1 != nil || err2 != nil:
				r.fail(g.value, g.path, "want a count or a range such as 1..4, got %q", cutLong(s))
			case a < 1 || b < a || b > txnRecordsMax:
				r.fail(g.value, g.path, "range %q: want 1 <= low <= high <= %d", cutLong(s), txnRecordsMax)
			default:
				t.RecordsMin, t.RecordsMax = a, b
			}
		case "abort":
			if x, ok := r.float(g, 0, 1); ok {
				t.Abort = x
			}
		}
	}
	return t
}

// txnRecordsMax bounds the records of one transaction.
const txnRecordsMax = 10_000

// transactional makes a producer with a transactions entry or a
// transactional.id transactional: the other defaults to the producer's
// name (instance i takes "<id>-<i>") and to one record a transaction, and
// the producer's config holds both transaction keys. Kafka refuses a
// transactional.id without idempotence (ProducerConfig.
// postProcessAndValidateIdempotenceConfigs), so enable.idempotence is true
// and its rules hold (producerRules).
func (r *reader) transactional(item *yaml.Node, path string, p *Producer) {
	c := &p.Config
	_, hasID := c.Values["transactional.id"]
	if p.Transactions == nil && !hasID {
		if _, ok := c.Values["transaction.timeout.ms"]; ok {
			r.fail(r.where(path+".config.transaction.timeout.ms", item), path+".config.transaction.timeout.ms", "transaction.timeout.ms is for a transactional producer: give it transactions: or transactional.id")
			delete(c.Values, "transaction.timeout.ms")
			c.Keys = slices.DeleteFunc(c.Keys, func(k string) bool { return k == "transaction.timeout.ms" })
		}
		return
	}
	if p.Transactions == nil {
		p.Transactions = &Transactions{RecordsMin: 1, RecordsMax: 1}
	}
	if !hasID {
		c.Set("transactional.id", p.Name)
	}
	if _, ok := c.Values["transaction.timeout.ms"]; !ok {
		c.Set("transaction.timeout.ms", "60000")
	}
	for _, rule := range []struct {
		key  string
		bad  bool
		need string
	}{
		{"enable.idempotence", c.Explicit["enable.idempotence"] && !configBool(*c, "enable.idempotence"), "enable.idempotence=true"},
		{"acks", c.Get("acks") != "all", "acks=all"},
		{"max.in.flight.requests.per.connection", configInt(*c, "max.in.flight.requests.per.connection") > 5, "max.in.flight.requests.per.connection at most 5"},
		{"retries", configInt(*c, "retries") == 0, "retries above 0"},
	} {
		if rule.bad {
			at := path + ".config." + rule.key
			r.fail(r.where(at, item), at, "a transactional producer needs %s (Kafka rejects this producer config)", rule.need)
		}
	}
	c.Set("enable.idempotence", "true")
}

func (r *reader) producerRules(item *yaml.Node, path string, p *Producer) {
	c := &p.Config
	acks := c.Get("acks")
	if acks != "all" || configInt(*c, "max.in.flight.requests.per.connection") > 5 || configInt(*c, "retries") == 0 {
		if c.Explicit["enable.idempotence"] && configBool(*c, "enable.idempotence") {
			why := "acks=all"
			if acks == "all" {
				why = "max.in.flight.requests.per.connection at most 5 and retries above 0"
			}
			r.fail(r.where(path+".config.enable.idempotence", item), path+".config.enable.idempotence", "enable.idempotence=true needs %s (Kafka rejects this producer config)", why)
		}
		// Idempotence is on by default only where the rest allows it.
		c.Set("enable.idempotence", "false")
	}
	delivery := configInt(*c, "delivery.timeout.ms")
	if need := configInt(*c, "linger.ms") + configInt(*c, "request.timeout.ms"); delivery < need {
		if c.Explicit["delivery.timeout.ms"] {
			r.fail(r.where(path+".config.delivery.timeout.ms", item), path+".config.delivery.timeout.ms", "delivery.timeout.ms %d must be at least linger.ms + request.timeout.ms = %d (Kafka rejects this producer config)", delivery, need)
		} else {
			c.Set("delivery.timeout.ms", fmt.Sprint(need))
		}
	}
}

func (r *reader) bugs(f field, s *Scenario) {
	s.Bugs = []string{}
	for i, b := range r.strings(f) {
		switch {
		case contains(cluster.KnownBugs, b):
			if contains(s.Bugs, b) {
				r.fail(f.value, index(f.path, i), "bug %q listed twice", b)
			}
			s.Bugs = append(s.Bugs, b)
		default:
			msg := fmt.Sprintf("unknown bug %q; modelled: %s", cutLong(b), strings.Join(cluster.KnownBugs, ", "))
			if sg := suggest(b, cluster.KnownBugs); sg != "" {
				msg = fmt.Sprintf("unknown bug %q (did you mean %q?)", b, sg)
			}
			r.fail(f.value, index(f.path, i), "%s", msg)
		}
	}
}

// ExpectKeys are the keys an expect block may hold besides anomaly types.
var ExpectKeys = []string{"violations", "availability", "converged", "lost-acked", "acked", "attempted", "invariants",
	"bytes-per-record", "rebalances", "unowned-seconds", "unowned-seconds-per-rebalance", "max-unowned-seconds",
	"reprocessed-fraction", "aborted", "txn-committed", "txn-aborted", "txn-indeterminate"}

func (r *reader) expect(f field, s *Scenario) {
	known := append(append([]string(nil), ExpectKeys...), checker.AnomalyTypes...)
	for _, p := range s.Producers {
		known = append(known, "bytes-per-record("+p.Name+")")
	}
	// TYPE(NAME): an anomaly type's findings a client entry's instances
	// took part in.
	var clients []string
	for _, p := range s.Producers {
		clients = append(clients, p.Name)
	}
	for _, c := range s.Consumers {
		clients = append(clients, c.Name)
	}
	for _, t := range checker.AnomalyTypes {
		for _, name := range clients {
			known = append(known, t+"("+name+")")
		}
	}
	for _, g := range r.fields(f.value, f.path, known) {
		e := Expectation{Key: g.name, Line: g.key.Line}
		raw, ok := r.scalar(g)
		if !ok {
			continue
		}
		if g.name == "converged" {
			b, ok := r.bool(g)
			if !ok {
				continue
			}
			e.Bool = &b
		} else {
			c, err := ParseComparison(raw)
			if err != nil {
				r.fail(g.value, g.path, "%v", err)
				continue
			}
			if g.name == "availability" && (c.Value < 0 || c.Value > 1) {
				r.fail(g.value, g.path, "availability is a fraction of writes: want a comparison with a number in 0..1, got %q", raw)
				continue
			}
			e.Cmp = c
		}
		s.Expect = append(s.Expect, e)
	}
}

var comparison = regexp.MustCompile(`^\s*(==|!=|>=|<=|>|<|=)?\s*(-?[0-9]+(?:\.[0-9]+)?)\s*$`)

// ParseComparison parses "3", ">0", "<=0.5", ">= 0.99".
func ParseComparison(s string) (Comparison, error) {
	m := comparison.FindStringSubmatch(s)
	if m == nil {
		return Comparison{}, fmt.Errorf("want a number or a comparison such as \">0\", \"<=0.5\", \">=0.99\", got %q", cutLong(s))
	}
	op := m[1]
	if op == "" || op == "=" {
		op = "=="
	}
	var x float64
	fmt.Sscan(m[2], &x)
	return Comparison{Op: op, Value: x, Text: strings.TrimSpace(s)}, nil
}
