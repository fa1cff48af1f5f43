package controller

import (
	"fmt"
	"strconv"

	"kafkasim/model/metadata"
	"kafkasim/model/proto"
	"kafkasim/sim"
)

// IncrementalAlterConfigs on the active controller (Kafka's
// ConfigurationControlManager.incrementalAlterConfigs): validate a
// resource's configs together, write a ConfigRecord for each, and, while
// ELR is on, a ClearElrRecord after a min.insync.replicas change
// (createClearElrRecordsAsNeeded).

// AlterableTopicConfigs are the topic configs the model lets an operator
// alter, each read again at run time: the leaders' acks=all check and the
// controller's ELR (min.insync.replicas), the controller's elections
// (unclean.leader.election.enable), the logs' retention and segment rolls.
var AlterableTopicConfigs = []string{metadata.MinInsyncReplicasConfig, metadata.UncleanLeaderElectionConfig,
	"retention.ms", "retention.bytes", "segment.bytes"}

// AlterableBrokerConfigs are the broker configs it lets an operator alter,
// per broker or cluster-wide.
var AlterableBrokerConfigs = []string{metadata.MinInsyncReplicasConfig, metadata.UncleanLeaderElectionConfig}

// AlterConfigs decides an IncrementalAlterConfigs request on image im: the
// records to write, or the error that refuses the whole resource.
func AlterConfigs(im *metadata.Image, m *proto.IncrementalAlterConfigsRequest, elr bool) (metadata.Batch, proto.ErrorCode, string) {
	var current map[string]string
	alterable := AlterableBrokerConfigs
	switch m.ResourceType {
	case proto.ResourceTopic:
		t, ok := im.Topics[m.ResourceName]
		if !ok {
			return nil, proto.UnknownTopicOrPartition, "Topic " + m.ResourceName + " does not exist."
		}
		current = topicConfigs(t)
		alterable = AlterableTopicConfigs
	case proto.ResourceBroker:
		if m.ResourceName == "" {
			current = im.ClusterConfigs
			break
		}
		id, err := strconv.ParseInt(m.ResourceName, 10, 32)
		if err != nil {
			return nil, proto.InvalidRequest, "Illegal broker id " + m.ResourceName
		}
		if _, ok := im.Brokers[int32(id)]; !ok {
			return nil, proto.BrokerIDNotRegistered, fmt.Sprintf("No node with id %d found.", id)
		}
		current = im.BrokerConfigs[int32(id)]
	default:
		return nil, proto.InvalidRequest, fmt.Sprintf("Unexpected resource type %d", m.ResourceType)
	}
	var batch metadata.Batch
	clearElr := false
	for _, c := range m.Configs {
		if err := validConfig(alterable, c); err != "" {
			return nil, proto.InvalidConfig, err
		}
		if c.Name == metadata.MinInsyncReplicasConfig && m.ResourceType == proto.ResourceBroker && m.ResourceName != "" && elr {
			// isDisallowedBrokerMinIsrTransition: with ELR the controller
			// decides eligibility with one min ISR per topic, which a
			// broker's own value would contradict.
			return nil, proto.InvalidConfig, "Broker-level min.insync.replicas cannot be altered while ELR is enabled."
		}
		// A broker's configs are written even unchanged (KAFKA-14136: the
		// record makes brokers reload them); a topic's only when changed.
		if v, ok := current[c.Name]; ok && v == c.Value && m.ResourceType == proto.ResourceTopic {
			continue
		}
		batch = append(batch, metadata.Record{Config: &metadata.ConfigRecord{
			ResourceType: m.ResourceType, ResourceName: m.ResourceName, Name: c.Name, Value: c.Value}})
		clearElr = clearElr || c.Name == metadata.MinInsyncReplicasConfig
	}
	if clearElr && elr {
		topic := ""
		if m.ResourceType == proto.ResourceTopic {
			topic = m.ResourceName
		}
		batch = append(batch, metadata.Record{ClearElr: &metadata.ClearElrRecord{Topic: topic}})
	}
	return batch, proto.None, ""
}

// topicConfigs are a topic's own configs, as ConfigurationControlManager
// holds them: those it sets itself.
func topicConfigs(t *metadata.Topic) map[string]string {
	out := map[string]string{}
	for k, v := range t.Configs { // kafkasim:orderless: fills a map
		out[k] = v
	}
	if !t.MinISRInherited {
		out[metadata.MinInsyncReplicasConfig] = strconv.Itoa(t.MinInsyncReplicas)
	}
	if !t.UncleanInherited {
		out[metadata.UncleanLeaderElectionConfig] = strconv.FormatBool(t.UncleanLeaderElection)
	}
	return out
}

// validConfig checks one config's name and value as Kafka's config
// validator does (ConfigDef's types and ranges), returning the error.
func validConfig(alterable []string, c proto.AlterableConfig) string {
	known := false
	for _, name := range alterable {
		known = known || name == c.Name
	}
	if !known {
		return "Unknown or unalterable config name " + c.Name
	}
	bad := func() string {
		return fmt.Sprintf("Invalid value %s for configuration %s", c.Value, c.Name)
	}
	switch c.Name {
	case metadata.UncleanLeaderElectionConfig:
		if c.Value != "true" && c.Value != "false" {
			return bad() + ": Expected value to be either true or false"
		}
	case metadata.MinInsyncReplicasConfig:
		if n, err := strconv.ParseInt(c.Value, 10, 32); err != nil || n < 1 {
			return bad() + ": Value must be at least 1"
		}
	case "retention.ms", "retention.bytes":
		if n, err := strconv.ParseInt(c.Value, 10, 64); err != nil || n < -1 {
			return bad() + ": Value must be at least -1"
		}
	case "segment.bytes":
		if n, err := strconv.ParseInt(c.Value, 10, 32); err != nil || n < 14 {
			return bad() + ": Value must be at least 14"
		}
	}
	return ""
}

// handleIncrementalAlterConfigs answers IncrementalAlterConfigs once its
// records are committed.
func (n *Node) handleIncrementalAlterConfigs(from sim.NodeID, m *proto.IncrementalAlterConfigsRequest) {
	reply := &proto.IncrementalAlterConfigsResponse{CorrelationID: m.CorrelationID}
	batch, code, msg := AlterConfigs(n.draft, m, n.cfg.ELREnabled)
	if code != proto.None {
		reply.Error, reply.Message = code, msg
		n.gate.Send(from, reply)
		return
	}
	if len(batch) > 0 {
		n.env.Note("controller", fmt.Sprintf("IncrementalAlterConfigs %s: %d record(s)", resourceString(m.ResourceType, m.ResourceName), len(batch)))
	}
	n.decide(batch, from, reply, nil)
}

// resourceString names a config resource as kafka-configs.sh does.
func resourceString(typ int8, name string) string {
	switch {
	case typ == proto.ResourceTopic:
		return "topic " + name
	case name == "":
		return "default broker"
	}
	return "broker " + name
}
