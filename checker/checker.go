package checker

import (
	"fmt"
	"sort"
	"strings"

	"kafkasim/checker/history"
)

// Config is what the configuration under test promises, and what happened to
// it: the checker's basis for telling a violated guarantee from a permitted
// cost. Zero values mean Kafka 4.2's defaults.
type Config struct {
	Producers []ProducerGuarantees
	Consumers []ConsumerGuarantees
	Topics    []TopicGuarantees
	// ELR is eligible.leader.replicas.enable.
	ELR  bool
	Bugs []string
	// Losses are committed data the simulator saw lost in ways Kafka
	// permits (unclean elections, power loss of unflushed data).
	Losses []DataLoss
	// PowerLosses counts faults that lost page cache on brokers (crash,
	// power-loss, torn-write), for histories without loss events.
	PowerLosses int
	// UncleanElections counts unclean leader elections that happened.
	UncleanElections int
	// PartitionsAdded lists topics whose partition count grew during the
	// run: their keys moved between partitions.
	PartitionsAdded []string

	permittedLoss map[string][]int64 // partition -> offsets of permitted lost writes
	lossWhy       map[string]string
}

// lostHere reports a permitted loss of an acknowledged write in partition (at
// offset, or anywhere when offset < 0), and its reason.
func (c *Config) lostHere(partition string, offset int64) (string, bool) {
	for _, o := range c.permittedLoss[partition] {
		if offset < 0 || o == offset {
			return c.lossWhy[partition], true
		}
	}
	return "", false
}

// ProducerGuarantees are one producer group's settings; Prefix matches its
// process names ("p" matches "p-0", "p-1").
type ProducerGuarantees struct {
	Prefix      string
	Acks        string // "all", "1", "0"
	Idempotence bool
	MaxInFlight int
	Retries     int
}

// ConsumerGuarantees are one consumer group's settings.
type ConsumerGuarantees struct {
	Prefix          string
	Isolation       string
	AutoOffsetReset string
}

// TopicGuarantees are a topic's durability settings.
type TopicGuarantees struct {
	Name              string
	ReplicationFactor int
	MinInsyncReplicas int
	Unclean           bool
	// FlushEveryMessage is flush.messages (log.flush.interval.messages) 1.
	FlushEveryMessage bool
	// Compact is cleanup.policy=compact: the log cleaner removes records
	// superseded by a later record with the same key.
	Compact bool
}

// DataLoss is committed data lost the way Kafka permits, seen by the
// simulator's god view.
type DataLoss struct {
	Partition string
	From, To  int64 // offsets [From, To)
	Cause     string
}

// Report is the checker's result.
type Report struct {
	Stats     Stats     `json:"stats"`
	Anomalies []Anomaly `json:"anomalies"`
	// Violations is the number of findings whose verdict is violation.
	Violations int `json:"violations"`
}

// Count returns how many findings of a type the report holds.
func (r *Report) Count(typ string) int {
	for _, a := range r.Anomalies {
		if a.Type == typ {
			return a.Count
		}
	}
	return 0
}

// Anomaly returns the anomaly of a type, if any.
func (r *Report) Anomaly(typ string) (Anomaly, bool) {
	for _, a := range r.Anomalies {
		if a.Type == typ {
			return a, true
		}
	}
	return Anomaly{}, false
}

// Check analyses a history against what cfg promises.
func Check(ops []history.Op, cfg Config) *Report {
	a := analyze(ops)
	cfg.excuseCompacted(a)
	rep := &Report{Stats: a.stats}
	groups := group(a.findings)
	// Permitted losses first: other anomalies that follow from them (an
	// offset reused after its record was lost) share their verdict.
	cfg.permittedLoss = map[string][]int64{}
	for _, f := range groups[LostAckedWrite] {
		if v, why := cfg.verdict(LostAckedWrite, f, a); v == Permitted {
			cfg.permittedLoss[f.Partition] = append(cfg.permittedLoss[f.Partition], f.Offset)
			if cfg.lossWhy == nil {
				cfg.lossWhy = map[string]string{}
			}
			if _, ok := cfg.lossWhy[f.Partition]; !ok {
				cfg.lossWhy[f.Partition] = why
			}
		}
	}
	for _, typ := range AnomalyTypes {
		fs := groups[typ]
		if len(fs) == 0 {
			continue
		}
		// One verdict per finding; findings of one type may differ (two
		// producer groups with different acks). Report each verdict.
		byVerdict := map[string][]Finding{}
		reasons := map[string]string{}
		var order []string
		for _, f := range fs {
			v, why := cfg.verdict(typ, f, a)
			key := v + "\x00" + why
			if _, ok := byVerdict[key]; !ok {
				order = append(order, key)
				reasons[key] = why
			}
			byVerdict[key] = append(byVerdict[key], f)
		}
		for _, key := range order {
			v := strings.SplitN(key, "\x00", 2)[0]
			group := byVerdict[key]
			an := Anomaly{Type: typ, Verdict: v, Count: len(group), Because: reasons[key], Example: group[0].Example}
			for i, f := range group {
				if i >= ExamplesMax {
					break
				}
				an.Examples = append(an.Examples, f.Example)
			}
			if v == Violation {
				rep.Violations += len(group)
			}
			rep.Anomalies = append(rep.Anomalies, an)
		}
	}
	return rep
}

