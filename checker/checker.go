package checker

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"kafkasim/godview"
	"kafkasim/history"
)

// Config is what the configuration under test promises, and what happened to
// it: the checker's basis for telling a violated guarantee from a permitted
// cost. Zero values mean Kafka 4.2's defaults.
type Config struct {
	Producers []ProducerGuarantees
	Consumers []ConsumerGuarantees
	Topics    []TopicGuarantees
	// ELR is eligible.leader.replicas.enable.
	ELR bool
	// OffsetsTopicPartitions is offsets.topic.num.partitions: with it, only
	// a loss in the partition of __consumer_offsets that holds a group
	// (GroupCoordinatorService.partitionFor) explains that group's
	// anomalies. 0 (a history checked without its configuration): a loss
	// in any of its partitions may.
	OffsetsTopicPartitions int
	Bugs                   []string
	// Happened is what the simulator's god view saw happen that Kafka
	// permits to cost data or order (committed data lost, records held
	// back, batches a leader's producer state forgot, power losses, unclean
	// elections, partitions added: model/cluster's Facts), looked up by
	// kind. A history checked without a god view carries only what its
	// scenario's faults may do (power losses, partitions added), and the
	// zero List knows nothing.
	Happened godview.List

	// LinearizabilityBudget is the wall-clock time porcupine may take in
	// all, searching committed-offset registers and visualising failures
	// (0: DefaultLinearizabilityBudget). A register whose check runs out of
	// time is "unknown", never passed. (Partition logs are decided by the
	// direct check, which needs no budget.)
	LinearizabilityBudget time.Duration
	// LinearizabilityOpsMax skips the linearizability check of a
	// committed-offset register with more operations (0:
	// DefaultLinearizabilityOpsMax; < 0: no limit).
	LinearizabilityOpsMax int
	// VisualizeOpsMax bounds the operations of one porcupine visualisation
	// (0: DefaultVisualizeOpsMax).
	VisualizeOpsMax int
	// CrossCheckLogs has porcupine also search every partition's log the
	// direct check passed, within the budget, and name any it finds
	// illegal in LinearizabilityStats.Disagreed: the simulator's own tests
	// hold the direct check to porcupine on real histories with it.
	CrossCheckLogs bool
	// SkipLinearizability turns the linearizability checks off.
	SkipLinearizability bool
	// Sizes, when the history's size is known up front (a recorder's:
	// history.Recorder.Sizes), sizes the analysis's tables once. Optional:
	// only the time and memory a check takes depend on it.
	Sizes *history.Sizes

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
	// TransactionTimeout is transaction.timeout.ms (0: Kafka's default,
	// 60 s): how long the coordinator lets a transaction stay open.
	TransactionTimeout time.Duration
}

// Kafka's transaction.timeout.ms and
// transaction.abort.timed.out.transaction.cleanup.interval.ms defaults.
const (
	defaultTransactionTimeout = 60 * time.Second
	abortCheckInterval        = 10 * time.Second
)

func (p ProducerGuarantees) transactionTimeout() time.Duration {
	if p.TransactionTimeout > 0 {
		return p.TransactionTimeout
	}
	return defaultTransactionTimeout
}

// ConsumerGuarantees are one consumer group's settings.
type ConsumerGuarantees struct {
	Prefix          string
	Isolation       string // isolation.level
	AutoOffsetReset string // auto.offset.reset
	// Commit is the scenario's commit mode: before-processing
	// (at-most-once), after-processing (at-least-once), auto
	// (enable.auto.commit, Kafka's default), or transactional (exactly-once,
	// sendOffsetsToTransaction).
	Commit string
	// Group is the consumer group (group.id) these settings are for: a
	// finding about a group (double-owner, zombie-commit, skipped-record,
	// reprocessed-record, duplicate-side-effect, nonmonotonic-commit) is
	// judged by the entry naming its group, else by the entry whose Prefix
	// matches the process involved (consumerOf).
	Group string
	// SideEffects is how the group's external store applies effects: plain
	// (every effect applied; the default) or idempotent (one effect kept
	// per key: duplicate-side-effect is never reported).
	SideEffects string
	// GroupProtocol is group.protocol: classic (Kafka's default) or
	// consumer (KIP-848). It decides whether a generation is the group's
	// (classic: every member shares it) or each member's own epoch.
	GroupProtocol string
}

