package broker

import (
	"reflect"
	"testing"

	"kafkasim/model/metadata"
	"kafkasim/model/proto"
	"kafkasim/sim"
)

// metadataEnv keeps the answers a broker sends.
type metadataEnv struct {
	sim.Env
	sent []*proto.MetadataResponse
}

func (e *metadataEnv) Connection(sim.NodeID) uint64 { return 0 }
func (e *metadataEnv) Send(_ sim.NodeID, m sim.Message) {
	e.sent = append(e.sent, m.(*proto.MetadataResponse))
}

// A clients' metadata answer lists the image's partitions as they are
// when it is made: the same partitions again while the image does not
// move or moves without changing them, the new leader and ISR once it
// changes them, and those of a broker's new image after a restart.
func TestMetadataAnswersFollowTheImage(t *testing.T) {
	env := &metadataEnv{}
	im := metadata.NewImage("b1", nil)
	apply := func(im *metadata.Image, rs ...metadata.Record) {
		t.Helper()
		if err := im.Apply(im.Offset, rs); err != nil {
			t.Fatal(err)
		}
	}
	create := []metadata.Record{
		{RegisterBroker: &metadata.RegisterBroker{BrokerID: 1, BrokerEpoch: 0}},
		{RegisterBroker: &metadata.RegisterBroker{BrokerID: 2, BrokerEpoch: 0}},
		{Topic: &metadata.TopicRecord{Name: "orders", ID: 1, MinInsyncReplicas: 1}},
		{Partition: &metadata.PartitionRecord{Topic: "orders", Partition: 0, Replicas: []int32{1, 2}, ISR: []int32{1, 2}, Leader: 1}},
		{Partition: &metadata.PartitionRecord{Topic: "orders", Partition: 1, Replicas: []int32{2, 1}, ISR: []int32{2, 1}, Leader: 2}},
	}
	apply(im, create...)
	n := &Node{env: env, image: im, cfg: Config{Nodes: map[int32]sim.NodeID{1: 0, 2: 1}}}
	rm := &replicaManager{n: n}
	ask := func() []proto.MetadataPartition {
		t.Helper()
		rm.handleMetadata(7, 0, &proto.MetadataRequest{Topics: []string{"orders"}})
		m := env.sent[len(env.sent)-1]
		if len(m.Topics) != 1 || m.Topics[0].Error != proto.None {
			t.Fatalf("answer %+v", m)
		}
		return m.Topics[0].Partitions
	}
	want := func(leader0 int32, isr0 []int32) []proto.MetadataPartition {
		return []proto.MetadataPartition{
			{Partition: 0, Leader: leader0, Replicas: []int32{1, 2}, ISR: isr0},
			{Partition: 1, Leader: 2, Replicas: []int32{2, 1}, ISR: []int32{2, 1}},
		}
	}
	first := ask()
	if !reflect.DeepEqual(first, want(1, []int32{1, 2})) {
		t.Fatalf("first answer %+v", first)
	}
	if again := ask(); !reflect.DeepEqual(again, first) {
		t.Fatalf("unchanged image, another answer %+v than %+v", again, first)
	}
	isr := []int32{2}
	apply(im, metadata.Record{PartitionChange: &metadata.PartitionChange{Topic: "orders", Partition: 0, Leader: 2, ISR: &isr}})
	moved := ask()
	if moved[0].Leader != 2 || !reflect.DeepEqual(moved[0].ISR, []int32{2}) || moved[0].LeaderEpoch <= first[0].LeaderEpoch {
		t.Fatalf("after the change, partition 0 answered as %+v", moved[0])
	}
	if !reflect.DeepEqual(first, want(1, []int32{1, 2})) {
		t.Fatalf("the first answer changed with the image: %+v", first)
	}
	// The image moves without a change to the topic's partitions: the
	// same answer, shared rather than made again.
	apply(im, metadata.Record{NoOp: &metadata.NoOpRecord{}})
	if got := ask(); !reflect.DeepEqual(got, moved) || &got[0] != &moved[0] {
		t.Fatalf("after a NoOp, answered %+v (shared: %v), want the answer before it %+v", got, &got[0] == &moved[0], moved)
	}
	// A restart's new image, replayed to the same offset without the
	// change: its own partitions.
	fresh := metadata.NewImage("b1", nil)
	apply(fresh, create...)
	apply(fresh, metadata.Record{NoOp: &metadata.NoOpRecord{}})
	n.image = fresh
	if got := ask(); !reflect.DeepEqual(got, want(1, []int32{1, 2})) {
		t.Fatalf("after a restart, answered %+v", got)
	}
}
