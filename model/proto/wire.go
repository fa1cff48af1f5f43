package proto

import "kafkasim/sim"

// Sizes on the wire (sim.Sized), for a network with a bandwidth. The data
// plane's requests and responses count what dominates them: the record
// batches they carry, as encoded (record.Batch.SizeBytes: the real v2
// format, compressed when the producer compresses), plus an approximate
// fixed cost per partition. Kafka's encoding (ProduceRequestData,
// FetchResponseData in clients/src/main/resources/common/message) has, per
// partition, an index, an error code, offsets and a length prefix: tens of
// bytes. Other messages (metadata, group and controller traffic, KRaft's)
// cost sim.DefaultMessageBytes whatever their size: small next to the data
// plane's batches.
const (
	// headerWireBytes is a request or response header with its top-level
	// fields (size, api key and version, correlation id, client id, acks,
	// timeout, throttle time).
	headerWireBytes = sim.DefaultMessageBytes
	// partitionWireBytes is a partition's fixed fields in a produce or
	// fetch request or response, besides its topic's name and its records.
	partitionWireBytes = 40
)

// WireBytes implements sim.Sized: the header, each partition's fields and
// its batch.
func (r *ProduceRequest) WireBytes() int {
	n := headerWireBytes
	for i := range r.Partitions {
		p := &r.Partitions[i]
		n += partitionWireBytes + len(p.Topic)
		if p.Batch != nil {
			n += p.Batch.SizeBytes()
		}
	}
	return n
}

// WireBytes implements sim.Sized.
func (r *ProduceResponse) WireBytes() int {
	n := headerWireBytes
	for i := range r.Partitions {
		n += partitionWireBytes + len(r.Partitions[i].Topic)
	}
	return n
}

// WireBytes implements sim.Sized.
func (r *FetchRequest) WireBytes() int {
	n := headerWireBytes
	for i := range r.Partitions {
		n += partitionWireBytes + len(r.Partitions[i].Topic)
	}
	for i := range r.Forgotten {
		n += 4 + len(r.Forgotten[i].Topic) // a forgotten partition is its name and number
	}
	return n
}

// WireBytes implements sim.Sized: the header, each partition's fields and
// the batches it carries (the records a follower or consumer fetched).
func (r *FetchResponse) WireBytes() int {
	n := headerWireBytes
	for i := range r.Partitions {
		p := &r.Partitions[i]
		n += partitionWireBytes + len(p.Topic)
		for _, b := range p.Batches {
			n += b.SizeBytes()
		}
	}
	return n
}
