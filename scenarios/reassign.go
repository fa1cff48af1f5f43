package scenarios

import (
	"strconv"

	"go.yaml.in/yaml/v3"

	"kafkasim/model/cluster"
	"kafkasim/sim"
)

// reassign reads a reassign fault: { topic, partition, replicas }, one
// partition's entry of kafka-reassign-partitions.sh's reassignment JSON
// (a scenario with one topic may leave the topic out). replicas is the
// target assignment, its first broker the preferred leader; each must be a
// broker of the cluster, none twice (Kafka answers
// INVALID_REPLICA_ASSIGNMENT otherwise). Fewer or more replicas than the
// partition has change its replication factor.
func (r *reader) reassign(f field, base sim.Fault, s *Scenario) []sim.Fault {
	op := cluster.Reassign{Partition: -1}
	var partitionField, replicasField *field
	before := r.failures
	for _, g := range r.fields(f.value, f.path, []string{"topic", "partition", "replicas"}) {
		switch g.name {
		case "topic":
			op.Topic = r.str(g)
			if op.Topic != "" && r.topicNamed(s, op.Topic) == nil && !r.topicNamesDoubtful {
				r.fail(g.value, g.path, "no topic %q in topics", op.Topic)
			}
		case "partition":
			if n, ok := r.int(g, 0, PartitionsMax-1); ok {
				op.Partition = int32(n)
			}
			partitionField = &g
		case "replicas":
			op.Replicas = r.reassignReplicas(g, s)
			replicasField = &g
		}
	}
	if r.failures > before {
		return nil
	}
	switch {
	case op.Topic == "" && len(s.Topics) == 1:
		op.Topic = s.Topics[0].Name
	case op.Topic == "":
		r.fail(nodeOr(f.value, f.key), f.path+".topic", "missing: which topic the partition is of")
		return nil
	}
	if partitionField == nil {
		r.fail(nodeOr(f.value, f.key), f.path+".partition", "missing: which partition of %s moves", op.Topic)
		return nil
	}
	if replicasField == nil {
		r.fail(nodeOr(f.value, f.key), f.path+".replicas", "missing: the broker ids the partition moves to, the first its preferred leader")
		return nil
	}
	base.Custom = op
	r.namedPartitions = append(r.namedPartitions, namedPartition{topic: op.Topic, partition: op.Partition, node: partitionField.value, path: partitionField.path})
	return []sim.Fault{base}
}

func (r *reader) reassignReplicas(g field, s *Scenario) []int32 {
	items := r.list(g)
	if len(items) == 0 {
		if !r.failedAt(g.path) {
			r.fail(nodeOr(g.value, g.key), g.path, "want a non-empty list of broker ids: an empty replica list is not an assignment (INVALID_REPLICA_ASSIGNMENT)")
		}
		return nil
	}
	brokers := int64(s.Cluster.Brokers)
	if r.failedAt("cluster.brokers") {
		brokers = BrokersMax
	}
	var ids []int32
	for j, it := range items {
		if it == nil {
			return nil
		}
		path := index(g.path, j)
		n, ok := r.int(field{value: it, key: it, path: path}, 1, BrokersMax)
		if !ok {
			return nil
		}
		if n > brokers {
			r.fail(it, path, "no broker %d: the cluster has brokers 1..%d (Kafka answers INVALID_REPLICA_ASSIGNMENT for an unregistered broker)", n, brokers)
			return nil
		}
		for _, id := range ids {
			if int64(id) == n {
				r.fail(it, path, "broker %d appears twice in the replicas", n)
				return nil
			}
		}
		ids = append(ids, int32(n))
	}
	return ids
}

// reassignNode writes a reassign fault back for the resolved scenario:
// {topic: orders, partition: 0, replicas: [4, 5, 6]}.
func reassignNode(op cluster.Reassign) *yaml.Node {
	d := mapping()
	d.Style = yaml.FlowStyle
	put(d, "topic", str(op.Topic))
	put(d, "partition", plain(strconv.Itoa(int(op.Partition))))
	ids := seq()
	ids.Style = yaml.FlowStyle
	for _, id := range op.Replicas {
		ids.Content = append(ids.Content, plain(strconv.Itoa(int(id))))
	}
	put(d, "replicas", ids)
	return d
}
