package controller

import (
	"testing"

	"kafkasim/model/metadata"
	"kafkasim/model/proto"
)

// ProducerIdControlManager: consecutive blocks that never overlap, carried
// by the committed ProducerIdsRecord (a controller that takes over starts
// where the log left the counter), and STALE_BROKER_EPOCH for a broker
// that is not registered with the epoch it names.
func TestAllocateProducerIDs(t *testing.T) {
	im := metadata.NewImage("c", nil)
	im.Brokers[1] = &metadata.Broker{ID: 1, Epoch: 10}
	im.Brokers[2] = &metadata.Broker{ID: 2, Epoch: 20}
	var off int64
	alloc := func(broker int32, epoch int64) *proto.AllocateProducerIdsResponse {
		t.Helper()
		reply, rec := AllocateProducerIDs(im, &proto.AllocateProducerIdsRequest{CorrelationID: 7, BrokerID: broker, BrokerEpoch: epoch})
		if rec != nil {
			if err := im.Apply(off, metadata.Batch{{ProducerIDs: rec}}); err != nil {
				t.Fatal(err)
			}
			off++
		}
		return reply
	}
	r := alloc(1, 10)
	if r.Error != proto.None || r.ProducerIDStart != 0 || r.ProducerIDLen != ProducerIDBlockSize {
		t.Fatalf("first block: %+v", r)
	}
	r = alloc(2, 20)
	if r.Error != proto.None || r.ProducerIDStart != ProducerIDBlockSize {
		t.Fatalf("second block: %+v", r)
	}
	if r = alloc(2, 19); r.Error != proto.StaleBrokerEpoch {
		t.Fatalf("stale broker epoch: %+v", r)
	}
	if r = alloc(3, 1); r.Error != proto.StaleBrokerEpoch {
		t.Fatalf("unregistered broker: %+v", r)
	}
	// A new active controller replays the log into its image.
	replay := metadata.NewImage("c2", nil)
	replay.Brokers[1] = &metadata.Broker{ID: 1, Epoch: 10}
	if err := replay.Apply(0, metadata.Batch{{ProducerIDs: &metadata.ProducerIDsRecord{BrokerID: 1, NextID: 0, BlockSize: ProducerIDBlockSize}}}); err != nil {
		t.Fatal(err)
	}
	if err := replay.Apply(1, metadata.Batch{{ProducerIDs: &metadata.ProducerIDsRecord{BrokerID: 2, NextID: ProducerIDBlockSize, BlockSize: ProducerIDBlockSize}}}); err != nil {
		t.Fatal(err)
	}
	if r, _ := AllocateProducerIDs(replay, &proto.AllocateProducerIdsRequest{BrokerID: 1, BrokerEpoch: 10}); r.ProducerIDStart != 2*ProducerIDBlockSize {
		t.Fatalf("after replay: %+v", r)
	}
}
