package audit

import (
	"kafkasim/godview"
	"kafkasim/model/proto"
	"kafkasim/sim"
)

// StaleLeaderRead records that reader node took records [from, to) of tp
// from a fetch it had sent under an older leader epoch than the one it knew
// when the answer came (model/reader's FetchAuditor): a deposed leader's
// answer. Kafka's consumer takes it, as it asked from the position the
// consumer still holds; the records are the deposed leader's, and the
// reader goes on from past them at the new leader, whatever that one holds
// at those offsets.
func (a *Audit) StaleLeaderRead(node sim.NodeID, tp proto.TopicPartition, from, to int64) {
	a.facts = append(a.facts, godview.Fact{Kind: godview.StaleLeaderRead, At: int64(a.w.Now()),
		Partition: tp.String(), From: from, To: to, Producer: godview.NoProducer, Process: a.w.Name(node)})
}

// OutOfRangeReset records that the leader reader node fetched tp from
// answered OFFSET_OUT_OF_RANGE at its position from, and that
// auto.offset.reset moved the position on to to (model/reader's
// FetchAuditor): retention had deleted [from, to) from that leader's log.
// Another replica's retention may not have gone as far; if it leads later,
// the log holds again records the reader legitimately passed over.
func (a *Audit) OutOfRangeReset(node sim.NodeID, tp proto.TopicPartition, from, to int64) {
	a.facts = append(a.facts, godview.Fact{Kind: godview.OutOfRangeReset, At: int64(a.w.Now()),
		Partition: tp.String(), From: from, To: to, Producer: godview.NoProducer, Process: a.w.Name(node)})
}

// OutOfRangeRewind records that the leader reader node fetched tp from
// answered OFFSET_OUT_OF_RANGE at its position to, and that
// auto.offset.reset moved the position back to from, the log start
// ListOffsets gave (model/reader's FetchAuditor): a power loss had undone
// the leader's unsynced segment deletions, or a replica whose retention had
// not gone as far led by then. The reader reads [from, to) again.
func (a *Audit) OutOfRangeRewind(node sim.NodeID, tp proto.TopicPartition, from, to int64) {
	a.facts = append(a.facts, godview.Fact{Kind: godview.OutOfRangeRewind, At: int64(a.w.Now()),
		Partition: tp.String(), From: from, To: to, Producer: godview.NoProducer, Process: a.w.Name(node)})
}
