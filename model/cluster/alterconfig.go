package cluster

import (
	"fmt"
	"strings"

	"kafkasim/godview"
	"kafkasim/model/proto"
	"kafkasim/sim"
)

// AlterConfig is the admin operation of the custom fault alter-config: an
// IncrementalAlterConfigs request (kafka-configs.sh --alter) setting Configs
// of a topic (ResourceType proto.ResourceTopic, Name the topic), of a broker
// (proto.ResourceBroker, Name its id) or of every broker (ResourceBroker,
// Name "": the cluster-wide default, --entity-default).
type AlterConfig struct {
	ResourceType int8
	Name         string
	Configs      []proto.AlterableConfig
}

// Resource says what the operation alters, as the scenario writes it:
// "topic orders", "broker 2", "broker all".
func (a AlterConfig) Resource() string {
	switch {
	case a.ResourceType == proto.ResourceTopic:
		return "topic " + a.Name
	case a.Name == "":
		return "broker all"
	}
	return "broker " + a.Name
}

func (a AlterConfig) String() string {
	sets := make([]string, len(a.Configs))
	for i, c := range a.Configs {
		sets[i] = c.Name + "=" + c.Value
	}
	return fmt.Sprintf("alter-config %s %s", a.Resource(), strings.Join(sets, ","))
}

func (c *Cluster) alterConfig(op AlterConfig) (string, error) {
	a := c.AdminNode()
	if a == nil {
		return "", fmt.Errorf("the admin client is down")
	}
	a.AlterConfigs(op.ResourceType, op.Name, op.Configs)
	return "requested", nil
}

// ScheduledConfigFacts are the facts an alter-config fault may leave, for a
// history checked without the god view (times unknown): each topic or
// cluster-wide config it sets. A broker's own config is left out, as the
// god view leaves it out.
func ScheduledConfigFacts(f sim.Fault) []godview.Fact {
	op, ok := f.Custom.(AlterConfig)
	if !ok || op.ResourceType == proto.ResourceBroker && op.Name != "" {
		return nil
	}
	topic := ""
	if op.ResourceType == proto.ResourceTopic {
		topic = op.Name
	}
	var facts []godview.Fact
	for _, cfg := range op.Configs {
		facts = append(facts, godview.Fact{Kind: godview.ConfigAltered, Topic: topic, Config: cfg.Name, Value: cfg.Value, Producer: godview.NoProducer})
	}
	return facts
}
