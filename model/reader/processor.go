package reader

import (
	"kafkasim/model/proto"
)

// A stream processor (model/processor) runs on a group member: the member
// polls and processes as an at-least-once application does, and the
// processor writes each processed record's output and closes its units of
// work (Kafka Streams' StreamThread over its TaskManager: process, then
// commit every commit.interval.ms and before a revocation). The member
// hands it:
//   - BeforeProcess, before a record's process operation begins (an
//     exactly-once processor begins its transaction there: Kafka's
//     beginTransaction is local, and a process belongs to the transaction
//     its process had open);
//   - Output, inside the processing, once its draw has run (Streams'
//     context.forward: the producer's send runs inside process());
//   - Commit, at the end of each batch and, forced, before partitions are
//     revoked (TaskManager.handleRevocation commits every task first: an
//     exactly-once v2 thread shares one producer, one transaction, between
//     its tasks);
//   - Lost, before partitions the member lost are dropped (Streams'
//     onPartitionsLost: TaskManager.handleLostAll closes the tasks dirty,
//     so an exactly-once processor aborts its transaction rather than
//     committing what it processed under the generation it lost).
// Commit's done(reset) with reset set puts every owned partition back to
// its committed offset (Streams' TaskCorruptedException: the tasks close
// dirty, and their positions are reset to the committed offsets).

// Processor is the stream processor a member runs for (nil: none).
type Processor interface {
	BeforeProcess()
	Output(in Input)
	Commit(offsets []Position, force bool, done func(reset bool))
	Lost(done func())
}

// Input is a record the member processed.
type Input struct {
	Topic     string
	Partition int32
	Offset    int64
	Key       string
	HasKey    bool
}

// Position is a position to commit: the next offset to read of a
// partition, and the leader epoch of the record before it.
type Position struct {
	Topic       string
	Partition   int32
	Offset      int64
	LeaderEpoch int32
}

// GroupMetadata is the member's ConsumerGroupMetadata (what
// sendOffsetsToTransaction carries): group id, generation or member epoch,
// member id and group.instance.id. A classic member's is the generation
// and member id of its last completed join: ConsumerCoordinator sets
// groupMetadata in onJoinComplete only, so a member whose generation the
// heartbeat reset still sends the generation it held its partitions in,
// which the coordinator refuses (KIP-447's fencing). Were it the reset
// generation (-1, no member id), ClassicGroup.validateOffsetCommit would
// take it as an old TxnOffsetCommit version's and commit the zombie's
// offsets. A consumer-protocol member's follows its member epoch
// (AsyncKafkaConsumer updates it on every epoch change).
func (r *Reader) GroupMetadata() (group string, generation int32, memberID, instanceID string) {
	g := r.group
	if g == nil {
		return "", proto.NoGeneration, "", ""
	}
	if !g.cfg.consumerProtocol() {
		return g.cfg.GroupID, g.ownedGeneration, g.ownedMemberID, g.cfg.GroupInstanceID
	}
	return g.cfg.GroupID, g.generation, g.memberID, g.cfg.GroupInstanceID
}

// CommitSync commits positions with the member's OffsetCommit (recorded as
// a commit operation); then hears whether it succeeded.
func (r *Reader) CommitSync(pos []Position, then func(ok bool)) {
	offsets := make([]commitOffset, 0, len(pos))
	for _, p := range pos {
		offsets = append(offsets, commitOffset{key: partKey{p.Topic, p.Partition}, pos: fetchPosition{offset: p.Offset, offsetEpoch: p.LeaderEpoch}})
	}
	r.commitSync(offsets, then)
}

// processorCommit hands the processor the positions the member processed
// of every partition it owns; then runs once it is done.
func (r *Reader) processorCommit(force bool, then func()) {
	g := r.group
	offs := r.processedOffsets(r.ownedTPs())
	pos := make([]Position, 0, len(offs))
	for _, o := range offs {
		pos = append(pos, Position{Topic: o.key.topic, Partition: o.key.partition, Offset: o.pos.offset, LeaderEpoch: o.pos.offsetEpoch})
	}
	g.cfg.Processor.Commit(pos, force, func(reset bool) {
		if reset {
			r.resetToCommitted()
		}
		then()
	})
}

// resetToCommitted puts every owned partition back to its committed
// offset: in the history, the member's session of each ends (revoke) and
// starts again (assign), as the positions go back. The god view's audit
// hears neither: the member keeps every partition it owns. Streams'
// TaskManager.handleCorruption closes the corrupted tasks dirty and revives
// them (closeDirtyAndRevive), and the revived tasks seek their consumer to
// the committed offsets; the consumer's assignment does not change and no
// rebalance listener runs, so no partition is granted again. Told as a
// grant, a member whose generation the coordinator forgot (its
// __consumer_offsets partition lost the group's records) would claim again,
// under its old member id and generation, a partition the reloaded group
// gave another member in the reused generation number — which it had owned
// all along.
func (r *Reader) resetToCommitted() {
	tps := r.ownedTPs()
	if len(tps) == 0 {
		return
	}
	r.unassign(tps)
	r.addPartitions(tps)
	r.recordAssignHistory()
}
