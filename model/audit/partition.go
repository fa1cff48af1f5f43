package audit

import (
	"strconv"
	"strings"

	"kafkasim/internal/chunked"
	"kafkasim/model/metadata"
	"kafkasim/model/partlog"
	"kafkasim/model/record"
	"kafkasim/sim"
)

// A partition's audit state: the batches committed in it, how far each
// replica's high watermark has been checked against them, and what may
// excuse a committed batch that vanishes (unclean elections, replicas that
// came back short from a recovery); part finds it by topic and number.

// batchKey identifies a batch in the log, as the audit compares copies of
// it across replicas and retries.
//
// The audit keeps one for every batch committed in the run (two million in
// an hour of the reference load): its fields are ordered largest first and
// the last offset kept as the batch's own delta (an int32 in the batch's
// header), so that it takes 40 bytes, not 48.
type batchKey struct {
	base      int64
	pid       int64
	lastDelta int32
	epoch     int32
	seq       int32
	crc       uint32
	pepoch    int16 // the producer epoch
	thinned   bool
	// marker: a transaction's COMMIT or ABORT marker (a control batch of
	// a transactional producer), which a loss may take (lostMarker).
	marker bool
}

func keyOf(b *record.Batch) batchKey {
	return batchKey{base: b.BaseOffset, lastDelta: b.LastOffsetDelta, epoch: b.PartitionLeaderEpoch, pid: b.ProducerID,
		seq: b.BaseSequence, pepoch: b.ProducerEpoch, crc: b.CRC(), thinned: b.Thinned(), marker: b.Control && b.Transactional && b.ProducerID >= 0}
}

// last is the batch's last offset.
func (k batchKey) last() int64 { return k.base + int64(k.lastDelta) }

func (k batchKey) same(o batchKey) bool {
	if k.base != o.base || k.last() != o.last() || k.epoch != o.epoch || k.pid != o.pid || k.seq != o.seq {
		return false
	}
	return k.thinned || o.thinned || k.crc == o.crc // compaction rewrites batches
}

// partitionAudit is what the audit knows of one partition.
type partitionAudit struct {
	committed chunked.List[batchKey] // committed batches, by offset
	// outOfOrder: retries a leader answered OUT_OF_ORDER_SEQUENCE_NUMBER
	// while no committed batch matched them yet (the batch may be in the
	// log, not yet committed); a batch committed later that matches one
	// was forgotten the same way (fuzz seed 2217). Oldest first, bounded.
	outOfOrder []batchRetry
	// unknownAppends: batches a leader appended at a sequence other than
	// 0 from a producer it held no state for, until they commit (then
	// they are recorded) or age out (waitingMax).
	unknownAppends []unknownAppend
	// forgottenRuns: producers whose retry of a batch retention deleted a
	// leader took as new (godview.ForgottenProducer), and the sequence the
	// leader now expects of each: its producer state holds that producer
	// only from the retry, so the retries that follow it in sequence are
	// taken as new too (fuzz seed 222235). Bounded by waitingMax.
	forgottenRuns []forgottenRun
	// checks: how far each replica's high watermark has been checked (a
	// replica set is a handful of brokers: a list, not maps).
	checks []replicaCheck
	// agreements: how far each replica's log was last found to hold what
	// was committed (agreement.go).
	agreements []agreement
	// joinAgreements: how far each member's log was last found, joining
	// a leader's ISR, to hold what that leader's held (agreement.go).
	joinAgreements []joinAgreement
	// uncleanElections and powerLossFrom say a committed batch may now
	// vanish: an unclean election, or a recovery that lost page cache,
	// happened since. uncleanElections: each unclean election's leader
	// epoch and where its loss began; a leader of an earlier epoch is
	// deposed by it. powerLossFrom: the lowest log end a replica came back
	// with, short of what was committed (-1: none).
	uncleanElections []uncleanElection
	powerLossFrom    int64
	// shortSince: brokers whose log came back from a power loss shorter
	// than what was committed, and that have not joined the ISR since.
	// Only such a broker can lack committed data the way Kafka permits; one
	// that joined the ISR claimed to have caught up.
	shortSince map[int32]shortRange
	// diskCause: brokers of shortSince whose log came back short because
	// of their disk, not only their page cache: "disk-wipe" (replaced) or
	// "disk-corruption" (recovery cut a batch that failed its checks);
	// they lost what they had fsynced too. diskFaults is each broker's
	// disk wipe, corruption and power-loss counts when its replica was last
	// opened.
	diskCause  map[int32]string
	diskFaults map[int32][3]uint64
	ackedUpTo  int64 // last offset acknowledged with acks=all, -1
	// leaderEpoch is the highest leader epoch a broker took up.
	leaderEpoch int32
	// proposedShort: members a leader proposed for the ISR while their log
	// ended before an acknowledged write (the log end they had then).
	proposedShort map[int32]int64
	// epochCheckpointRead: a replica recovered from a leader-epoch
	// checkpoint a bit flip had hit; the file may be rewritten since, its
	// numbers live on in that replica's epoch cache.
	epochCheckpointRead bool
	// expiredBelow: the highest log start any replica reported (ReplicaHW).
	expiredBelow int64
}