// TopicGuarantees are a topic's durability settings.
type TopicGuarantees struct {
	Name              string
	ReplicationFactor int
	MinInsyncReplicas int
	Unclean           bool
	// SetsMinInsyncReplicas and SetsUnclean: the topic sets the config
	// itself, so a cluster-wide alteration does not reach it.
	SetsMinInsyncReplicas, SetsUnclean bool
	// FlushEveryMessage is flush.messages (log.flush.interval.messages) 1.
	FlushEveryMessage bool
	// Compact is cleanup.policy=compact: the log cleaner removes records
	// superseded by a later record with the same key.
	Compact bool
}

// DataLoss is committed data lost the way Kafka permits, seen by the
// simulator's god view: a fact of kind godview.Loss. At (0: unknown) tells
// a write acknowledged after it, which it did not take; LeaderEnd (0:
// unknown), of a loss at an election, says where the new leader's older
// epochs' records replaced committed ones below the end offset KIP-320
// validation reports: a reader that read the lost records goes on past them.
type DataLoss = godview.Fact

// Report is the checker's result.
type Report struct {
	Stats     Stats     `json:"stats"`
	Anomalies []Anomaly `json:"anomalies"`
	// Violations is the number of findings whose verdict is violation.
	Violations int `json:"violations"`
	// Assumed lists what the checker assumed because the configuration did
	// not say (Kafka 4.2's defaults), one line per assumption.
	Assumed []string `json:"assumed,omitempty"`
	// Linearizability says which partitions and committed offsets were
	// checked with porcupine, which were skipped and why, and which timed out.
	Linearizability LinearizabilityStats `json:"linearizability"`
	// Visualizations are porcupine's HTML pages for the partitions (and
	// committed-offset registers) that are not linearizable.
	Visualizations []Visualization `json:"-"`
}

// Visualization is porcupine's self-contained HTML page for one partition
// ("orders-2") or committed-offset register ("billing/orders-2").
type Visualization struct {
	Partition string
	HTML      []byte
}

// Count returns how many findings of a type the report holds.
func (r *Report) Count(typ string) int {
	n := 0
	for _, a := range r.Anomalies {
		if a.Type == typ {
			n += a.Count
		}
	}
	return n
}

// CountOf returns how many findings of a type a process of client took
// part in: the process named client, or an instance of the client entry
// named client ("<client>-<i>"). A read finding counts for every reader
// of its record (at its isolation level), not only its example's.
func (r *Report) CountOf(typ, client string) int {
	n := 0
	for _, a := range r.Anomalies {
		if a.Type != typ {
			continue
		}
		for _, procs := range a.procs {
			if slices.ContainsFunc(procs, func(p string) bool { return InstanceOf(p, client) }) {
				n++
			}
		}
	}
	return n
}

