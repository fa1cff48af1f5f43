// Package metadata is the cluster metadata that KRaft replicates: the records
// of the metadata log, the image they build (brokers, topics, partitions),
// and the controller's rules for changing partitions: elections from the ISR,
// then the ELR, then (only when allowed) any replica; ISR and ELR updates;
// replica placement.
package metadata

import (
	"encoding/json"
	"fmt"
	"strconv"

	"kafkasim/model/raft"
)

// Sentinels of PartitionRecord.Leader, as in Kafka's LeaderConstants.
const (
	NoLeader       int32 = -1
	NoLeaderChange int32 = -2
)

// Record is one metadata record. Exactly one field is set. Records are encoded
// as JSON in log entries: deterministic (fields in declaration order) and
// readable in traces.
type Record struct {
	RegisterBroker   *RegisterBroker    `json:"RegisterBroker,omitempty"`
	BrokerChange     *BrokerChange      `json:"BrokerRegistrationChange,omitempty"`
	UnregisterBroker *UnregisterBroker  `json:"UnregisterBroker,omitempty"`
	Topic            *TopicRecord       `json:"Topic,omitempty"`
	Partition        *PartitionRecord   `json:"Partition,omitempty"`
	PartitionChange  *PartitionChange   `json:"PartitionChange,omitempty"`
	ProducerIDs      *ProducerIDsRecord `json:"ProducerIds,omitempty"`
	NoOp             *NoOpRecord        `json:"NoOp,omitempty"`
	Config           *ConfigRecord      `json:"Config,omitempty"`
	ClearElr         *ClearElrRecord    `json:"ClearElr,omitempty"`
}

// RegisterBroker registers a broker; BrokerEpoch is the offset of its batch.
type RegisterBroker struct {
	BrokerID      int32  `json:"brokerId"`
	BrokerEpoch   int64  `json:"brokerEpoch"`
	IncarnationID uint64 `json:"incarnationId"`
	Rack          string `json:"rack,omitempty"`
	Fenced        bool   `json:"fenced"`
}

// Fencing changes of a BrokerChange.
const (
	FenceUnchanged int8 = 0
	FenceFence     int8 = 1
	FenceUnfence   int8 = -1
)

// BrokerChange fences or unfences a broker, or marks its controlled shutdown.
type BrokerChange struct {
	BrokerID             int32 `json:"brokerId"`
	BrokerEpoch          int64 `json:"brokerEpoch"`
	Fenced               int8  `json:"fenced"`
	InControlledShutdown bool  `json:"inControlledShutdown,omitempty"`
}

// UnregisterBroker removes a broker.
type UnregisterBroker struct {
	BrokerID    int32 `json:"brokerId"`
	BrokerEpoch int64 `json:"brokerEpoch"`
}

// TopicRecord creates a topic with its topic-level configuration.
type TopicRecord struct {
	Name string `json:"name"`
	ID   int32  `json:"topicId"`
	// MinInsyncReplicas is min.insync.replicas.
	MinInsyncReplicas int `json:"minInsyncReplicas"`
	// UncleanLeaderElection is unclean.leader.election.enable.
	UncleanLeaderElection bool `json:"uncleanLeaderElectionEnable"`
	// Configs are the topic's other configs (cleanup.policy, segment.bytes,
	// retention.ms, retention.bytes, flush.messages), as Kafka spells them.
	Configs map[string]string `json:"configs,omitempty"`
	// Inherited names the configs of the two above (min.insync.replicas,
	// unclean.leader.election.enable) the topic does not set itself: they
	// hold the broker default in force at creation, and follow a later
	// cluster-wide change (Kafka writes ConfigRecords only for a topic's
	// own configs and resolves the rest at use).
	Inherited []string `json:"inherited,omitempty"`
}

// ConfigRecord sets a config of a resource (Kafka's ConfigRecord): a topic
// (ResourceType proto.ResourceTopic), a broker (proto.ResourceBroker,
// ResourceName its id) or the cluster-wide broker default (ResourceBroker,
// ResourceName "").
type ConfigRecord struct {
	ResourceType int8   `json:"resourceType"`
	ResourceName string `json:"resourceName"`
	Name         string `json:"name"`
	Value        string `json:"value"`
}

