package cluster

import (
	"fmt"
	"time"

	"kafkasim/model/metadata"
	"kafkasim/model/proto"
	"kafkasim/model/reader"
	"kafkasim/sim"
)

// commitLostAtPosition says why a partition whose committed offset is below
// its high watermark is not judged, when the group's latest acknowledged
// commit of it was what its owner processed, its position at or past the
// high watermark (past the commit only over batches the application never
// sees: transaction markers, aborted records at read_committed), and the
// god view then saw the group's __consumer_offsets
// partition lose committed data: the coordinator that loaded the
// partition since replayed an older commit (GroupCoordinatorShard.replay
// keeps the last OffsetCommit record its log holds). The member does not
// know: its position is where it committed, no record was polled since,
// and its application commits the offsets of the records it polls
// (KafkaConsumer.commitSync(Map)), so Kafka's consumer commits nothing
// until a record arrives. Auto-commit commits every position at each
// interval (ConsumerCoordinator.maybeAutoCommitOffsetsAsync), so its group
// is judged. "" when the partition is judged.
func (c *Cluster) commitLostAtPosition(gid string, id sim.NodeID, tp metadata.TopicPartition, hw, committed int64) string {
	r := c.Reader(id)
	if r == nil {
		return ""
	}
	pos := r.Position(tp.Topic, tp.Partition)
	processed := r.Processed(tp.Topic, tp.Partition)
	if pos < hw || processed < 0 || committed >= processed || processed > pos {
		return ""
	}
	mode, ok := c.commitMode(id)
	if !ok || mode == reader.CommitAuto {
		return ""
	}
	part := c.groupOffsetsPartition(gid).Partition
	last, f, lost, ok := c.Audit.LastGroupCommit(gid, proto.TopicPartition{Topic: tp.Topic, Partition: tp.Partition}, part)
	if !ok || !lost || last != processed {
		return ""
	}
	cause := lossCause(f)
	return fmt.Sprintf("not judged: group %s: committed offset of %s is %d, below the high watermark %d: the group's last acknowledged commit of it, %d, what %s processed (its position %d), was lost with %s's committed data (offsets %d..%d, %s, at %v); no record was polled since, and its application commits the records it polls (commit: %s), so Kafka's consumer commits nothing until a record arrives",
		gid, tp, committed, hw, last, c.World.Name(id), pos, f.Partition, f.From, f.To-1, cause, time.Duration(f.At), mode)
}