// InstanceOf reports whether process is client or an instance of the
// client entry named client ("<client>-<i>").
func InstanceOf(process, client string) bool {
	if process == client {
		return true
	}
	i, ok := strings.CutPrefix(process, client+"-")
	if !ok || i == "" {
		return false
	}
	for _, c := range i {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Anomaly returns the anomaly of a type, if any (the first verdict group:
// violations come before permitted ones).
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
	a := newAnalyzer(&cfg)
	for i := range ops {
		a.add(&ops[i])
	}
	return cfg.report(a)
}

// CheckEach analyses the operations each passes, in order (a
// history.Recorder's Each): the analysis keeps none of the *Op it is given,
// so the caller may reuse one for every operation.
func CheckEach(each func(func(*history.Op)), cfg Config) *Report {
	a := newAnalyzer(&cfg)
	each(a.add)
	return cfg.report(a)
}

// CheckReader decodes a history (docs/history.md's JSON Lines) and analyses it as
// it goes, holding neither the raw JSON nor the decoded operations: only the
// analysis's compact facts. A malformed line is a *history.ParseError.
func CheckReader(r io.Reader, cfg Config) (*Report, error) {
	a := newAnalyzer(&cfg)
	d := history.NewDecoder(r)
	for {
		op, err := d.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		a.add(&op)
	}
	return cfg.report(a), nil
}

func (c *Config) report(a *analyzer) *Report {
	a.finish()
	c.excuseCompacted(a)
	lin := c.checkLinearizability(a)
	rep := &Report{Stats: a.stats, Assumed: c.assumed(a), Linearizability: lin.stats, Visualizations: lin.vis}
	rep.Stats.Ops = a.nOps
	groups := group(a.findings)
	// Permitted losses first: other anomalies that follow from them (an
	// offset reused after its record was lost) share their verdict.
	c.permittedLoss = map[string][]int64{}
	for _, f := range groups[LostAckedWrite] {
		if v, why := decide(LostAckedWrite, c.facts(LostAckedWrite, f, a)); v == Permitted {
			c.permittedLoss[f.Partition] = append(c.permittedLoss[f.Partition], f.Offset)
			if c.lossWhy == nil {
				c.lossWhy = map[string]string{}
			}
			if _, ok := c.lossWhy[f.Partition]; !ok {
				c.lossWhy[f.Partition] = why
			}
		}
	}
	// What each partition's findings about its log say, for its
	// linearizability verdict (nonlinearizable comes last in AnomalyTypes).
	type related struct{ verdict, typ, why string }
	rel := map[string]related{}
	verdictOf := func(typ string, f Finding) (string, string) {
		fx := c.facts(typ, f, a)
		if typ == Nonlinearizable && !f.register {
			if r, ok := rel[f.Partition]; ok {
				fx.Related, fx.RelatedType, fx.RelatedWhy = r.verdict, r.typ, r.why
			}
			fx.Acks = lin.weakestAcks(c, a, f.Partition)
		}
		return decide(typ, fx)
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
			v, why := verdictOf(typ, f)
			if logAnomaly[typ] && f.Partition != "" {
				if r, ok := rel[f.Partition]; !ok || (r.verdict == Permitted && v == Violation) {
					rel[f.Partition] = related{v, typ, why}
				}
			}
			key := v + "\x00" + why
			if _, ok := byVerdict[key]; !ok {
				order = append(order, key)
				reasons[key] = why
			}
			byVerdict[key] = append(byVerdict[key], f)
		}
		// Violations first.
		sort.SliceStable(order, func(i, j int) bool {
			return strings.HasPrefix(order[i], Violation+"\x00") && !strings.HasPrefix(order[j], Violation+"\x00")
		})
		for _, key := range order {
			v := strings.SplitN(key, "\x00", 2)[0]
			group := byVerdict[key]
			an := Anomaly{Type: typ, Verdict: v, Count: len(group), Because: reasons[key], Example: group[0].Example}
			for i, f := range group {
				if i < ExamplesMax {
					an.Examples = append(an.Examples, f.Example)
				}
				an.procs = append(an.procs, append([]string{f.Process}, f.others...))
			}
			if v == Violation {
				rep.Violations += len(group)
			}
			rep.Anomalies = append(rep.Anomalies, an)
		}
	}
	return rep
}

// logAnomaly marks the anomalies that can make a partition's log fail
// linearizability.
var logAnomaly = map[string]bool{LostAckedWrite: true, Duplicate: true, InconsistentOffsets: true, NonmonotonicSend: true,
	PollSkip: true, IntPollSkip: true, NonmonotonicPoll: true, IntNonmonotonicPoll: true, AbortedRead: true, PhantomRead: true}

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
	best := ConsumerGuarantees{Isolation: "read_uncommitted", AutoOffsetReset: "earliest", Commit: "auto"}
	bestLen := -1
	for _, g := range c.Consumers {
		if (process == g.Prefix || strings.HasPrefix(process, g.Prefix+"-")) && len(g.Prefix) > bestLen {
			best, bestLen = g, len(g.Prefix)
		}
	}
	if best.Isolation == "" {
		best.Isolation = "read_uncommitted"
	}
	if best.AutoOffsetReset == "" {
		best.AutoOffsetReset = "earliest"
	}
	if best.Commit == "" {
		best.Commit = "auto"
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

// lossAfter is loss for a write acknowledged at ackedAt: the first loss at
// or after the acknowledgement that reaches the offset (an earlier one did
// not take it), or loss's answer when times are unknown.
func (c *Config) lossAfter(partition string, offset, ackedAt int64) (DataLoss, bool) {
	if ackedAt > 0 {
		if l, ok := c.Happened.First(godview.Loss, func(l *DataLoss) bool {
			return l.Partition == partition && offset >= l.From && l.At > 0 && l.At >= ackedAt
		}); ok {
			return l, true
		}
	}
	return c.loss(partition, offset)
}

// loss finds a permitted loss covering partition at offset (offset < 0: any
// offset of the partition).
func (c *Config) loss(partition string, offset int64) (DataLoss, bool) {
	// Offsets at or after a loss's start may have been lost with it (the
	// god view records what was committed when the loss happened).
	return c.Happened.First(godview.Loss, func(l *DataLoss) bool {
		return l.Partition == partition && (offset < 0 || offset >= l.From)
	})
}

// mistakenDuplicate finds the __transaction_state loss behind a write a
// leader acknowledged at offset of partition as a duplicate of a different
// batch there (god view: MistakenDuplicate): a loss before the answer, which
// let the coordinator hand the producer id and epoch out again. Without
// such a loss the two batches sharing an id, epoch and sequences is no
// cost Kafka permits.
func (c *Config) mistakenDuplicate(partition string, offset int64) (DataLoss, bool) {
	d, ok := c.Happened.First(godview.MistakenDuplicate, func(d *godview.Fact) bool { return d.Covers(partition, offset) })
	if !ok {
		return DataLoss{}, false
	}
	return c.Happened.First(godview.Loss, func(l *DataLoss) bool {
		return strings.HasPrefix(l.Partition, "__transaction_state-") && l.At <= d.At
	})
}

// replacedUnderReader reports whether an election put a leader's
// older-epoch record at offset where committed data stood: in one step (a
// loss whose new leader's log already reached past offset), or in two (a
// loss at offset, then a later unclean election whose leader's log made an
// older-epoch entry there the log although it was never committed: god
// view Resurrected). Either way the leader's epoch cache ends that older
// epoch past offset, so KIP-320 validation of a reader that read the lost
// record truncates it at most to there, not below offset.
func (c *Config) replacedUnderReader(partition string, offset int64) bool {
	_, ok := c.Happened.First(godview.Loss, func(l *DataLoss) bool {
		if l.Partition != partition || offset < l.From {
			return false
		}
		if offset < l.LeaderEnd {
			return true
		}
		if offset >= l.To {
			return false
		}
		_, later := c.Happened.First(godview.Resurrected, func(r *godview.Fact) bool {
			return r.Covers(partition, offset) && r.At >= l.At
		})
		return later
	})
	return ok
}

// lostThenResurrected reports whether the god view saw an unclean election
// lose the record at offset of partition and a later unclean election make
// a log holding it there the log again after it was first read (first) and
// no later than it was read again (second): a member that read it, was
// moved back below it by KIP-320 validation against the first election's
// leader, and then fetched from the second's (whose epoch cache ends the
// record's older epoch past the position, so validation moves it no
// further) reads the same record at its offset again. The first read may
// follow the loss: a poll hands out what an earlier fetch from the deposed
// leader buffered until the consumer learns of the new leader (fuzz seed
// 47702: fetched 0.1 s before the loss, polled 0.8 s after it). A time
// unknown (0 or less), a read's or a fact's, constrains nothing.
func (c *Config) lostThenResurrected(partition string, offset, first, second int64) bool {
	_, ok := c.Happened.First(godview.Loss, func(l *DataLoss) bool {
		if !l.Covers(partition, offset) {
			return false
		}
		_, back := c.Happened.First(godview.Resurrected, func(r *godview.Fact) bool {
			if !r.Covers(partition, offset) || r.At <= 0 {
				return r.Covers(partition, offset)
			}
			return (l.At <= 0 || r.At >= l.At) && (first <= 0 || first < r.At) && (second <= 0 || r.At <= second)
		})
		return back
	})
	return ok
}

// readFromDeposedLeader reports whether reader proc took what it read at
// offset of partition from a deposed leader's answer to a fetch it had sent
// before it learned of the new leader (god view).
func (c *Config) readFromDeposedLeader(partition string, offset int64, proc string) bool {
	_, ok := c.Happened.First(godview.StaleLeaderRead, func(f *DataLoss) bool {
		return f.Process == proc && f.Covers(partition, offset)
	})
	return ok
}

// resetPastOutOfRange reports whether reader proc's position of partition
// was reset past offset after the leader it fetched from answered
// OFFSET_OUT_OF_RANGE there (god view): that leader's retention had deleted
// the offset, whatever another replica still held.
func (c *Config) resetPastOutOfRange(partition string, offset int64, proc string) bool {
	_, ok := c.Happened.First(godview.OutOfRangeReset, func(f *DataLoss) bool {
		return f.Process == proc && f.Covers(partition, offset)
	})
	return ok
}

// rewoundOutOfRange reports whether reader proc's position of partition was
// moved back after it read offset prev and before the poll that completed
// at before read offset next: the leader it fetched from answered
// OFFSET_OUT_OF_RANGE at a position past prev, and auto.offset.reset moved
// it to a log start at or below next (god view: out-of-range-rewind), the
// poll that read prev having completed by after. A time unknown (0 or
// less) constrains nothing.
func (c *Config) rewoundOutOfRange(partition, proc string, prev, next, after, before int64) bool {
	_, ok := c.Happened.First(godview.OutOfRangeRewind, func(f *DataLoss) bool {
		if f.Process != proc || f.Partition != partition || f.From > next || f.To <= prev {
			return false
		}
		return f.At <= 0 || ((after <= 0 || after <= f.At) && (before <= 0 || f.At <= before))
	})
	return ok
}

// Notes lists what a reader of the report should know besides its
// anomalies: the defaults the checker assumed, and what the linearizability
// checks could not decide.
func (r *Report) Notes() []string {
	out := append([]string(nil), r.Assumed...)
	l := r.Linearizability
	switch {
	case l.Disabled:
		out = append(out, "linearizability: not checked")
	case l.Note != "":
		out = append(out, "linearizability: "+strconv.Itoa(l.Checked)+" linearizable; "+l.Note)
	}
	return out
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
// record in the final reads is superseded, not lost; so is one whose key has
// a later committed record that is itself missing from the final reads (see
// supersededByLost).
func (c *Config) excuseCompacted(a *analyzer) {
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
		if f.Type == LostAckedWrite && compact[topicOf(f.Partition)] &&
			(a.supersededInFinal(f.Partition, f.Offset, f.Value) || c.supersededByLost(a, f.Partition, f.Offset, f.Value)) &&
			!a.reusedOffset(f.Partition, f.Offset, f.Value) {
			a.stats.LostAcked--
			a.stats.Compacted++
			continue
		}
		kept = append(kept, f)
	}
	a.findings = kept
}

// supersededByLost reports whether a committed record with the same key as
// the send of value stood after offset and is missing from the final reads
// itself: committed because a poll read it (polls read below the high
// watermark) or because the god view saw committed data lost where it was
// acknowledged. Kafka's cleaner removes a record once a later one of its key
// is below the high watermark; when that later record is lost afterwards (a
// corrupt batch cut at recovery, an unclean election), the older one is gone
// with it, on the replica whose cleaner ran. The later record's loss is
// judged on its own: a violation there still fails the run. A record whose
// own offset is unknown (acks=0, never read), or inside a loss the god view
// saw, is judged as lost: that loss, or acks=0, explains it.
func (c *Config) supersededByLost(a *analyzer, partition string, offset int64, value string) bool {
	vi, ok := a.valIDs.get(value)
	pi := a.partByName(partition)
	if !ok || pi < 0 || a.valSend[vi] < 0 || offset < 0 || c.Happened.Covers(godview.Loss, partition, offset) {
		return false
	}
	key := a.sends[a.valSend[vi]].key
	if key < 0 {
		return false
	}
	po := a.parts[pi]
	for ob := range po.after(offset) {
		later := a.valSend[ob.val]
		if ob.val == vi || later < 0 || a.sends[later].key != key || a.valFlags[ob.val]&obsFinal != 0 {
			continue
		}
		if a.obsFlags(ob)&obsRead != 0 || c.Happened.Covers(godview.Loss, partition, ob.off) {
			return true
		}
	}
	return false
}

// Stats summarise a history (summary.json's writes and reads).
type Stats struct {
	Attempted int `json:"attempted"`
	Acked     int `json:"acked"`
	Failed    int `json:"failed"`
	// Aborted counts the sends of transactions their producer aborted
	// (TxnAborted's): the application took them back, no write failed.
	// They are not in Failed, and not in Availability's denominator.
	Aborted       int     `json:"aborted,omitempty"`
	Indeterminate int     `json:"indeterminate"`
	LostAcked     int     `json:"lost_acked"`
	Availability  float64 `json:"availability"`
	Polls         int     `json:"polls"`
	Records       int     `json:"records"`
	Duplicates    int     `json:"duplicates"`
	// Deleted counts acknowledged records below the log start final reads
	// began from: retention deleted them (an extension).
	Deleted int `json:"deleted_by_retention"`
	// Compacted counts acknowledged records of compacted topics that a
	// later record with the same key superseded (an extension).
	Compacted int `json:"compacted"`
	// Ops is the number of operations in the history.
	Ops int64 `json:"ops"`
	// Transactions by outcome (see txn.go), and offset commits invoked.
	TxnCommitted      int `json:"txn_committed,omitempty"`
	TxnAborted        int `json:"txn_aborted,omitempty"`
	TxnIndeterminate  int `json:"txn_indeterminate,omitempty"`
	TxnNeverCommitted int `json:"txn_never_committed,omitempty"`
	Commits           int `json:"commits,omitempty"`
}

// assumed lists the Kafka defaults the checker judged by because the
// configuration did not cover a process or topic of the history.
func (c *Config) assumed(a *analyzer) []string {
	var out []string
	prodAssumed, consAssumed := map[string]bool{}, map[string]bool{}
	matches := func(process, prefix string) bool {
		return process == prefix || strings.HasPrefix(process, prefix+"-")
	}
	for i := range a.sends {
		name := a.procs[a.sends[i].proc].name
		if prodAssumed[name] {
			continue
		}
		found := false
		for _, p := range c.Producers {
			found = found || matches(name, p.Prefix)
		}
		if !found {
			prodAssumed[name] = true
		}
	}
	for _, s := range a.sessions {
		name := a.procs[s.proc].name
		if consAssumed[name] {
			continue
		}
		found := false
		for _, g := range c.Consumers {
			found = found || matches(name, g.Prefix)
		}
		if !found {
			consAssumed[name] = true
		}
	}
	topicAssumed := map[string]bool{}
	for _, name := range a.topics {
		if strings.HasPrefix(name, "__") {
			continue
		}
		found := false
		for _, t := range c.Topics {
			found = found || t.Name == name
		}
		if !found {
			topicAssumed[name] = true
		}
	}
	list := func(m map[string]bool) string {
		names := make([]string, 0, len(m))
		for n := range m { // kafkasim:orderless: sorted below
			names = append(names, n)
		}
		sort.Strings(names)
		return strings.Join(capList(names, 8), ", ")
	}
	if len(prodAssumed) > 0 {
		out = append(out, "producers "+list(prodAssumed)+": not configured; Kafka defaults assumed: acks=all, enable.idempotence=true, max.in.flight.requests.per.connection=5, retries=2147483647")
	}
	if len(consAssumed) > 0 {
		out = append(out, "consumers "+list(consAssumed)+": not configured; assumed isolation.level=read_uncommitted (Kafka's default; a poll's own isolation field wins), enable.auto.commit=true (at-least-once), and auto.offset.reset=earliest (Kafka's default is latest, which would excuse every skip)")
	}
	if s := c.groupsAssumed(a); s != "" {
		out = append(out, s)
	}
	if s := c.modesLearned(a); s != "" {
		out = append(out, s)
	}
	if len(topicAssumed) > 0 {
		out = append(out, "topics "+list(topicAssumed)+": not configured; Kafka defaults assumed: min.insync.replicas=1, unclean.leader.election.enable=false, flush left to the OS (log.flush.interval.messages=9223372036854775807)")
	}
	if !c.Happened.GodView() && a.stats.Attempted > 0 {
		if c.Happened.Count(godview.PowerLoss) > 0 {
			out = append(out, "no god view: the scenario's faults may lose brokers' page cache, so with the default flush policy every lost or rewritten record is taken for a permitted power loss; losses Kafka permits only after unclean elections count as violations unless the configuration permits them anyway")
		} else {
			out = append(out, "no god view: losses Kafka permits only after unclean elections or power loss count as violations unless the configuration permits them anyway")
		}
	}
	return out
}