// ClearElrRecord forgets the ELR and last known ELR of every partition of
// Topic, or of every topic when Topic is "" (Kafka's ClearElrRecord, written
// after a min.insync.replicas change while ELR is on: who was eligible
// under the old rule may not be under the new one).
type ClearElrRecord struct {
	Topic string `json:"topicName,omitempty"`
}

// PartitionRecord creates a partition.
type PartitionRecord struct {
	Topic          string  `json:"topic"`
	Partition      int32   `json:"partitionId"`
	Replicas       []int32 `json:"replicas"`
	ISR            []int32 `json:"isr"`
	ELR            []int32 `json:"eligibleLeaderReplicas,omitempty"`
	LastKnownELR   []int32 `json:"lastKnownElr,omitempty"`
	Leader         int32   `json:"leader"`
	LeaderEpoch    int32   `json:"leaderEpoch"`
	PartitionEpoch int32   `json:"partitionEpoch"`
	// made is the partition the record creates, made by the first image
	// that applied it and shared by the others (Image.own).
	made *Partition
}

// PartitionChange changes a partition. Nil fields are unchanged; Leader is
// NoLeaderChange when the leader stays (a leader change bumps the leader
// epoch; every change bumps the partition epoch).
type PartitionChange struct {
	Topic        string   `json:"topic"`
	Partition    int32    `json:"partitionId"`
	Leader       int32    `json:"leader"`
	ISR          *[]int32 `json:"isr,omitempty"`
	ELR          *[]int32 `json:"eligibleLeaderReplicas,omitempty"`
	LastKnownELR *[]int32 `json:"lastKnownElr,omitempty"`
	// Recovering marks a leader elected uncleanly (leaderRecoveryState).
	Recovering *bool `json:"leaderRecoveryState,omitempty"`
	// Replicas, RemovingReplicas and AddingReplicas change the assignment
	// during a reassignment (PartitionChangeRecord's replicas,
	// removingReplicas, addingReplicas).
	Replicas         *[]int32 `json:"replicas,omitempty"`
	RemovingReplicas *[]int32 `json:"removingReplicas,omitempty"`
	AddingReplicas   *[]int32 `json:"addingReplicas,omitempty"`
}

// ProducerIDsRecord allocates a block of producer ids (for InitProducerId).
type ProducerIDsRecord struct {
	BrokerID  int32 `json:"brokerId"`
	NextID    int64 `json:"nextProducerId"`
	BlockSize int64 `json:"blockSize"`
}

// NoOpRecord advances the log so that brokers see it move (Kafka writes one
// every metadata.max.idle.interval.ms).
type NoOpRecord struct{}

// Batch is what one metadata log entry holds: records applied atomically.
type Batch []Record

// Encode serialises a batch for the log.
func (b Batch) Encode() []byte {
	data, err := json.Marshal(b)
	if err != nil {
		panic(fmt.Sprintf("metadata: encoding batch: %v", err))
	}
	return data
}

// DecodeBatch parses a log entry's data.
func DecodeBatch(data []byte) (Batch, error) {
	var b Batch
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("metadata: decoding batch: %w", err)
	}
	return b, nil
}

// DecodeEntry is DecodeBatch of a metadata log entry's data, decoded once
// for every replica holding a copy of the entry (raft.Entry.Memo): the
// batch returned is shared, and must not be modified. Every reader of a
// batch only reads it (Image.Apply clones what it keeps, or copies a
// topic's configs before writing them).
func DecodeEntry(e raft.Entry) (Batch, error) {
	if e.Memo != nil {
		if b, ok := e.Memo.Value.(Batch); ok {
			return b, nil
		}
	}
	b, err := DecodeBatch(e.Data)
	if err == nil && e.Memo != nil {
		e.Memo.Value = b
	}
	return b, err
}

// TopicPartition names a partition ("orders-0").
type TopicPartition struct {
	Topic     string
	Partition int32
}

// String is Kafka's "topic-partition" form.
func (tp TopicPartition) String() string {
	// As fmt's "%s-%d", without its work: every replica a broker opens
	// names its directory and checkpoint entries by it (9,000 on 3,000
	// partitions of RF 3, again at each restart).
	var buf [64]byte
	return string(strconv.AppendInt(append(append(buf[:0], tp.Topic...), '-'), int64(tp.Partition), 10))
}

// Less orders partitions by topic, then number.
func (tp TopicPartition) Less(o TopicPartition) bool {
	return tp.Topic < o.Topic || (tp.Topic == o.Topic && tp.Partition < o.Partition)
}
