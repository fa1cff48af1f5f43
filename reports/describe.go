package reports

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// TopicState is a topic as the cluster's final metadata holds it: what
// `kafka-topics.sh --describe` prints on a topic's first line.
type TopicState struct {
	Name string `json:"name"`
	// ID is the topic's id in the model's metadata: a number the
	// controller allocates in creation order, where Kafka's TopicId is a
	// random UUID.
	ID int32 `json:"topic_id"`
	// Configs are the topic's configs as the controller holds them:
	// min.insync.replicas and unclean.leader.election.enable as they are
	// in force for the topic, then the scenario's topic-level overrides.
	Configs []KeyValue `json:"configs"`
}

// FinalState is final-state.json: the topics, each partition's state and
// the consumer groups when the run ended. Groups is left out of the file
// when the run had none (and run stores written before groups were
// recorded have none).
type FinalState struct {
	Topics     []TopicState     `json:"topics"`
	Partitions []PartitionState `json:"partitions"`
	Groups     []GroupState     `json:"groups,omitempty"`
	// Transactions: each transactional id as its coordinator held it
	// (describe transactions); absent from run stores of runs without
	// transactions and of earlier versions.
	Transactions []TransactionState `json:"transactions,omitempty"`
}

// ReadFinalState decodes final-state.json, in its current form or in the
// earlier one, a bare list of partitions (run stores written before topics
// were recorded).
func ReadFinalState(data []byte) (FinalState, error) {
	var fs FinalState
	trimmed := strings.TrimSpace(string(data))
	if strings.HasPrefix(trimmed, "[") {
		err := json.Unmarshal(data, &fs.Partitions)
		return fs, err
	}
	if err := json.Unmarshal(data, &fs); err != nil {
		return fs, err
	}
	return fs, validateGroups(fs.Groups)
}

// TopicNames are the topics of a final state, sorted.
func (fs FinalState) TopicNames() []string {
	seen := map[string]bool{}
	var names []string
	for _, p := range fs.Partitions {
		if !seen[p.Topic] {
			seen[p.Topic] = true
			names = append(names, p.Topic)
		}
	}
	sort.Strings(names)
	return names
}

// Only returns the final state of one topic ("" keeps all).
func (fs FinalState) Only(topic string) FinalState {
	if topic == "" {
		return fs
	}
	var out FinalState
	for _, t := range fs.Topics {
		if t.Name == topic {
			out.Topics = append(out.Topics, t)
		}
	}
	for _, p := range fs.Partitions {
		if p.Topic == topic {
			out.Partitions = append(out.Partitions, p)
		}
	}
	return out
}

func (fs FinalState) topic(name string) (TopicState, bool) {
	for _, t := range fs.Topics {
		if t.Name == name {
			return t, true
		}
	}
	return TopicState{}, false
}

// DescribeTopics prints the final partition states the way
// `kafka-topics.sh --describe` does: per topic a header line with its id,
// partition count, replication factor and configs, then one tab-indented
// line per partition, sorted by topic and partition. Kafka's own columns
// (Leader, Replicas, Isr, Elr, LastKnownElr) are followed by the leader
// epoch, high watermark, last stable offset, log end offset and log start
// offset, which a post-mortem needs and kafka-topics cannot show.
func DescribeTopics(w io.Writer, fs FinalState) error {
	ps := sortedStates(fs.Partitions)
	bw := bufio.NewWriter(w)
	for i := 0; i < len(ps); {
		j := i
		for j < len(ps) && ps[j].Topic == ps[i].Topic {
			j++
		}
		// Like Kafka, the replication factor is the first partition's
		// replica count.
		fmt.Fprintf(bw, "Topic: %s", ps[i].Topic)
		if t, ok := fs.topic(ps[i].Topic); ok {
			fmt.Fprintf(bw, "\tTopicId: %d", t.ID)
		}
		fmt.Fprintf(bw, "\tPartitionCount: %d\tReplicationFactor: %d", j-i, len(ps[i].Replicas))
		if t, ok := fs.topic(ps[i].Topic); ok {
			fmt.Fprintf(bw, "\tConfigs: %s", joinConfigs(t.Configs))
		}
		fmt.Fprintln(bw)
		for _, p := range ps[i:j] {
			// LSO: the last stable offset, below the high watermark
			// while a transaction is open.
			fmt.Fprintf(bw, "\tTopic: %s\tPartition: %d\tLeader: %s\tReplicas: %s\tIsr: %s\tElr: %s\tLastKnownElr: %s\tLeaderEpoch: %d\tHW: %d\tLSO: %d\tLEO: %d\tLogStartOffset: %d\n",
				p.Topic, p.Partition, leaderName(p.Leader), joinIDs(p.Replicas), joinIDs(p.ISR), joinIDs(p.ELR), joinIDs(p.LastKnownELR),
				p.LeaderEpoch, p.HW, p.LastStable(), p.LEO, p.LogStartOffset)
		}
		i = j
	}
	return bw.Flush()
}

