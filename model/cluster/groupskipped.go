package cluster

import (
	"fmt"
	"strings"

	"kafkasim/model/metadata"
	"kafkasim/sim"
)

// missedBySkippedAssignment returns the partitions of classic group gid
// that no member of it owns and that its leader, back as a static member
// whose join kept the group's assignment (KIP-814), already counted when it
// rejoined, with what to say of them ("" when none). The kept assignment
// was made from the partition counts of an earlier generation; Kafka's
// ConsumerCoordinator.onLeaderElected takes the metadata of the rejoin as
// the leader's assignmentSnapshot, so needRejoin sees no change and no
// rebalance assigns the partitions added while the leader was away, until
// something else rebalances the group (KAFKA-13435 fixed only partitions
// added after the rejoin).
func (c *Cluster) missedBySkippedAssignment(im *metadata.Image, gid string) (map[string]bool, string) {
	d, ok := c.DescribeGroup(gid)
	if !ok || d.Protocol != "classic" || d.State != "Stable" {
		return nil, ""
	}
	var leader string
	var counts map[string]int32
	owned := map[string]bool{}
	for _, id := range c.Readers {
		r := c.Reader(id)
		if r == nil || c.readerGroup(id) != gid || c.World.State(id) != sim.Running || r.Fatal() != "" {
			continue
		}
		for _, p := range r.Owned() {
			owned[p] = true
		}
		_, generation, member, _ := r.Group()
		if s, ok := r.SkippedAssignmentSnapshot(); ok && member == d.Leader && generation == d.Generation && r.Stable() {
			leader, counts = c.World.Name(id), s
		}
	}
	if counts == nil {
		return nil, ""
	}
	missed := map[string]bool{}
	var names []string
	for _, p := range im.Partitions() {
		key := p.TopicPartition.String()
		if n, ok := counts[p.Topic]; ok && p.Partition < n && !owned[key] {
			missed[key] = true
			names = append(names, key)
		}
	}
	if len(missed) == 0 {
		return nil, ""
	}
	return missed, fmt.Sprintf("not judged: group %s: no member owns %s: its leader %s rejoined as a static member and kept generation %d's assignment (KIP-814's skipped assignment), made before these partitions were added; Kafka's leader snapshots the metadata of its rejoin, which has them, so no rebalance assigns them (ConsumerCoordinator.onLeaderElected)",
		gid, strings.Join(names, ", "), leader, d.Generation)
}
