package cluster

import (
	"fmt"
	"slices"
	"time"

	"kafkasim/godview"
	"kafkasim/model/metadata"
	"kafkasim/model/reader"
	"kafkasim/sim"
)

// truncatedPastUnpolled says why a partition whose committed offset (-1:
// none) is below its high watermark is not judged, when the god view saw
// it lose committed data at or above its owner's position and the owner
// found it so: KIP-320's validation sought the position back to the first
// offset known to diverge (SubscriptionState.maybeCompleteValidation),
// which is the high watermark, no record has been returned to the
// application since, and the application commits the offsets of the
// records it polled (KafkaConsumer.commitSync(Map)). Kafka's consumer then
// commits nothing until a record arrives: what its application committed
// of the lost records went with them, or with a loss of the group's
// __consumer_offsets partition, and nothing brings the commit up to the
// high watermark. Auto-commit commits every position
// (ConsumerCoordinator.maybeAutoCommitOffsetsAsync), so its group is
// judged. "" when the partition is judged.
func (c *Cluster) truncatedPastUnpolled(gid string, id sim.NodeID, tp metadata.TopicPartition, hw, committed int64) string {
	r := c.Reader(id)
	if r == nil || r.Position(tp.Topic, tp.Partition) < hw || !r.TruncatedUnconsumed(tp.Topic, tp.Partition) {
		return ""
	}
	mode, ok := c.commitMode(id)
	if !ok || mode == reader.CommitAuto {
		return ""
	}
	pos := r.Position(tp.Topic, tp.Partition)
	f, ok := lossAtOrAbove(c.Audit.Facts(), tp.String(), pos)
	if !ok {
		return ""
	}
	cause := lossCause(f)
	return fmt.Sprintf("not judged: group %s: committed offset of %s is %d, below the high watermark %d: the log was truncated under %s's position (offsets %d..%d lost, %s, at %v), KIP-320's validation sought it back to %d, and no record was polled since; its application commits the records it polls (commit: %s), so Kafka's consumer commits nothing until a record arrives",
		gid, tp, committed, hw, c.World.Name(id), f.From, f.To-1, cause, time.Duration(f.At), pos, mode)
}

// lossAtOrAbove is the god view's first loss of partition that took
// committed data at or above offset.
func lossAtOrAbove(facts []godview.Fact, partition string, offset int64) (godview.Fact, bool) {
	for _, f := range facts {
		if f.Kind == godview.Loss && f.Partition == partition && f.To > offset {
			return f, true
		}
	}
	return godview.Fact{}, false
}

// commitMode is the commit mode of a reader node's consumer group (ok
// false: it is in none).
func (c *Cluster) commitMode(id sim.NodeID) (reader.CommitMode, bool) {
	i := slices.Index(c.Readers, id)
	for _, rs := range c.cfg.Readers {
		if i < 0 {
			break
		}
		if i < rs.Count {
			if rs.Config.Group == nil {
				return "", false
			}
			return rs.Config.Group.Commit, true
		}
		i -= rs.Count
	}
	return "", false
}