// TopicDescription is one topic of `describe topics --json`.
type TopicDescription struct {
	Topic             string                 `json:"topic"`
	TopicID           *int32                 `json:"topic_id,omitempty"`
	PartitionCount    int                    `json:"partition_count"`
	ReplicationFactor int                    `json:"replication_factor"`
	Configs           map[string]string      `json:"configs,omitempty"`
	Partitions        []PartitionDescription `json:"partitions"`
}

// PartitionDescription is one partition of `describe topics --json`.
type PartitionDescription struct {
	Partition      int32   `json:"partition"`
	Leader         int32   `json:"leader"` // -1: none
	LeaderEpoch    int32   `json:"leader_epoch"`
	Replicas       []int32 `json:"replicas"`
	ISR            []int32 `json:"isr"`
	ELR            []int32 `json:"elr"`
	LastKnownELR   []int32 `json:"last_known_elr"`
	HighWatermark  int64   `json:"high_watermark"`
	LastStable     int64   `json:"last_stable_offset"`
	LogEndOffset   int64   `json:"log_end_offset"`
	LogStartOffset int64   `json:"log_start_offset"`
}

// DescribeTopicsJSON is what DescribeTopics prints, as data.
func DescribeTopicsJSON(fs FinalState) []TopicDescription {
	out := []TopicDescription{}
	for _, p := range sortedStates(fs.Partitions) {
		if len(out) == 0 || out[len(out)-1].Topic != p.Topic {
			d := TopicDescription{Topic: p.Topic, ReplicationFactor: len(p.Replicas), Partitions: []PartitionDescription{}}
			if t, ok := fs.topic(p.Topic); ok {
				id := t.ID
				d.TopicID = &id
				d.Configs = map[string]string{}
				for _, kv := range t.Configs {
					d.Configs[kv.Key] = kv.Value
				}
			}
			out = append(out, d)
		}
		d := &out[len(out)-1]
		d.PartitionCount++
		d.Partitions = append(d.Partitions, PartitionDescription{Partition: p.Partition, Leader: p.Leader, LeaderEpoch: p.LeaderEpoch,
			Replicas: nonNil(p.Replicas), ISR: nonNil(p.ISR), ELR: nonNil(p.ELR), LastKnownELR: nonNil(p.LastKnownELR),
			HighWatermark: p.HW, LastStable: p.LastStable(), LogEndOffset: p.LEO, LogStartOffset: p.LogStartOffset})
	}
	return out
}

func nonNil(ids []int32) []int32 {
	if ids == nil {
		return []int32{}
	}
	return ids
}

func joinConfigs(kvs []KeyValue) string {
	parts := make([]string, len(kvs))
	for i, kv := range kvs {
		parts[i] = kv.Key + "=" + kv.Value
	}
	return strings.Join(parts, ",")
}

// sortedStates returns the partitions sorted by topic then partition,
// leaving the caller's slice as it was.
func sortedStates(final []PartitionState) []PartitionState {
	ps := append([]PartitionState(nil), final...)
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].Topic != ps[j].Topic {
			return ps[i].Topic < ps[j].Topic
		}
		return ps[i].Partition < ps[j].Partition
	})
	return ps
}

// leaderName is a leader id as kafka-topics prints it: "none" when the
// partition has no leader.
func leaderName(id int32) string {
	if id < 0 {
		return "none"
	}
	return strconv.FormatInt(int64(id), 10)
}