func (c *Config) producer(process string) ProducerGuarantees {
	best := ProducerGuarantees{Acks: "all", Idempotence: true, MaxInFlight: 5, Retries: 1 << 30}
	bestLen := -1
	for _, p := range c.Producers {
		if (process == p.Prefix || strings.HasPrefix(process, p.Prefix+"-")) && len(p.Prefix) > bestLen {
			best, bestLen = p, len(p.Prefix)
		}
	}
	return best
}

func (c *Config) consumer(process string) ConsumerGuarantees {
	best := ConsumerGuarantees{Isolation: "read_uncommitted", AutoOffsetReset: "earliest"}
	bestLen := -1
	for _, g := range c.Consumers {
		if (process == g.Prefix || strings.HasPrefix(process, g.Prefix+"-")) && len(g.Prefix) > bestLen {
			best, bestLen = g, len(g.Prefix)
		}
	}
	return best
}

func (c *Config) topic(name string) TopicGuarantees {
	for _, t := range c.Topics {
		if t.Name == name {
			return t
		}
	}
	return TopicGuarantees{Name: name, ReplicationFactor: 1, MinInsyncReplicas: 1}
}

// loss finds a permitted loss covering partition at offset (offset < 0: any
// offset of the partition).
func (c *Config) loss(partition string, offset int64) (DataLoss, bool) {
	for _, l := range c.Losses {
		// Offsets at or after a loss's start may have been lost with it (the
		// god view records what was committed when the loss happened).
		if l.Partition == partition && (offset < 0 || offset >= l.From) {
			return l, true
		}
	}
	return DataLoss{}, false
}

func lossReason(l DataLoss, t TopicGuarantees) (string, string) {
	switch l.Cause {
	case "unclean-election":
		if t.Unclean {
			return Permitted, "unclean.leader.election.enable=true let a replica that lacked committed data lead"
		}
		return Permitted, "every ISR and ELR member was lost; Kafka elected the last known leader (KIP-966 balanced recovery), which may lack committed data"
	case "power-loss":
		if t.FlushEveryMessage {
			return Violation, "flush.messages=1 makes every acknowledged write durable before the acknowledgement; a power loss must not lose it"
		}
		return Permitted, "the default flush policy leaves acknowledged writes in page cache; a power loss of every replica holding them loses them"
	}
	return Permitted, "committed data was lost: " + l.Cause
}

