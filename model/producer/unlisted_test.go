package producer_test

import (
	"testing"
	"time"

	"kafkasim/history"
	"kafkasim/model/producer"
	"kafkasim/model/proto"
	"kafkasim/sim"
)

// staleBroker leads both partitions of orders, but does not host partition
// 1 at first (it answers UNKNOWN_TOPIC_OR_PARTITION, as a broker that has
// not applied the record adding it does), and its second metadata answer
// comes from a cache that predates partition 1: it lists partition 0 only.
type staleBroker struct {
	env       sim.Env
	metadatas int
	produces  map[int32]int
	acked     map[int32]int
}

func (b *staleBroker) Start(env sim.Env) {
	b.env, b.produces, b.acked = env, map[int32]int{}, map[int32]int{}
}
func (b *staleBroker) Fire(sim.Timer) {}
func (b *staleBroker) Deliver(from sim.NodeID, m sim.Message) {
	switch m := m.(type) {
	case *proto.MetadataRequest:
		b.metadatas++
		r := &proto.MetadataResponse{CorrelationID: m.CorrelationID, Topics: []proto.MetadataTopic{{Name: "orders"}},
			Brokers: []proto.MetadataBroker{{ID: 1, Node: b.env.ID()}}}
		parts := 2
		if b.metadatas == 2 {
			parts = 1
		}
		for i := range parts {
			r.Topics[0].Partitions = append(r.Topics[0].Partitions,
				proto.MetadataPartition{Partition: int32(i), Leader: 1, Replicas: []int32{1}, ISR: []int32{1}})
		}
		b.env.Send(from, r)
	case *proto.InitProducerIDRequest:
		b.env.Send(from, &proto.InitProducerIDResponse{CorrelationID: m.CorrelationID, ProducerID: 7})
	case *proto.ProduceRequest:
		resp := &proto.ProduceResponse{CorrelationID: m.CorrelationID}
		for _, pp := range m.Partitions {
			b.produces[pp.Partition]++
			r := proto.ProducePartitionResponse{TopicPartition: pp.TopicPartition, BaseOffset: int64(b.acked[pp.Partition])}
			if pp.Partition == 1 && b.produces[1] == 1 {
				r.Error, r.BaseOffset = proto.UnknownTopicOrPartition, -1
			} else {
				b.acked[pp.Partition]++
			}
			resp.Partitions = append(resp.Partitions, r)
		}
		b.env.Send(from, resp)
	}
}

// A batch whose partition the latest metadata does not list (a broker's
// stale cache, from before partitions were added) has no known leader:
// Kafka's RecordAccumulator.partitionReady adds its topic to
// unknownLeaderTopics, and the Sender asks for fresh metadata, again after
// each answer that still lacks it. Without that the batch waits for
// metadata.max.age.ms (fuzz seed 204685: 52 records never written).
func TestBatchOfAPartitionTheMetadataDropsAsksForMetadataAgain(t *testing.T) {
	w := sim.NewWorld(sim.DefaultOptions(1))
	broker := &staleBroker{}
	bid := w.AddNode(sim.NodeSpec{Name: "broker-1", Role: "broker", New: func() sim.Node { return broker }})
	cfg := producer.DefaultConfig("p-0", "orders")
	cfg.Brokers, cfg.Recorder = []sim.NodeID{bid}, history.NewRecorder(w.Now)
	cfg.EnableIdempotence = false
	pid := w.AddNode(sim.NodeSpec{Name: "p-0", Role: "producer", New: producer.New(cfg)})
	w.Start()
	w.RunUntil(100 * time.Millisecond)
	p := w.Node(pid).(*producer.Producer)
	p.Probe() // a record for each partition
	w.RunUntil(10 * time.Second)
	if broker.metadatas < 3 {
		t.Errorf("the producer asked for metadata %d times, want at least 3 (again after the answer that lacked partition 1)", broker.metadatas)
	}
	if broker.acked[1] != 1 {
		t.Errorf("partition 1's record was written %d times (attempts %d), want once after its leader is known again", broker.acked[1], broker.produces[1])
	}
	if acked, _, _, pending := p.ProbeOutcome(); acked != 2 || pending != 0 {
		t.Errorf("probes: %d acknowledged, %d pending; want 2 and 0", acked, pending)
	}
}
