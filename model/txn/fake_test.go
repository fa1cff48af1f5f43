package txn

import (
	"testing"
	"time"

	"kafkasim/model/broker/brokertest"
	"kafkasim/model/metadata"
	"kafkasim/model/proto"
	"kafkasim/sim"
)

// fakeTopics is a broker as the coordinator sees it, driven by the test
// (brokertest.Topics: one log per partition of __transaction_state, timers,
// the messages sent), with the leaders of the data partitions.
type fakeTopics struct {
	*brokertest.Topics[*coordinator]
	// leaders are the data partitions' (PartitionLeader), not those of
	// __transaction_state (Leaders).
	leaders map[proto.TopicPartition]sim.NodeID // absent: no such partition; NoNode: no leader
}

const (
	controllerNode sim.NodeID = 100
	client         sim.NodeID = 50
	brokerA        sim.NodeID = 11
	brokerB        sim.NodeID = 12
)

func newFake(t *testing.T) *fakeTopics {
	f := &fakeTopics{Topics: brokertest.New[*coordinator](t, Topic), leaders: map[proto.TopicPartition]sim.NodeID{}}
	f.Leaders[0] = 10
	cfg := DefaultConfig()
	cfg.NumPartitions = 1
	f.C = newCoordinator(cfg, f)
	f.CheckAppend = func(acks int16, timeout time.Duration) {
		if acks != proto.AcksAll || timeout <= 0 {
			t.Errorf("an append with acks=%d timeout %v, want acks=all and the transaction timeout", acks, timeout)
		}
	}
	return f
}

func (f *fakeTopics) Controller() (sim.NodeID, int64) { return controllerNode, 5 }

func (f *fakeTopics) PartitionLeader(tp metadata.TopicPartition) (int32, sim.NodeID, bool, bool) {
	n, ok := f.leaders[proto.TopicPartition{Topic: tp.Topic, Partition: tp.Partition}]
	if !ok {
		return -1, sim.NoNode, false, false
	}
	if n == sim.NoNode {
		return -1, sim.NoNode, true, false
	}
	return int32(n), n, true, true
}

// markerRequests returns the WriteTxnMarkers sent from the n-th message on,
// by destination.
func (f *fakeTopics) markerRequests(n int) map[sim.NodeID]*proto.WriteTxnMarkersRequest {
	out := map[sim.NodeID]*proto.WriteTxnMarkersRequest{}
	for _, s := range f.Sent[n:] {
		if r, ok := s.M.(*proto.WriteTxnMarkersRequest); ok {
			if out[s.To] != nil {
				f.T.Fatalf("two WriteTxnMarkers to %d in one flush", s.To)
			}
			out[s.To] = r
		}
	}
	return out
}

// grantBlock answers the coordinator's AllocateProducerIds with a block
// starting at start.
func (f *fakeTopics) grantBlock(start int64) {
	f.T.Helper()
	for i := len(f.Sent) - 1; i >= 0; i-- {
		if r, ok := f.Sent[i].M.(*proto.AllocateProducerIdsRequest); ok {
			if f.Sent[i].To != controllerNode || r.BrokerEpoch != 5 {
				f.T.Fatalf("AllocateProducerIds to %d with broker epoch %d", f.Sent[i].To, r.BrokerEpoch)
			}
			f.C.HandleRequest(controllerNode, &proto.AllocateProducerIdsResponse{CorrelationID: r.CorrelationID, ProducerIDStart: start, ProducerIDLen: 1000})
			return
		}
	}
	f.T.Fatal("no AllocateProducerIds sent")
}

// ackMarkers answers a WriteTxnMarkers, every partition with err.
func (f *fakeTopics) ackMarkers(from sim.NodeID, r *proto.WriteTxnMarkersRequest, err func(proto.TopicPartition) proto.ErrorCode) {
	resp := &proto.WriteTxnMarkersResponse{CorrelationID: r.CorrelationID}
	for _, m := range r.Markers {
		res := proto.TxnMarkerResult{ProducerID: m.ProducerID}
		for _, tp := range m.Partitions {
			res.Partitions = append(res.Partitions, proto.TxnPartitionResult{TopicPartition: tp, Error: err(tp)})
		}
		resp.Markers = append(resp.Markers, res)
	}
	f.C.HandleRequest(from, resp)
}

func allNone(proto.TopicPartition) proto.ErrorCode { return proto.None }

// describe returns the coordinator's view of id.
func (f *fakeTopics) describe(id string) proto.TransactionDescription {
	f.T.Helper()
	out := f.Request(client, &proto.DescribeTransactionsRequest{TransactionalIDs: []string{id}})
	return out[0].(*proto.DescribeTransactionsResponse).Transactions[0]
}

// initPID runs InitProducerId for id to its committed answer.
func (f *fakeTopics) initPID(id string, timeout time.Duration) *proto.InitProducerIDResponse {
	f.T.Helper()
	req := &proto.InitProducerIDRequest{TransactionalID: id, TransactionTimeout: timeout, ProducerID: -1, ProducerEpoch: -1}
	out := f.Request(client, req)
	if len(out) > 0 {
		return out[0].(*proto.InitProducerIDResponse)
	}
	n := len(f.Sent)
	f.Commit()
	out = f.To(client, n)
	if len(out) != 1 {
		f.T.Fatalf("InitProducerId answered %d times after the commit", len(out))
	}
	return out[0].(*proto.InitProducerIDResponse)
}

func tp(topic string, p int32) proto.TopicPartition {
	return proto.TopicPartition{Topic: topic, Partition: p}
}
