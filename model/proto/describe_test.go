package proto

import (
	"fmt"
	"testing"

	"kafkasim/model/record"

	"pgregory.net/rapid"
)

// The trace shows these descriptions; they were written with fmt and are
// now appended by hand, in the very same words: the fmt versions are kept
// here as the reference.

func fmtTP(tp TopicPartition) string { return fmt.Sprintf("%s-%d", tp.Topic, tp.Partition) }

func fmtProduceRequest(m *ProduceRequest) string {
	s := fmt.Sprintf("Produce acks=%d", m.Acks)
	for _, p := range m.Partitions {
		s += fmt.Sprintf(" %s(%d records", fmtTP(p.TopicPartition), p.Batch.RecordCount())
		if b := p.Batch; b.ProducerID >= 0 {
			s += fmt.Sprintf(", producer %d epoch %d seq %d", b.ProducerID, b.ProducerEpoch, b.BaseSequence)
		}
		s += ")"
	}
	return s
}

func fmtProduceResponse(m *ProduceResponse) string {
	s := "ProduceResponse"
	for _, p := range m.Partitions {
		s += fmt.Sprintf(" %s:%s@%d", fmtTP(p.TopicPartition), p.Error, p.BaseOffset)
	}
	return s
}

func fmtFetchRequest(m *FetchRequest) string {
	s := m.MessageName()
	for _, p := range m.Partitions {
		s += fmt.Sprintf(" %s@%d(epoch %d)", fmtTP(p.TopicPartition), p.FetchOffset, p.CurrentLeaderEpoch)
	}
	return s
}

func fmtFetchResponse(m *FetchResponse) string {
	s := "FetchResponse"
	for _, p := range m.Partitions {
		n := 0
		for _, b := range p.Batches {
			n += b.RecordCount()
		}
		s += fmt.Sprintf(" %s:%s hw=%d records=%d", fmtTP(p.TopicPartition), p.Error, p.HighWatermark, n)
		if p.Diverging != nil {
			s += fmt.Sprintf(" diverging=(%d,%d)", p.Diverging.Epoch, p.Diverging.EndOffset)
		}
	}
	return s
}

func drawTP(t *rapid.T) TopicPartition {
	return TopicPartition{Topic: rapid.StringMatching(`[a-z.\-_]{0,12}`).Draw(t, "topic"), Partition: rapid.Int32().Draw(t, "partition")}
}

func drawBatch(t *rapid.T) *record.Batch {
	recs := make([]record.Record, rapid.IntRange(1, 4).Draw(t, "records"))
	p := record.Producer{ID: rapid.Int64Range(-1, 1<<40).Draw(t, "pid"), Epoch: rapid.Int16().Draw(t, "pepoch"), BaseSequence: rapid.Int32().Draw(t, "seq")}
	return record.New(recs, p, false, record.CompressionNone)
}

func drawError(t *rapid.T) ErrorCode { return ErrorCode(rapid.Int16Range(-2, 120).Draw(t, "error")) }

func TestMessageDescriptionsAreTheFmtOnes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 4).Draw(t, "partitions")
		pr := &ProduceRequest{Acks: int16(rapid.IntRange(-1, 1).Draw(t, "acks"))}
		ps := &ProduceResponse{}
		fr := &FetchRequest{ReplicaID: rapid.Int32Range(-1, 3).Draw(t, "replica")}
		fs := &FetchResponse{}
		for range n {
			pr.Partitions = append(pr.Partitions, ProducePartition{TopicPartition: drawTP(t), Batch: drawBatch(t)})
			ps.Partitions = append(ps.Partitions, ProducePartitionResponse{TopicPartition: drawTP(t), Error: drawError(t), BaseOffset: rapid.Int64().Draw(t, "base")})
			fr.Partitions = append(fr.Partitions, FetchPartition{TopicPartition: drawTP(t), FetchOffset: rapid.Int64().Draw(t, "offset"), CurrentLeaderEpoch: rapid.Int32().Draw(t, "epoch")})
			p := FetchPartitionResponse{TopicPartition: drawTP(t), Error: drawError(t), HighWatermark: rapid.Int64().Draw(t, "hw")}
			for range rapid.IntRange(0, 2).Draw(t, "batches") {
				p.Batches = append(p.Batches, drawBatch(t))
			}
			if rapid.Bool().Draw(t, "diverging") {
				p.Diverging = &EpochEndOffset{Epoch: rapid.Int32().Draw(t, "div epoch"), EndOffset: rapid.Int64().Draw(t, "div end")}
			}
			fs.Partitions = append(fs.Partitions, p)
		}
		for _, c := range []struct{ got, want string }{
			{pr.String(), fmtProduceRequest(pr)},
			{ps.String(), fmtProduceResponse(ps)},
			{fr.String(), fmtFetchRequest(fr)},
			{fs.String(), fmtFetchResponse(fs)},
		} {
			if c.got != c.want {
				t.Fatalf("description %q, want %q", c.got, c.want)
			}
		}
		if tp := drawTP(t); tp.String() != fmtTP(tp) {
			t.Fatalf("%q, want %q", tp.String(), fmtTP(tp))
		}
	})
}