// verdict decides whether a finding is a violation, and why, in words.
func (c *Config) verdict(typ string, f Finding, a *analysis) (string, string) {
	t := c.topic(topicOf(f.Partition))
	switch typ {
	case LostAckedWrite:
		if l, ok := c.loss(f.Partition, f.Offset); ok {
			return lossReason(l, t)
		}
		if a.readAt(f.Partition, f.Offset, f.Value) {
			// A reader saw it: it was committed (readers stop at the high
			// watermark), and committed data outlives the loss of a leader.
			return Violation, "readers saw this record, so it was committed; committed data must not be lost without an unclean election or a power loss"
		}
		p := c.producer(f.Process)
		switch p.Acks {
		case "0":
			return Permitted, "acks=0 waits for no acknowledgement"
		case "1":
			return Permitted, "acks=1 does not wait for followers: a leader that fails before they copy a record loses it"
		}
		if t.Unclean && c.UncleanElections > 0 {
			return Permitted, "unclean.leader.election.enable=true and an unclean election happened"
		}
		if !t.FlushEveryMessage && c.PowerLosses > 0 && c.Losses == nil {
			return Permitted, "the default flush policy leaves acknowledged writes in page cache, and power was lost"
		}
		return Violation, fmt.Sprintf("acks=all with min.insync.replicas=%d promises an acknowledged write survives while a replica that held it survives", t.MinInsyncReplicas)
	case Unseen:
		return Permitted, "readers had not reached it when the run ended, and no final read covered it"
	case Duplicate:
		if f.Partition == "" {
			return Violation, "a history's values must be unique"
		}
		p := c.producer(f.Process)
		if s, ok := a.sends[f.Value]; ok {
			p = c.producer(s.process)
		}
		if !p.Idempotence {
			return Permitted, "enable.idempotence=false: a retried batch that was already written is written again"
		}
		return Violation, "enable.idempotence=true promises each record is written once"
	case InconsistentOffsets:
		if l, ok := c.loss(f.Partition, f.Offset); ok {
			return Permitted, "offsets were reused after committed data was lost (" + l.Cause + ")"
		}
		if a.readValuesAt(f.Partition, f.Offset) > 1 {
			return Violation, "readers saw two different records at one offset: committed data changed"
		}
		if why, ok := c.lostHere(f.Partition, f.Offset); ok {
			return Permitted, "the write acknowledged at this offset was lost, and the offset reused: " + why
		}
		return Violation, "an offset names one record forever: two readers saw different records at one offset"
	case NonmonotonicSend:
		if _, ok := c.loss(f.Partition, -1); ok {
			return Permitted, "committed data was lost and offsets reused"
		}
		if why, ok := c.lostHere(f.Partition, -1); ok {
			return Permitted, "acknowledged writes were lost and their offsets reused: " + why
		}
		p := c.producer(f.Process)
		if !p.Idempotence && p.MaxInFlight > 1 && p.Retries > 0 {
			return Permitted, "without idempotence, retries with max.in.flight.requests.per.connection > 1 can reorder a producer's writes"
		}
		return Violation, "a producer's writes to one partition land in the order they were sent"
	case PollSkip, IntPollSkip:
		// A reader may skip what was lost, never what is still in the log:
		// KIP-320's validation finds a truncation and goes back to it.
		if f.Offset < a.logStart[f.Partition] && !a.inFinalReads(f.Partition, f.Offset) {
			return Permitted, "retention deleted the record before the reader reached it; the reader's position fell below the log start and auto.offset.reset moved it on"
		}
		if c.consumer(f.Process).AutoOffsetReset == "latest" {
			return Permitted, "auto.offset.reset=latest moves a reader whose position fell out of range to the end, past records"
		}
		if a.inFinalReads(f.Partition, f.Offset) {
			return Violation, "the reader jumped over a record that is still in the log (final reads hold it)"
		}
		if _, ok := c.loss(f.Partition, -1); ok {
			return Permitted, "the skipped record was lost with committed data"
		}
		if why, ok := c.lostHere(f.Partition, -1); ok {
			return Permitted, "the skipped record was lost: " + why
		}
		return Violation, "a reader sees a partition's records in offset order, without gaps, until its position is reset"
	case NonmonotonicPoll, IntNonmonotonicPoll:
		if _, ok := c.loss(f.Partition, -1); ok {
			return Permitted, "the log was truncated under the reader after committed data was lost"
		}
		if why, ok := c.lostHere(f.Partition, -1); ok {
			return Permitted, "the log was truncated under the reader after acknowledged writes were lost: " + why
		}
		return Violation, "a reader sees a partition's records in offset order, without gaps, until its position is reset"
	case KeyOrder:
		for _, t := range c.PartitionsAdded {
			if t == topicOf(f.Partition) {
				return Permitted, "partitions were added: the default partitioner (murmur2 of the key modulo the partition count) moved the key to another partition, and Kafka orders records per partition only"
			}
		}
		return Violation, "the default partitioner sends a key to one partition while the partition count stays the same: one producer's records of a key are read in the order they were sent"
	case AbortedRead:
		return Violation, "a send that definitely failed must never be read"
	case PhantomRead:
		return Violation, "every record read must have been sent"
	}
	return Violation, "this anomaly breaks a Kafka guarantee"
}

// Summary lists the anomalies in a line each, for terminals.
func (r *Report) Summary() string {
	var b strings.Builder
	anoms := append([]Anomaly(nil), r.Anomalies...)
	sort.SliceStable(anoms, func(i, j int) bool { return anoms[i].Verdict == Violation && anoms[j].Verdict != Violation })
	for _, a := range anoms {
		fmt.Fprintf(&b, "%-22s %-9s %6d  %s\n", a.Type, a.Verdict, a.Count, a.Because)
		fmt.Fprintf(&b, "%-22s %-9s %6s  e.g. %s\n", "", "", "", a.Example)
	}
	return b.String()
}

// excuseCompacted drops lost-write findings for records the log cleaner was
// allowed to remove: in a compacted topic, a record whose key has a later
// record in the final reads is superseded, not lost.
func (c *Config) excuseCompacted(a *analysis) {
	compact := map[string]bool{}
	for _, t := range c.Topics {
		if t.Compact {
			compact[t.Name] = true
		}
	}
	if len(compact) == 0 {
		return
	}
	kept := a.findings[:0]
	for _, f := range a.findings {
		if f.Type == LostAckedWrite && compact[topicOf(f.Partition)] && a.supersededInFinal(f.Partition, f.Offset, f.Value) {
			a.stats.LostAcked--
			a.stats.Compacted++
			continue
		}
		kept = append(kept, f)
	}
	a.findings = kept
}
