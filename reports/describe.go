package reports

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
)

// DescribeTopics prints the final partition states the way
// `kafka-topics.sh --describe` does: per topic a header line with its
// partition count and replication factor, then one tab-indented line per
// partition, sorted by topic and partition. Kafka's own columns are
// followed by the high watermark, log end offset and log start offset,
// which a post-mortem needs and kafka-topics cannot show.
func DescribeTopics(w io.Writer, final []PartitionState) error {
	ps := sortedStates(final)
	bw := bufio.NewWriter(w)
	for i := 0; i < len(ps); {
		j := i
		for j < len(ps) && ps[j].Topic == ps[i].Topic {
			j++
		}
		// Like Kafka, the replication factor is the first partition's
		// replica count.
		fmt.Fprintf(bw, "Topic: %s\tPartitionCount: %d\tReplicationFactor: %d\n",
			ps[i].Topic, j-i, len(ps[i].Replicas))
		for _, p := range ps[i:j] {
			// LSO: the last stable offset; with no transactions in the
			// model nothing holds it below the high watermark.
			fmt.Fprintf(bw, "\tTopic: %s\tPartition: %d\tLeader: %s\tLeaderEpoch: %d\tReplicas: %s\tIsr: %s\tElr: %s\tHW: %d\tLSO: %d\tLEO: %d\tLogStartOffset: %d\n",
				p.Topic, p.Partition, leaderName(p.Leader), p.LeaderEpoch,
				joinIDs(p.Replicas), joinIDs(p.ISR), joinIDs(p.ELR), p.HW, p.HW, p.LEO, p.LogStartOffset)
		}
		i = j
	}
	return bw.Flush()
}

// sortedStates returns the partitions sorted by topic then partition,
// leaving the caller's slice as it was.
func sortedStates(final []PartitionState) []PartitionState {
	ps := append([]PartitionState(nil), final...)
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].Topic != ps[j].Topic {
			return ps[i].Topic < ps[j].Topic
		}
		return ps[i].Partition < ps[j].Partition
	})
	return ps
}

// leaderName is a leader id as kafka-topics prints it: "none" when the
// partition has no leader.
func leaderName(id int32) string {
	if id < 0 {
		return "none"
	}
	return strconv.FormatInt(int64(id), 10)
}
