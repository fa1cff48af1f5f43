package record

// Arena carves the batches a client builds, and their wire bytes, from
// blocks: building a batch then costs no allocation of its own, only one
// per block (a producer builds hundreds of thousands of small batches, and
// each used to cost two allocations of fresh memory, 3% of the data plane's
// benchmark). A block lives while any batch carved from it does; its
// batches never change once built (stamping aside, which touches only the
// batch's own header), so sharing a block is invisible.
//
// The zero Arena is ready to use; a nil *Arena allocates every batch on its
// own. An Arena belongs to one client: it is not safe for concurrent use.
type Arena struct {
	batches []Batch // the block batch structs are carved from
	bytes   []byte  // the block wire bytes are carved from
}

const (
	arenaBatches    = 64
	arenaBytes      = 32 << 10
	arenaBytesLarge = arenaBytes / 8 // a larger wire form gets memory of its own
)

// New is record.New, carving the batch from a.
func (a *Arena) New(records []Record, p Producer, transactional bool, codec Compression) *Batch {
	for i := range records {
		records[i].OffsetDelta = int32(i)
	}
	return a.build(records, int32(len(records)-1), p, transactional, codec)
}

// batch returns a zero Batch to fill in.
func (a *Arena) batch() *Batch {
	if a == nil {
		return new(Batch)
	}
	if len(a.batches) == 0 {
		a.batches = make([]Batch, arenaBatches)
	}
	b := &a.batches[0]
	a.batches = a.batches[1:]
	return b
}

// wire returns n zero bytes with room for size more.
func (a *Arena) wire(n, size int) []byte {
	total := n + size
	if a == nil || total > arenaBytesLarge {
		return make([]byte, n, total)
	}
	if len(a.bytes) < total {
		a.bytes = make([]byte, arenaBytes)
	}
	out := a.bytes[:n:total]
	a.bytes = a.bytes[total:]
	return out
}
