package scenarios

import (
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"kafkasim/model/cluster"
	"kafkasim/model/controller"
	"kafkasim/model/proto"
	"kafkasim/sim"
)

// alterConfig reads an alter-config fault: { topic: T, config: {...} }, or
// { broker: N | all, config: {...} } (kafka-configs.sh --alter with
// --entity-type topics or brokers; broker: all is --entity-default). Only
// the configs the model reads again at run time may be altered; another
// name is an error here, not a request the run would ignore.
func (r *reader) alterConfig(f field, base sim.Fault, s *Scenario) []sim.Fault {
	op := cluster.AlterConfig{}
	var resource *field
	var configs *field
	before := r.failures
	for _, g := range r.fields(f.value, f.path, []string{"topic", "broker", "config"}) {
		switch g.name {
		case "topic", "broker":
			if resource != nil {
				r.fail(g.key, g.path, "give topic or broker, not both")
				continue
			}
			resource = &g
			r.alterConfigResource(g, &op, s)
		case "config":
			configs = &g
		}
	}
	if r.failures > before {
		return nil
	}
	if resource == nil {
		r.fail(nodeOr(f.value, f.key), f.path+".topic", "missing: the topic (topic: NAME) or broker (broker: ID or all) whose configs change")
		return nil
	}
	if configs == nil {
		r.fail(nodeOr(f.value, f.key), f.path+".config", "missing: the configs to set, e.g. config: { min.insync.replicas: 1 }")
		return nil
	}
	alterable, keys := controller.AlterableTopicConfigs, topicKeys
	what := "a topic"
	if op.ResourceType == proto.ResourceBroker {
		alterable, keys, what = controller.AlterableBrokerConfigs, brokerKeys, "a broker"
	}
	table := keyTable(keys)
	for _, g := range r.fields(configs.value, configs.path, nil) {
		if !contains(alterable, g.name) || table[g.name] == nil {
			r.fail(g.key, g.path, "kafkasim cannot alter %s of %s at run time (it can: %s)", g.name, what, strings.Join(alterable, ", "))
			continue
		}
		raw, ok := r.scalar(g)
		if !ok {
			continue
		}
		v, err := table[g.name].parse(raw)
		if err != nil {
			r.fail(g.value, g.path, "%v", err)
			continue
		}
		op.Configs = append(op.Configs, proto.AlterableConfig{Name: g.name, Value: v})
	}
	if r.failures > before {
		return nil
	}
	if len(op.Configs) == 0 {
		r.fail(nodeOr(configs.value, configs.key), configs.path, "no config to set: give at least one, e.g. { min.insync.replicas: 1 }")
		return nil
	}
	base.Custom = op
	return []sim.Fault{base}
}

// alterConfigResource reads the topic or broker an alter-config names.
func (r *reader) alterConfigResource(g field, op *cluster.AlterConfig, s *Scenario) {
	if g.name == "topic" {
		op.ResourceType, op.Name = proto.ResourceTopic, r.str(g)
		if op.Name != "" && r.topicNamed(s, op.Name) == nil && !r.topicNamesDoubtful {
			r.fail(g.value, g.path, "no topic %q in topics", op.Name)
		}
		return
	}
	op.ResourceType = proto.ResourceBroker
	raw, ok := r.scalar(g)
	if !ok {
		return
	}
	if raw == "all" {
		return // Name "": the cluster-wide default
	}
	id, err := strconv.Atoi(raw)
	switch {
	case err != nil:
		r.fail(g.value, g.path, "want a broker id or all (every broker: the cluster-wide default), got %q", cutLong(raw))
	case id < 1 || !r.failedAt("cluster.brokers") && id > s.Cluster.Brokers:
		r.fail(g.value, g.path, "no broker %d: the cluster has brokers 1 to %d", id, s.Cluster.Brokers)
	default:
		op.Name = strconv.Itoa(id)
	}
}

// alterConfigNode writes an alter-config fault back out.
func alterConfigNode(op cluster.AlterConfig) *yaml.Node {
	d := mapping()
	d.Style = yaml.FlowStyle
	switch {
	case op.ResourceType == proto.ResourceTopic:
		put(d, "topic", str(op.Name))
	case op.Name == "":
		put(d, "broker", str("all"))
	default:
		put(d, "broker", plain(op.Name))
	}
	cfg := mapping()
	cfg.Style = yaml.FlowStyle
	for _, c := range op.Configs {
		put(cfg, c.Name, str(c.Value))
	}
	put(d, "config", cfg)
	return d
}