// SetReplicas gives the audit its god view of replica logs.
func (a *Audit) SetReplicas(lookup func(broker int32, tp metadata.TopicPartition) *partlog.Log) {
	a.replicas = lookup
}

// topicAudit holds a topic's partitions by number.
type topicAudit struct {
	name  string
	parts []*partitionAudit
}

// replicaCheck is how far the audit has checked one replica of a
// partition.
type replicaCheck struct {
	broker int32
	// hw is the high watermark checked up to.
	hw int64
	// hint is where in committed the last check ended, the next one
	// starts there (-1: none yet).
	hint int
}

// findCheck returns broker's entry, or nil.
func (p *partitionAudit) findCheck(broker int32) *replicaCheck {
	for i := range p.checks {
		if p.checks[i].broker == broker {
			return &p.checks[i]
		}
	}
	return nil
}

// check returns broker's entry, added (nothing checked yet) if missing.
func (p *partitionAudit) check(broker int32) *replicaCheck {
	if c := p.findCheck(broker); c != nil {
		return c
	}
	p.checks = append(p.checks, replicaCheck{broker: broker, hint: -1})
	return &p.checks[len(p.checks)-1]
}

// part is a partition's audit state. It is asked for after every
// acknowledgement and high-watermark move: partitions are found by topic
// (the last one at hand) and number, with no hashing of the pair.
func (a *Audit) part(tp metadata.TopicPartition) *partitionAudit {
	t := a.lastTopic
	if t == nil || t.name != tp.Topic {
		if a.parts == nil {
			a.parts = map[string]*topicAudit{}
		}
		t = a.parts[tp.Topic]
		if t == nil {
			t = &topicAudit{name: tp.Topic}
			a.parts[tp.Topic] = t
		}
		a.lastTopic = t
	}
	for int(tp.Partition) >= len(t.parts) {
		t.parts = append(t.parts, nil)
	}
	p := t.parts[tp.Partition]
	if p == nil {
		p = &partitionAudit{powerLossFrom: -1, ackedUpTo: -1}
		t.parts[tp.Partition] = p
	}
	return p
}

func (a *Audit) brokerNode(b int32) sim.NodeID {
	id, _ := a.w.Lookup("broker-" + strconv.Itoa(int(b)))
	return id
}

// flipped reports whether broker's replica of tp holds a batch whose header
// a bit flip changed where the CRC does not look (a base offset, a leader
// epoch): corruption nothing in Kafka detects. What such a replica breaks is
// a cost of that corruption, not a broken guarantee.
func (a *Audit) flipped(broker int32, tp metadata.TopicPartition) bool {
	if a.replicas == nil {
		return false
	}
	if a.part(tp).epochCheckpointRead || a.epochCheckpointFlipped(tp) {
		return true
	}
	flips := a.w.Disk(a.brokerNode(broker)).Flips()
	if len(flips) == 0 {
		return false
	}
	l := a.replicas(broker, tp)
	return l != nil && l.HeaderFlipped(flips)
}

// epochCheckpointFlipped reports whether a bit flip hit tp's
// leader-epoch-checkpoint on any broker: a number changed there (the file has
// no checksum, in Kafka either) can make that replica, as leader, tell its
// followers a wrong end for an epoch, and what they then keep or drop is a
// cost of the corruption.
func (a *Audit) epochCheckpointFlipped(tp metadata.TopicPartition) bool {
	for b := int32(1); ; b++ {
		id, ok := a.w.Lookup("broker-" + strconv.Itoa(int(b)))
		if !ok {
			return false
		}
		if epochCheckpointFlippedOn(a.w.Disk(id), tp) {
			return true
		}
	}
}

func epochCheckpointFlippedOn(d *sim.Disk, tp metadata.TopicPartition) bool {
	flips := d.Flips()
	if len(flips) == 0 {
		return false // nearly always: no name to format
	}
	suffix := "/" + tp.String() + "/leader-epoch-checkpoint"
	for _, f := range flips {
		if strings.HasSuffix(f.File, suffix) {
			return true
		}
	}
	return false
}

// committedAt finds the committed batch holding offset.
func (p *partitionAudit) committedAt(offset int64) (int, bool) {
	i := p.committed.Search(func(k *batchKey) bool { return k.last() >= offset })
	return i, i < p.committed.Len() && p.committed.At(i).base <= offset
}

// committedNear is committedAt for a scan in offset order: hint is where the
// previous offset was found, and the answer is almost always at or just
// after it.
func (p *partitionAudit) committedNear(offset int64, hint int) (int, bool) {
	for i := max(hint, 0); i < p.committed.Len() && i < hint+4; i++ {
		if p.committed.At(i).last() >= offset {
			if i == 0 || p.committed.At(i-1).last() < offset {
				return i, p.committed.At(i).base <= offset
			}
			break
		}
	}
	return p.committedAt(offset)
}

func (p *partitionAudit) committedEnd() int64 {
	if p.committed.Len() == 0 {
		return 0
	}
	return p.committed.Last().last() + 1
}
