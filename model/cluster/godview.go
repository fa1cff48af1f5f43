package cluster

import (
	"fmt"

	"kafkasim/godview"
	"kafkasim/model/audit"
	"kafkasim/model/proto"
	"kafkasim/sim"
)

// Facts are what the god view saw happen in the run that Kafka permits to
// cost data or order, for the checker: the audit's (committed data lost,
// batches leaders' producer state forgot, entries an unclean election
// resurrected), the unclean elections that lost data, the records held back
// above a high watermark that cannot advance, the faults that lost brokers'
// page cache and the topics that grew partitions. Ask once the run is over.
func (c *Cluster) Facts() godview.List {
	seen := c.Audit.Facts()
	facts := make([]godview.Fact, 0, len(seen))
	facts = append(facts, seen...)
	for _, l := range seen {
		// An unclean election that only exposed a power loss happened all
		// the same.
		if l.Kind == godview.Loss && (l.Cause == audit.CauseUncleanElection || l.ExposedBy == audit.CauseUncleanElection) {
			facts = append(facts, godview.Fact{Kind: godview.UncleanElection, Partition: l.Partition, At: l.At, Producer: godview.NoProducer})
		}
	}
	facts = append(facts, c.heldBack()...)
	facts = append(facts, c.hangingTransactions()...)
	for _, r := range c.World.FaultLog() {
		if r.Undo || r.Skipped != "" {
			continue
		}
		if op, ok := r.Fault.Custom.(AddPartitions); ok {
			facts = append(facts, godview.Fact{Kind: godview.PartitionsAdded, Topic: op.Topic, At: int64(r.At), Producer: godview.NoProducer})
		}
		if f, ok := UncleanRequested(r.Fault); ok {
			f.At = int64(r.At)
			facts = append(facts, f)
		}
		if LosesPageCache(r.Fault) {
			facts = append(facts, godview.Fact{Kind: godview.PowerLoss, At: int64(r.At), Producer: godview.NoProducer})
		}
	}
	return godview.Seen(facts...)
}

// UncleanRequested is the fact an elect-leaders fault of type unclean
// leaves: an operator asked for an unclean election.
func UncleanRequested(f sim.Fault) (godview.Fact, bool) {
	op, ok := f.Custom.(ElectLeaders)
	if !ok || op.Type != proto.ElectionUnclean {
		return godview.Fact{}, false
	}
	fact := godview.Fact{Kind: godview.UncleanElectionRequested, Producer: godview.NoProducer}
	if op.Topic != "" {
		fact.Partition = fmt.Sprintf("%s-%d", op.Topic, op.Partition)
	}
	return fact, true
}

// LosesPageCache reports whether fault f may lose a broker's page cache,
// and with it what the flush policy had not yet made durable: a crash, a
// power loss, a torn write or a wiped disk.
func LosesPageCache(f sim.Fault) bool {
	return f.Kind == sim.FaultCrash || f.Kind == sim.FaultPowerLoss ||
		f.Kind == sim.FaultDisk && (f.Disk == sim.DiskTornWrite || f.Disk == sim.DiskWipe)
}
