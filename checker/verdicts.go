package checker

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"kafkasim/godview"
	"kafkasim/internal/kafkahash"
)

// The verdict table: for each anomaly type, in order, the conditions under
// which the configuration permits it and those under which it breaks a
// guarantee. The first rule whose condition holds decides. VERDICTS.md is
// this table rendered (VerdictsMarkdown; a test keeps the two in step).

// Facts are what one finding's verdict depends on: what the configuration
// promises for the processes, topic and group involved, and what happened
// in the run.
type Facts struct {
	// Producer (of the record involved).
	Acks              string // "all", "1", "0"
	Idempotence       bool
	ReorderingRetries bool // retries > 0 and max.in.flight.requests.per.connection > 1
	// Topic.
	MinInsyncReplicas int
	Unclean           bool // unclean.leader.election.enable
	ELR               bool // eligible.leader.replicas.enable
	FlushEveryMessage bool // flush.messages=1
	PartitionsAdded   bool
	// Consumer.
	Isolation       string // of the reads involved
	AutoOffsetReset string
	CommitMode      string // before-processing, after-processing, auto, transactional
	SideEffects     string // plain, idempotent ("" : none configured)
	// What happened (the simulator's god view, when there is one).
	GodView          bool // the configuration carries the simulator's record of losses
	Loss             *DataLoss
	LostHere         string // an acknowledged write lost in this partition was permitted: why
	UncleanElections int
	// UncleanRequested: an operator asked for an unclean election of the
	// partition (ElectLeaders, KIP-460; an elect-leaders fault).
	UncleanRequested bool
	PowerLosses      int
	OffsetsLost      *DataLoss // a loss in __consumer_offsets
	Bugs             []string
	// The finding's own evidence.
	ReadByPoll bool // a poll read the record: it was committed
	ReadValues int  // distinct records polls saw at its offset
	// AckedCopyLost is the acks setting of the producer of a record
	// acknowledged at the offset that neither polls nor final reads hold
	// there ("" when there is none).
	AckedCopyLost string
	BelowLogStart bool // below the log start final reads began from
	InFinalReads  bool // final reads hold a record at its offset
	FailedSend    bool // aborted-read of a send that itself failed
	SentTwice     bool // duplicate: the history sends one value twice
	Impossible    bool // a cycle that orders events against real time
	ViaWW         bool // a cycle with ww edges
	Register      bool // nonlinearizable: a committed-offset register, not a log
	// CopiesLost: a duplicate whose copies but one lie where the god view
	// saw committed data lost (Loss), and final reads do not hold them.
	CopiesLost bool
	// Forgotten: a duplicate one of whose copies is a committed batch whose
	// retry a leader answered OUT_OF_ORDER_SEQUENCE_NUMBER (god view): its
	// producer state, rebuilt at a restart, no longer held it.
	Forgotten bool
	// ForgottenProducer: a duplicate one of whose copies is a committed
	// batch whose retry a leader took as new (god view): retention had
	// deleted it, and the leader's producer state no longer knew its
	// producer.
	ForgottenProducer bool
	// UnknownProducer: a nonmonotonic-send whose record that landed first
	// (the later send's) a leader appended, at a sequence other than 0, from
	// a producer its producer state held nothing of (god view).
	UnknownProducer bool
	// OffsetPassedFirst: a nonatomic-output whose group's offset had
	// already passed the input before its output's transaction committed.
	OffsetPassedFirst bool
	// InputLostHeld: a nonatomic-output whose transaction committed the
	// input partition's offset at or below the input: a loss the god view
	// saw at the input's offset after the processor held the input record
	// and no later than the transaction's commit began. The processor held
	// it from its fetch, which may precede the poll that returned it: a
	// loss that took the very record it processed (lossTakingRead) came
	// after that fetch.
	InputLostHeld *DataLoss
	// FirstOfProducer: a nonmonotonic-send whose record that landed first
	// has no record of its producer, acknowledged or read, below it.
	FirstOfProducer bool
	// ResentForgotten: a nonmonotonic-send whose earlier-sent record was
	// written in send order, at a committed batch a leader's producer state
	// forgot (god view), and written again after the later record.
	ResentForgotten bool
	// Resurrected: a duplicate one of whose copies is an entry an unclean
	// election made the log although it was never committed.
	Resurrected bool
	// LostThenResurrected: a record processed again (reprocessed-record),
	// whose effect a store applied again (duplicate-side-effect), or whose
	// outputs are several (duplicate-output), whose offset the god view saw
	// an unclean election lose and a later unclean election make the log
	// again.
	LostThenResurrected bool
	// ReadLostHere: poll-skip where the reader read another record at the
	// offset, and the god view saw the committed data there lost at an
	// election whose new leader already held the skipped record, or lost
	// and then made the log again by a later unclean election's leader
	// holding it from an older epoch (Resurrected).
	ReadLostHere bool
	// ReadStaleLeader: poll-skip where the reader read another record at
	// the offset, one it took from a deposed leader's answer to a fetch sent
	// before it knew the new leader (god view: StaleLeaderRead).
	ReadStaleLeader bool
	// CommitUndone: poll-skip by a read_committed reader over a record
	// whose transaction's commit was acknowledged, where the god view saw
	// __transaction_state lose committed data (this loss) after the
	// acknowledgement and no later than the skip, before any
	// read_committed poll returned the record.
	CommitUndone *DataLoss
	// OutOfRangeReset: poll-skip over an offset that the leader the reader
	// fetched from had deleted: it answered OFFSET_OUT_OF_RANGE at the
	// reader's position, and auto.offset.reset moved the position past the
	// offset (god view: out-of-range-reset).
	OutOfRangeReset bool
	// OutOfRangeRewind: nonmonotonic-poll where, between the two polls,
	// the leader the reader fetched from answered OFFSET_OUT_OF_RANGE at
	// its position and auto.offset.reset moved the position back to a log
	// start at or below the later offset (god view: out-of-range-rewind).
	OutOfRangeRewind bool
	// LostAfterSkip: poll-skip over an offset whose committed data the god
	// view saw lost after the jump, at an election whose new leader's log
	// did not reach the offset, where no record final reads hold was seen
	// (acknowledged or read) before the loss: what the reader passed over
	// went with the loss, what stands there now was appended after it.
	LostAfterSkip *DataLoss
	// Related is the partition's other findings' strongest verdict (for
	// nonlinearizable), RelatedType and RelatedWhy the finding behind it.
	Related, RelatedType, RelatedWhy string
	// CommittedAttempts: of a reprocessed record's attempts, those not in a
	// transaction that aborted (exactly-once lets aborted attempts repeat).
	CommittedAttempts int
	// InputLost: duplicate-output, lost-output: a loss the god view saw at
	// the input record's offset (the offset may name two records).
	InputLost *DataLoss
	// OutputLost: lost-output: a loss the god view saw where an output
	// record of the input was written; OutputLostHere: acknowledged writes
	// to that partition were permitted losses, and why.
	OutputLost     *DataLoss
	OutputLostHere string
	// TxnStateLost: a loss the god view saw in __transaction_state (the
	// coordinator reloads transactional ids from what it still holds).
	TxnStateLost *DataLoss
	// HangingSeen: hanging-transaction: the god view saw the partition's
	// last stable offset held there, when the run ended, by a transaction
	// its coordinator no longer held open (godview.HangingTransaction).
	HangingSeen bool
	// MarkerLost: hanging-transaction: that fact, when the god view saw a
	// loss Kafka permits take the committed marker its coordinator had
	// written to the partition (its Cause and ExposedBy are the loss's).
	MarkerLost *godview.Fact
	// TxnResolved: hanging-transaction: the transaction's commit or abort
	// completed ok. TxnTimeoutPending: it did not, and the final reads
	// began less than transaction.timeout.ms plus the coordinator's abort
	// interval after its last operation.
	TxnResolved, TxnTimeoutPending bool
	// MistakenDuplicate: the write acknowledged at the finding's offset was
	// answered by a leader as a duplicate of the different batch there
	// (god view), after __transaction_state lost committed data (this
	// loss): the coordinator had handed its producer id and epoch out
	// again.
	MistakenDuplicate *DataLoss
	// OffsetsLostBetween: a loss in __consumer_offsets the god view saw
	// between the finding's operations — after the earlier commit (or
	// processing) began and before the later one ended.
	OffsetsLostBetween *DataLoss
}

// offsetsLostBecause is why a committed offset that goes back, and the
// records processed again behind it, are no violation once __consumer_offsets
// lost committed data in between: the coordinator reloads the group from
// what its partition still holds (GroupMetadataManager replays the log), so
// the later commits are gone, and a member that fetches the committed
// offsets (OffsetFetch) starts from an older one, or from auto.offset.reset
// with none left, and processes and commits again what the group had.
const offsetsLostBecause = "__consumer_offsets lost committed data (CAUSE) in between: the coordinator reloaded the group without the later commits, so a member started again from an older committed offset (or auto.offset.reset) and processed and committed again what the group had"

func offsetsLostWhy(f *Facts) string {
	return strings.Replace(offsetsLostBecause, "CAUSE", f.OffsetsLostBetween.Cause, 1)
}

// markerLostBecause is why a hanging transaction whose marker a loss took
// is no violation: nothing in Kafka writes a completed transaction's
// markers again or compares a partition's producer state with its
// coordinator's.
const markerLostBecause = "the partition lost committed data (CAUSE) that held the transaction's COMMIT or ABORT marker: its coordinator had written the markers and completed the transaction, so it never sends them again (TransactionMarkerChannelManager), and the partition's producer state, rebuilt from a log without the marker, holds the transaction open for good (KAFKA-20716: an unclean election can remove a transaction's marker; an operator aborts it: kafka-transactions.sh find-hanging, abort, KIP-664)"

func markerLostWhy(f *Facts) string {
	cause := f.MarkerLost.Cause
	if f.MarkerLost.ExposedBy != "" {
		cause += ", exposed by " + f.MarkerLost.ExposedBy
	}
	return strings.NewReplacer("the partition", f.MarkerLost.Partition, "CAUSE", cause).Replace(markerLostBecause)
}

// mistakenDuplicateBecause is why a transactional write may be acknowledged
// at an offset that holds another record, and never be written.
const mistakenDuplicateBecause = "__transaction_state lost committed data (CAUSE): the coordinator reloaded the transactional id behind epochs it had already handed out and handed the same producer id and epoch out again; a partition leader, whose producer state compares sequences only (ProducerStateEntry.findDuplicateBatch), took the new producer's batch for a retry of the earlier producer's batch with the same sequences and acknowledged it with that batch's offsets, appending nothing"

func mistakenDuplicateWhy(f *Facts) string {
	return strings.Replace(mistakenDuplicateBecause, "CAUSE", f.MistakenDuplicate.Cause, 1)
}

// commitUndoneBecause is why a read_committed reader may pass over a record
// of a transaction whose commit was acknowledged.
const commitUndoneBecause = "__transaction_state lost committed data (CAUSE) after the transaction's commit was acknowledged and before its markers reached the partition: the coordinator reloaded the transactional id from what it still held, where the transaction was still Ongoing (its PrepareCommit lost), and aborted it (an ABORT marker, TransactionCoordinator on InitProducerId or its timeout); read_committed readers pass over its records, which stay in the log"

// unknownProducerReorder is why an idempotent producer's earlier batch may
// land after a later one that a leader holding no state for the producer
// appended.
const unknownProducerReorder = "Kafka 4.2's broker takes a batch from a producer it holds no state for at any sequence (ProducerAppendInfo.checkSequence, KIP-360; KAFKA-15591), so an earlier batch of the producer, in flight beside it and refused without being appended (NOT_ENOUGH_REPLICAS, NOT_LEADER_OR_FOLLOWER), is out of order from then on and can be written only after it, once a producer epoch bump restarts its sequences"

// Rule is one row of the verdict table.
type Rule struct {
	Anomaly string
	// When is the condition, in words ("" for "otherwise").
	When    string
	Verdict string
	// Because is the reason, in Kafka's words; Why, when set, words it with
	// the configuration's values.
	Because string
	If      func(f *Facts) bool
	Why     func(f *Facts) string
}

func lossCause(f *Facts) string {
	if f.Loss != nil {
		return f.Loss.Cause
	}
	return ""
}

// thenPlaceholder stands, in a rule's Because, for what the controller did
// after a loss whose root cause came first (then).
const thenPlaceholder = "[; THEN]"

// then words the election that exposed a loss whose root cause (a power
// loss, a disk fault) had already taken every in-sync copy: "" when no
// election did.
func then(f *Facts) string {
	if f.Loss == nil || f.Loss.ExposedBy != "unclean-election" {
		return ""
	}
	switch {
	case f.UncleanRequested:
		return "; with no in-sync copy left, an operator's unclean ElectLeaders (KIP-460) then had a replica outside the ISR elected, which could not bring them back"
	case f.Unclean && f.ELR:
		return "; with no in-sync copy left, the controller then elected the last known leader (KIP-966 balanced recovery) or, as unclean.leader.election.enable=true allows, a replica outside the ISR, which could not bring them back"
	case f.Unclean:
		return "; with no in-sync copy left, the controller then elected a replica outside the ISR (unclean.leader.election.enable=true), which could not bring them back"
	}
	return "; with no ISR or ELR member left, Kafka then elected the last known leader (KIP-966 balanced recovery), which could not bring them back"
}

// Guarantee is what one configuration setting promises, and the anomalies
// that break the promise.
type Guarantee struct {
	Setting   string
	Promises  string
	Anomalies []string
}

// Guarantees is what each configuration promises (Kafka 4.2), the basis of
// VerdictRules.
var Guarantees = []Guarantee{
	{"acks=all, min.insync.replicas=N", "a write is acknowledged once every in-sync replica has it, and only while at least N are in sync: it survives while any of them survives (unless an unclean election or a power loss takes it)", []string{LostAckedWrite, Nonlinearizable}},
	{"acks=1", "a write is acknowledged once the leader has it: a leader that fails before its followers copy the write loses it", []string{LostAckedWrite}},
	{"acks=0", "nothing: the producer does not wait for an acknowledgement", []string{LostAckedWrite}},
	{"enable.idempotence=true (Kafka's default)", "each record is written once and a producer's records land in a partition in the order they were sent, across retries", []string{Duplicate, NonmonotonicSend}},
	{"enable.idempotence=false", "retries may write a batch twice; with max.in.flight.requests.per.connection > 1 they may reorder batches", []string{Duplicate, NonmonotonicSend}},
	{"unclean.leader.election.enable=false (default)", "only an in-sync (or, with ELR, eligible) replica becomes leader: committed data is kept", []string{LostAckedWrite, InconsistentOffsets}},
	{"unclean.leader.election.enable=true", "availability first: an out-of-sync replica may lead, losing committed data", []string{LostAckedWrite, InconsistentOffsets}},
	{"eligible.leader.replicas.enable=true (KIP-966)", "replicas that left the ISR while the high watermark could not advance stay eligible to lead cleanly; when every ISR and ELR member is lost, Kafka elects the last known leader, which may lack committed data", []string{LostAckedWrite}},
	{"flush.messages=1", "every acknowledged write is on disk (fsync) before the acknowledgement: it survives power loss", []string{LostAckedWrite}},
	{"default flush policy (log.flush.interval.messages=Long.MAX_VALUE)", "the OS writes the page cache back: a power loss of every replica holding an acknowledged write loses it", []string{LostAckedWrite}},
	{"any configuration", "an offset names one record forever; a reader sees a partition's records in offset order without gaps until its position is reset (KIP-320 validates it after leader changes); every record read was sent; a key stays in one partition while the partition count stays the same", []string{InconsistentOffsets, PollSkip, NonmonotonicPoll, PhantomRead, KeyOrder}},
	{"auto.offset.reset=latest", "a reader whose position falls out of range jumps to the end, past records", []string{PollSkip}},
	{"retention (retention.ms / retention.bytes)", "records below the log start are deleted; a reader that falls behind them skips them", []string{PollSkip, LostAckedWrite}},
	{"cleanup.policy=compact", "a record superseded by a later one with the same key may be removed", []string{LostAckedWrite}},
	{"transactions (transactional.id)", "a transaction's records and offsets commit or abort together (atomic); transactions are not isolated from each other: records are ordered when appended, not when committed", []string{LostAckedWrite, G0, G1c}},
	{"isolation.level=read_committed", "a poll returns only committed transactions' records (it stops at the last stable offset and filters aborted records), never before their commit", []string{AbortedRead, UncommittedRead, PrecommittedRead, G1c}},
	{"isolation.level=read_uncommitted (default)", "a poll returns every record below the high watermark, those of open and aborted transactions too", []string{AbortedRead}},
	{"commit: before-processing (at-most-once)", "no record is processed twice: committed offsets never go back (records may be skipped on a crash)", []string{NonmonotonicCommit, SkippedRecord, ReprocessedRecord, DuplicateSideEffect}},
	{"commit: after-processing, auto (at-least-once; auto is Kafka's default)", "no record is skipped; records may be processed again after a crash or a rebalance", []string{NonmonotonicCommit, SkippedRecord, ReprocessedRecord, DuplicateSideEffect}},
	{"commit: transactional (exactly-once)", "a record's output and its offset commit together: no record's output is committed twice; only attempts in aborted transactions repeat", []string{NonmonotonicCommit, SkippedRecord, ReprocessedRecord}},
	{"processors (source on their sends): at-least-once / exactly-once", "at-least-once commits an input's offset once its output is acknowledged: no input below the committed offset lacks output, but an input may have several; exactly-once commits the input's offset and its output in one transaction: exactly one output per input, committed with the offset", []string{DuplicateOutput, LostOutput, NonatomicOutput}},
	{"transactional.id (producer epochs)", "InitProducerId bumps the producer epoch and fences the older one: its transactions are aborted and never become visible; the coordinator aborts a transaction left open after transaction.timeout.ms, releasing the last stable offset", []string{ZombieWrite, HangingTransaction}},
	{"side-effects: plain / idempotent", "a plain external store applies every effect it is sent; an idempotent one keeps one effect per key", []string{DuplicateSideEffect}},
	{"consumer groups (group.protocol classic or consumer)", "one member owns a partition at a time: the classic protocol assigns it to one member per generation, and an eager member revokes everything before the next; cooperative rebalancing and KIP-848's reconciliation revoke a partition before granting it to another member. The coordinator refuses an offset commit from a fenced member: a classic member's generation must be the group's (ILLEGAL_GENERATION), a consumer-protocol member's epoch its own current one (STALE_MEMBER_EPOCH)", []string{DoubleOwner, ZombieCommit}},
	{"committed offsets (__consumer_offsets, acks=all)", "an acknowledged OffsetCommit is what the next OffsetFetch returns (a linearizable register per group and partition)", []string{StaleOffsetFetch, Nonlinearizable}},
	{"bugs: [...] (docs/bug-zoo.md)", "a historical Kafka bug switched back on breaks the guarantee it names: its violations are expected, and reported as violations naming the bug", nil},
	{"faults that happened (the god view)", "losses the simulator saw in unclean elections, power losses, disk wipes or disk corruption, committed batches a leader's producer state forgot, and partitions added, excuse the anomalies they explain, and only those", []string{LostAckedWrite, Duplicate, InconsistentOffsets, NonmonotonicSend, PollSkip, NonmonotonicPoll, KeyOrder, NonmonotonicCommit, Nonlinearizable}},
}

// VerdictRules is the verdict table.
var VerdictRules = []Rule{
	{LostAckedWrite, "the simulator saw an unclean election lose committed data, and an operator had asked for one (elect-leaders type unclean)", Permitted,
		"an operator's unclean leader election (ElectLeaders with ElectionType.UNCLEAN, KIP-460) let a replica that lacked committed data lead: the operator chose availability over the data, whatever unclean.leader.election.enable says",
		func(f *Facts) bool { return lossCause(f) == "unclean-election" && f.UncleanRequested }, nil},
	{LostAckedWrite, "the simulator saw an unclean election lose committed data while an in-sync copy survived (or may have), unclean.leader.election.enable=true", Permitted,
		"unclean.leader.election.enable=true let a replica that lacked committed data lead",
		func(f *Facts) bool { return lossCause(f) == "unclean-election" && f.Unclean }, nil},
	{LostAckedWrite, "the simulator saw an unclean election lose committed data while an in-sync copy survived (or may have), unclean.leader.election.enable=false", Permitted,
		"every ISR and ELR member was lost; Kafka elected the last known leader (KIP-966 balanced recovery), which may lack committed data",
		func(f *Facts) bool { return lossCause(f) == "unclean-election" }, nil},
	{LostAckedWrite, "the simulator saw a power loss lose it, flush.messages=1", Violation,
		"flush.messages=1 makes every write durable before it is acknowledged or read (the append returns, and the high watermark passes it, only after its fsync); a power loss must not lose it" + thenPlaceholder,
		func(f *Facts) bool { return lossCause(f) == "power-loss" && f.FlushEveryMessage }, nil},
	{LostAckedWrite, "the simulator saw a disk wipe lose it", Permitted,
		"the replicas that held it came back on replaced (wiped) disks — the one that led next, or every in-sync copy before a replica outside the ISR was elected: what they had fsynced was gone too, and no flush policy keeps data through that" + thenPlaceholder,
		func(f *Facts) bool { return lossCause(f) == "disk-wipe" }, nil},
	{LostAckedWrite, "the simulator saw a disk corruption lose it", Permitted,
		"the replica that led next had cut its log at a corrupt batch at recovery (a bit flip or an unreadable range): what it had fsynced from there on was gone, and no flush policy keeps data through that" + thenPlaceholder,
		func(f *Facts) bool { return lossCause(f) == "disk-corruption" }, nil},
	{LostAckedWrite, "the simulator saw a power loss lose it", Permitted,
		"the default flush policy leaves acknowledged writes in page cache: every in-sync replica holding them lost power before they reached disk" + thenPlaceholder,
		func(f *Facts) bool { return lossCause(f) == "power-loss" }, nil},
	{LostAckedWrite, "the simulator saw committed data lost another way", Permitted, "committed data was lost: CAUSE",
		func(f *Facts) bool { return f.Loss != nil }, func(f *Facts) string { return "committed data was lost: " + f.Loss.Cause }},
	{LostAckedWrite, "the simulator saw a leader acknowledge the write as a duplicate of a different batch with the same producer id, epoch and sequences, after __transaction_state lost committed data", Permitted, mistakenDuplicateBecause,
		func(f *Facts) bool { return f.MistakenDuplicate != nil }, mistakenDuplicateWhy},
	{LostAckedWrite, "no god view, unclean.leader.election.enable=true", Permitted,
		"unclean.leader.election.enable=true lets a replica that lacks committed data lead; the history alone cannot tell whether one did, and the configuration does not promise that committed data survives",
		func(f *Facts) bool { return f.Unclean && !f.GodView }, nil},
	{LostAckedWrite, "no god view, an operator asked for an unclean election (elect-leaders type unclean)", Permitted,
		"an operator asked for an unclean leader election (ElectLeaders, KIP-460), which may elect a replica that lacks committed data; the history alone cannot tell whether it did",
		func(f *Facts) bool { return f.UncleanRequested && !f.GodView }, nil},
	{LostAckedWrite, "no god view, the default flush policy, and power was lost", Permitted,
		"the default flush policy leaves acknowledged writes in page cache, and power was lost: a power loss of every replica holding a record loses it, even one readers saw; the history alone cannot tell whether one did",
		func(f *Facts) bool { return !f.FlushEveryMessage && f.PowerLosses > 0 && !f.GodView }, nil},
	{LostAckedWrite, "a poll read the record before it was lost", Violation,
		"readers saw this record, so it was committed; committed data must not be lost without an unclean election or a power loss",
		func(f *Facts) bool { return f.ReadByPoll }, nil},
	{LostAckedWrite, "acks=0", Permitted, "acks=0 waits for no acknowledgement",
		func(f *Facts) bool { return f.Acks == "0" }, nil},
	{LostAckedWrite, "acks=1", Permitted, "acks=1 does not wait for followers: a leader that fails, or hands leadership over (a controlled shutdown, a preferred leader election, a reassignment), before they copy a record loses it",
		func(f *Facts) bool { return f.Acks == "1" }, nil},
	{LostAckedWrite, "unclean.leader.election.enable=true and an unclean election happened", Permitted,
		"unclean.leader.election.enable=true and an unclean election happened",
		func(f *Facts) bool { return f.Unclean && f.UncleanElections > 0 }, nil},
	{LostAckedWrite, "", Violation,
		"acks=all with min.insync.replicas=N promises an acknowledged write survives while a replica that held it survives", nil,
		func(f *Facts) string {
			return "acks=all with min.insync.replicas=" + strconv.Itoa(f.MinInsyncReplicas) + " promises an acknowledged write survives while a replica that held it survives"
		}},

	{Unseen, "", Permitted, "readers had not reached it when the run ended, and no final read covered it", nil, nil},

	{Duplicate, "the history sends one value twice", Violation, "a history's values must be unique",
		func(f *Facts) bool { return f.SentTwice }, nil},
	{Duplicate, "enable.idempotence=false", Permitted, "enable.idempotence=false: a retried batch that was already written is written again",
		func(f *Facts) bool { return !f.Idempotence }, nil},
	{Duplicate, "the simulator saw committed data lost where every copy but one was", Permitted,
		"committed data was lost (CAUSE), and the producer state Kafka rebuilds from the log with it: the broker took the retry of a batch whose written copy was lost as new; one copy remains",
		func(f *Facts) bool { return f.CopiesLost && f.Loss != nil }, func(f *Facts) string {
			return "committed data was lost (" + f.Loss.Cause + "), and the producer state Kafka rebuilds from the log with it: the broker took the retry of a batch whose written copy was lost as new; one copy remains"
		}},
	{Duplicate, "the simulator saw a leader answer OUT_OF_ORDER_SEQUENCE_NUMBER to a retry of the committed batch holding a copy", Permitted,
		"the leader's producer state, rebuilt at a restart, no longer held the committed batch (Kafka's producer-state snapshot keeps each producer's last batch only, and the cleaner may have removed the rest from the log it replays): it answered OUT_OF_ORDER_SEQUENCE_NUMBER to the retry, and the producer, finding a gap at its next sequence, bumped its epoch and sent the batch again under new sequences (KIP-360)",
		func(f *Facts) bool { return f.Forgotten }, nil},
	{Duplicate, "the simulator saw a leader take a retry of the committed batch holding a copy as new, retention having deleted that batch and the leader's producer state its producer (or all of it but such retries before this one, in sequence)", Permitted,
		"retention had deleted the committed batch below the log start, and the leader's producer state no longer knew its producer: Kafka keeps such a producer in memory and in its producer-state snapshots, but a reload that finds no snapshot still holding it (after an unclean shutdown it deletes those at or below the log start, and those past the segment it recovers, a clean shutdown's among them) rebuilds from the log alone, and a producer it does not know may write at any sequence (KIP-360): the retry was written again, and so were the retries that followed it in sequence",
		func(f *Facts) bool { return f.ForgottenProducer }, nil},
	{Duplicate, "the simulator saw an unclean election make a never-committed copy part of the log", Permitted,
		"an unclean election made the new leader's own never-committed writes of an earlier epoch the log; the producer had not had that copy acknowledged, had sent it again under a bumped producer epoch (KIP-360), and idempotence cannot match sequences across producer epochs",
		func(f *Facts) bool { return f.Resurrected }, nil},
	{Duplicate, "", Violation, "enable.idempotence=true promises each record is written once", nil, nil},

	{InconsistentOffsets, "the simulator saw committed data lost in the partition", Permitted, "offsets were reused after committed data was lost (CAUSE)",
		func(f *Facts) bool { return f.Loss != nil }, func(f *Facts) string {
			return "offsets were reused after committed data was lost (" + f.Loss.Cause + ")"
		}},
	{InconsistentOffsets, "the simulator saw a leader acknowledge the write at the offset as a duplicate of the different batch there, after __transaction_state lost committed data", Permitted, mistakenDuplicateBecause,
		func(f *Facts) bool { return f.MistakenDuplicate != nil }, mistakenDuplicateWhy},
	{InconsistentOffsets, "no god view, unclean.leader.election.enable=true", Permitted,
		"unclean.leader.election.enable=true lets a replica that lacks committed data lead and reuse its offsets; the history alone cannot tell whether one did",
		func(f *Facts) bool { return f.Unclean && !f.GodView }, nil},
	{InconsistentOffsets, "no god view, an operator asked for an unclean election (elect-leaders type unclean)", Permitted,
		"an operator asked for an unclean leader election (ElectLeaders, KIP-460), which may elect a replica that lacks committed data and reuse its offsets; the history alone cannot tell whether it did",
		func(f *Facts) bool { return f.UncleanRequested && !f.GodView }, nil},
	{InconsistentOffsets, "no god view, the default flush policy, and power was lost", Permitted,
		"the default flush policy leaves committed data in page cache, and power was lost: a power loss of every replica holding it loses it and its offsets are reused; the history alone cannot tell whether one did",
		func(f *Facts) bool { return !f.FlushEveryMessage && f.PowerLosses > 0 && !f.GodView }, nil},
	{InconsistentOffsets, "polls saw two records at the offset", Violation, "readers saw two different records at one offset: committed data changed",
		func(f *Facts) bool { return f.ReadValues > 1 }, nil},
	{InconsistentOffsets, "a copy acknowledged at the offset with acks=0 or 1 is gone", Permitted,
		"the copy acknowledged at this offset was lost with a leader that failed or handed leadership over (acks=1 does not wait for followers) and the offset reused",
		func(f *Facts) bool { return f.AckedCopyLost == "1" || f.AckedCopyLost == "0" }, func(f *Facts) string {
			return "the copy acknowledged at this offset was lost with a leader that failed or handed leadership over (acks=" + f.AckedCopyLost + " does not wait for followers) and the offset reused"
		}},
	{InconsistentOffsets, "the write acknowledged at the offset was a permitted loss", Permitted, "the write acknowledged at this offset was lost, and the offset reused: WHY",
		func(f *Facts) bool { return f.LostHere != "" }, func(f *Facts) string {
			return "the write acknowledged at this offset was lost, and the offset reused: " + f.LostHere
		}},
	{InconsistentOffsets, "", Violation, "an offset names one record forever: two readers saw different records at one offset", nil, nil},

	{NonmonotonicSend, "the simulator saw committed data lost in the partition", Permitted, "committed data was lost and offsets reused",
		func(f *Facts) bool { return f.Loss != nil }, nil},
	{NonmonotonicSend, "the simulator saw a leader acknowledge the later-sent write as a duplicate of the different batch at its offset, after __transaction_state lost committed data", Permitted, mistakenDuplicateBecause,
		func(f *Facts) bool { return f.MistakenDuplicate != nil }, mistakenDuplicateWhy},
	{NonmonotonicSend, "acknowledged writes to the partition were permitted losses", Permitted, "acknowledged writes were lost and their offsets reused: WHY",
		func(f *Facts) bool { return f.LostHere != "" }, func(f *Facts) string { return "acknowledged writes were lost and their offsets reused: " + f.LostHere }},
	{NonmonotonicSend, "enable.idempotence=false, retries > 0, max.in.flight.requests.per.connection > 1", Permitted,
		"without idempotence, retries with max.in.flight.requests.per.connection > 1 can reorder a producer's writes",
		func(f *Facts) bool { return !f.Idempotence && f.ReorderingRetries }, nil},
	{NonmonotonicSend, "enable.idempotence=true, max.in.flight.requests.per.connection > 1, retries > 0, and the simulator saw the leader append the record that landed first from a producer it held no state for, at a sequence other than 0", Permitted,
		"the leader held no state for the producer when it appended the record that landed first: " + unknownProducerReorder,
		func(f *Facts) bool { return f.Idempotence && f.ReorderingRetries && f.UnknownProducer }, nil},
	{NonmonotonicSend, "no god view, enable.idempotence=true, max.in.flight.requests.per.connection > 1, retries > 0, and no record of the producer lies below the one that landed first", Permitted,
		"the record that landed first was in its producer's first batch in the partition's log, appended when the leader held no state for the producer: " + unknownProducerReorder,
		func(f *Facts) bool { return !f.GodView && f.Idempotence && f.ReorderingRetries && f.FirstOfProducer }, nil},
	{NonmonotonicSend, "the record sent earlier was written in send order, at a committed batch the simulator saw a leader's producer state forget, and written again after the later one", Permitted,
		"the record sent earlier was written in order, and again after the later one: the leader's producer state, rebuilt at a restart, no longer held its committed batch, answered the retry OUT_OF_ORDER_SEQUENCE_NUMBER, and the producer sent it again under a bumped epoch (KIP-360)",
		func(f *Facts) bool { return f.ResentForgotten }, nil},
	{NonmonotonicSend, "", Violation, "a producer's writes to one partition land in the order they were sent", nil, nil},

	// Skips and order of polls: the same rules within a poll and between polls.
	{PollSkip, "the record is below the log start and final reads do not hold it", Permitted,
		"retention deleted the record before the reader reached it; the reader's position fell below the log start and auto.offset.reset moved it on",
		func(f *Facts) bool { return f.BelowLogStart && !f.InFinalReads }, nil},
	{PollSkip, "auto.offset.reset=latest", Permitted, "auto.offset.reset=latest moves a reader whose position fell out of range to the end, past records",
		func(f *Facts) bool { return f.AutoOffsetReset == "latest" }, nil},
	{PollSkip, "the reader read another record at the offset, lost when a leader that held the skipped record (from an older epoch) was elected, then or at a later unclean election (god view)", Permitted,
		"the reader read the committed record lost there; the new leader's older-epoch record that replaced it lies below the end offset it gives for the reader's epoch, so KIP-320 validation finds nothing to rewind",
		func(f *Facts) bool { return f.ReadLostHere }, nil},
	{PollSkip, "the reader read another record at the offset, from a deposed leader's answer to a fetch it sent before it learned of the new leader (god view)", Permitted,
		"the reader took a deposed leader's answer, as Kafka's consumer does when the fetch began at its position (FetchCollector checks no leader epoch), and went on past those offsets at the new leader, whose records there it never fetched",
		func(f *Facts) bool { return f.ReadStaleLeader }, nil},
	{PollSkip, "the leader the reader fetched from answered OFFSET_OUT_OF_RANGE at its position, and auto.offset.reset moved it past the record (god view)", Permitted,
		"retention had deleted the record from the leader the reader fetched from, which answered OFFSET_OUT_OF_RANGE, and auto.offset.reset moved the reader to that leader's log start; another replica, whose own retention had not gone as far, still held the record and led later",
		func(f *Facts) bool { return f.OutOfRangeReset }, nil},
	{PollSkip, "the simulator saw the offset's committed data lost after the jump, the new leader's log not reaching it, and no record final reads hold there was seen there before the loss", Permitted,
		"the offset was reused after committed data was lost (CAUSE) after the jump: what final reads hold there was appended after the loss; what the reader passed over was lost with the log it read (a read_committed reader passes over control records and aborted transactions' records)",
		func(f *Facts) bool { return f.LostAfterSkip != nil }, func(f *Facts) string {
			return "the offset was reused after committed data was lost (" + f.LostAfterSkip.Cause + ") after the jump: what final reads hold there was appended after the loss; what the reader passed over was lost with the log it read (a read_committed reader passes over control records and aborted transactions' records)"
		}},
	{PollSkip, "a read_committed reader passed over a record whose transaction's commit was acknowledged, and the simulator saw __transaction_state lose committed data after the acknowledgement, no later than the skip and before any read_committed poll returned the record", Permitted, commitUndoneBecause,
		func(f *Facts) bool { return f.CommitUndone != nil }, func(f *Facts) string {
			return strings.Replace(commitUndoneBecause, "CAUSE", f.CommitUndone.Cause, 1)
		}},
	{PollSkip, "final reads hold the skipped record", Violation, "the reader jumped over a record that is still in the log (final reads hold it)",
		func(f *Facts) bool { return f.InFinalReads }, nil},
	{PollSkip, "the simulator saw committed data lost in the partition", Permitted, "the skipped record was lost with committed data",
		func(f *Facts) bool { return f.Loss != nil }, nil},
	{PollSkip, "acknowledged writes to the partition were permitted losses", Permitted, "the skipped record was lost: WHY",
		func(f *Facts) bool { return f.LostHere != "" }, func(f *Facts) string { return "the skipped record was lost: " + f.LostHere }},
	{PollSkip, "", Violation, "a reader sees a partition's records in offset order, without gaps, until its position is reset", nil, nil},

	{NonmonotonicPoll, "the simulator saw committed data lost in the partition", Permitted, "the log was truncated under the reader after committed data was lost",
		func(f *Facts) bool { return f.Loss != nil }, nil},
	{NonmonotonicPoll, "acknowledged writes to the partition were permitted losses", Permitted,
		"the log was truncated under the reader after acknowledged writes were lost: WHY",
		func(f *Facts) bool { return f.LostHere != "" }, func(f *Facts) string {
			return "the log was truncated under the reader after acknowledged writes were lost: " + f.LostHere
		}},
	{NonmonotonicPoll, "the leader the reader fetched from answered OFFSET_OUT_OF_RANGE at its position, and auto.offset.reset moved it back to a log start below (god view)", Permitted,
		"the leader answered OFFSET_OUT_OF_RANGE at the reader's position, and auto.offset.reset moved the position to the log start ListOffsets then gave, below it (a power loss had undone the leader's unsynced segment deletions, or a replica whose retention had not gone as far led): Kafka's consumer seeks to that answer whatever its position was, and reads those offsets again",
		func(f *Facts) bool { return f.OutOfRangeRewind }, nil},
	{NonmonotonicPoll, "", Violation, "a reader sees a partition's records in offset order, without gaps, until its position is reset", nil, nil},

	{KeyOrder, "partitions were added to the topic", Permitted,
		"partitions were added: the default partitioner (murmur2 of the key modulo the partition count) moved the key to another partition, and Kafka orders records per partition only",
		func(f *Facts) bool { return f.PartitionsAdded }, nil},
	{KeyOrder, "", Violation,
		"the default partitioner sends a key to one partition while the partition count stays the same: one producer's records of a key are read in the order they were sent", nil, nil},

	{AbortedRead, "the send itself definitely failed", Violation, "a send that definitely failed must never be read",
		func(f *Facts) bool { return f.FailedSend }, nil},
	{AbortedRead, "isolation.level=read_uncommitted", Permitted,
		"isolation.level=read_uncommitted returns every record below the high watermark, those of aborted transactions too",
		func(f *Facts) bool { return f.Isolation != readCommitted }, nil},
	{AbortedRead, "", Violation,
		"isolation.level=read_committed never returns a record of an aborted transaction (the reader filters them with the aborted-transaction index)", nil, nil},

	{UncommittedRead, "", Violation,
		"isolation.level=read_committed returns only records of committed transactions: the reader stops at the last stable offset, which an open transaction holds back", nil, nil},

	{PrecommittedRead, "", Violation,
		"isolation.level=read_committed returns a transaction's records only after its commit: this read completed before the commit was invoked", nil, nil},

	{PhantomRead, "", Violation, "every record read must have been sent", nil, nil},

	{G0, "the cycle does not order events against real time", Permitted,
		"Kafka transactions are atomic, not isolated: records are ordered when they are appended, not when their transaction commits, so concurrent transactions may interleave differently in different partitions (Jepsen's Kafka checker treats G0 as normal)",
		func(f *Facts) bool { return !f.Impossible }, nil},
	{G0, "the simulator saw committed data lost where a ww step of the cycle starts (its offsets reused)", Permitted, lossReusedOffsets,
		func(f *Facts) bool { return f.Loss != nil }, lossReusedOffsetsWhy},
	{G0, "", Violation,
		"a transaction appends its records after it begins and before it commits: no execution orders these transactions' writes in a cycle with their real-time order", nil, nil},

	{G1c, "the cycle does not order events against real time, and has ww edges", Permitted,
		"Kafka transactions are atomic, not isolated: a transaction may read another's committed records while their writes interleave in the logs (Jepsen: G1c is normal with ww dependencies)",
		func(f *Facts) bool { return !f.Impossible && f.ViaWW }, nil},
	{G1c, "the cycle does not order events against real time", Permitted,
		"isolation.level=read_uncommitted returns records of open transactions: two transactions may each read the other's records",
		func(f *Facts) bool { return !f.Impossible }, nil},
	{G1c, "the simulator saw committed data lost where a ww step of the cycle starts (its offsets reused)", Permitted, lossReusedOffsets,
		func(f *Facts) bool { return f.Loss != nil }, lossReusedOffsetsWhy},
	{G1c, "", Violation,
		"isolation.level=read_committed reads a transaction's records only after it commits: no execution orders these transactions in a cycle of reads and commits", nil, nil},

	{NonmonotonicCommit, "the simulator saw __consumer_offsets lose committed data between the two commits", Permitted, offsetsLostBecause,
		func(f *Facts) bool { return f.OffsetsLostBetween != nil }, offsetsLostWhy},
	{NonmonotonicCommit, "the simulator saw committed data lost in the partition", Permitted,
		"committed data was lost: the consumer's position fell out of range and auto.offset.reset moved it back",
		func(f *Facts) bool { return f.Loss != nil }, nil},
	{NonmonotonicCommit, "commit: before-processing (at-most-once)", Violation,
		"at-most-once commits before processing: a committed offset that goes back re-delivers records the group already processed",
		func(f *Facts) bool { return f.CommitMode == "before-processing" }, nil},
	{NonmonotonicCommit, "commit: transactional (exactly-once), or the offsets were committed in a transaction", Violation,
		"exactly-once commits offsets with the transaction's output: an offset that goes back has records processed again, their output committed twice",
		func(f *Facts) bool { return f.CommitMode == "transactional" }, nil},
	{NonmonotonicCommit, "", Permitted,
		"at-least-once (commit after processing, or auto-commit): an offset that goes back re-delivers records already processed, duplicates that at-least-once accepts", nil, nil},

	{StaleOffsetFetch, "the simulator saw __consumer_offsets lose committed data", Permitted, "__consumer_offsets lost committed data (CAUSE)",
		func(f *Facts) bool { return f.OffsetsLost != nil }, func(f *Facts) string { return "__consumer_offsets lost committed data (" + f.OffsetsLost.Cause + ")" }},
	{StaleOffsetFetch, "", Violation,
		"the group coordinator acknowledges an OffsetCommit once __consumer_offsets holds it (acks=all): an OffsetFetch that begins after the acknowledgement returns it or a later commit", nil, nil},

	{DoubleOwner, "the simulator saw __consumer_offsets lose committed data", Permitted, "__consumer_offsets lost committed data (CAUSE): the coordinator reloaded the group without the generations and assignments it had written",
		func(f *Facts) bool { return f.OffsetsLost != nil }, func(f *Facts) string {
			return "__consumer_offsets lost committed data (" + f.OffsetsLost.Cause + "): the coordinator reloaded the group without the generations and assignments it had written"
		}},
	{DoubleOwner, "", Violation,
		"one member owns a partition at a time: the classic protocol assigns each partition to one member per generation and an eager member revokes before the next assignment; cooperative rebalancing revokes a partition before another member is granted it; KIP-848's reconciliation grants it only once its owner has revoked it", nil, nil},

	{ZombieCommit, "the simulator saw __consumer_offsets lose committed data", Permitted, "__consumer_offsets lost committed data (CAUSE): the coordinator reloaded the group at an older generation",
		func(f *Facts) bool { return f.OffsetsLost != nil }, func(f *Facts) string {
			return "__consumer_offsets lost committed data (" + f.OffsetsLost.Cause + "): the coordinator reloaded the group at an older generation"
		}},
	{ZombieCommit, "", Violation,
		"the group coordinator refuses an offset commit from a fenced member: a classic member's generation must be the group's current one (ClassicGroup.validateOffsetCommit: ILLEGAL_GENERATION), a consumer-protocol member's epoch its current one (ConsumerGroup.validateOffsetCommit: STALE_MEMBER_EPOCH); both only grow", nil, nil},

	{SkippedRecord, "commit: before-processing (at-most-once)", Permitted,
		"at-most-once commits before processing: a member that fails between the commit and the processing leaves the records it committed unprocessed, and the next owner starts after them",
		func(f *Facts) bool { return f.CommitMode == "before-processing" }, nil},
	{SkippedRecord, "auto.offset.reset=latest, and the simulator saw the partition or __consumer_offsets lose committed data", Permitted,
		"committed data was lost: the group's position or committed offset was out of range, and auto.offset.reset=latest moved it to the end, past records",
		func(f *Facts) bool { return f.AutoOffsetReset == "latest" && (f.Loss != nil || f.OffsetsLost != nil) }, nil},
	{SkippedRecord, "", Violation,
		"at-least-once (commit after processing, or auto-commit) and exactly-once commit an offset only once every record below it was processed", nil, nil},

	{ReprocessedRecord, "the simulator saw __consumer_offsets lose committed data, after a commit past the record, between the first two attempts (from the first's commit past the record, at-most-once; or between the second's commit past it and the first attempt)", Permitted, offsetsLostBecause,
		func(f *Facts) bool { return f.OffsetsLostBetween != nil }, offsetsLostWhy},
	{ReprocessedRecord, "commit: before-processing (at-most-once), and the simulator saw an unclean election lose the record and a later one make it the log again between its first two attempts' reads", Permitted,
		"an unclean election lost the record: the member's KIP-320 validation against the new leader moved its position back to that leader's log end, below the record; a later unclean election made a log that still held the record (from an older epoch) the log again, and the member read it again at its offset",
		func(f *Facts) bool { return f.CommitMode == "before-processing" && f.LostThenResurrected }, nil},
	{ReprocessedRecord, "commit: before-processing (at-most-once)", Violation,
		"at-most-once commits before processing: the next owner starts after what was committed, so no record is processed twice",
		func(f *Facts) bool { return f.CommitMode == "before-processing" }, nil},
	{ReprocessedRecord, "commit: transactional, and at most one attempt was outside an aborted transaction", Permitted,
		"exactly-once: the other attempts were in transactions that aborted, whose output and offsets Kafka discarded",
		func(f *Facts) bool { return f.CommitMode == "transactional" && f.CommittedAttempts <= 1 }, nil},
	{ReprocessedRecord, "commit: transactional (exactly-once), and the simulator saw an unclean election lose the record and a later one make it the log again between its first two attempts' reads", Permitted,
		"a transaction committed the record's output with an offset past it, and an unclean election lost the record: the member's KIP-320 validation against the new leader moved its position back to that leader's log end, below the record, and the transactions it committed from there committed offsets below it; a later unclean election made a log that still held the record (from an older epoch) the log again, whose epoch cache ends that epoch past the position, and the member (or the next owner, from the committed offset) read the record again at its offset: exactly-once holds over the log Kafka keeps, and unclean.leader.election.enable gives committed data up",
		func(f *Facts) bool { return f.CommitMode == "transactional" && f.LostThenResurrected }, nil},
	{ReprocessedRecord, "commit: transactional (exactly-once)", Violation,
		"exactly-once commits a record's offset with its output in one transaction: only attempts in aborted transactions may repeat",
		func(f *Facts) bool { return f.CommitMode == "transactional" }, nil},
	{ReprocessedRecord, "", Permitted,
		"at-least-once (commit after processing, or auto-commit): a member that fails or loses its partitions before committing leaves its records to be processed again", nil, nil},

	{DuplicateSideEffect, "side-effects: idempotent", Violation,
		"an idempotent store keeps one effect per key: it acknowledges a key it already holds without applying it again, yet the history shows it applied this record's effect twice",
		func(f *Facts) bool { return f.SideEffects == "idempotent" }, nil},
	{DuplicateSideEffect, "the simulator saw __consumer_offsets lose committed data, after a commit past the record, between the first two effects (from the first's commit past the record, at-most-once; or between the second's commit past it and the first effect)", Permitted, offsetsLostBecause,
		func(f *Facts) bool { return f.OffsetsLostBetween != nil }, offsetsLostWhy},
	{DuplicateSideEffect, "commit: before-processing (at-most-once), and the simulator saw an unclean election lose the record and a later one make it the log again", Permitted,
		"an unclean election lost the record: the member's KIP-320 validation against the new leader moved its position back to that leader's log end, below the record; a later unclean election made a log that still held the record (from an older epoch) the log again, and the member read it again at its offset and sent its effect to the plain store again",
		func(f *Facts) bool { return f.CommitMode == "before-processing" && f.LostThenResurrected }, nil},
	{DuplicateSideEffect, "commit: before-processing (at-most-once)", Violation,
		"at-most-once processes each record at most once: its effect is applied at most once",
		func(f *Facts) bool { return f.CommitMode == "before-processing" }, nil},
	{DuplicateSideEffect, "", Permitted,
		"a plain external store applies every effect it is sent: a record processed again (at-least-once, or an aborted exactly-once attempt: the store is outside Kafka's transactions) applies its effect again; an idempotent store would keep one", nil, nil},

	{DuplicateOutput, "the simulator saw __consumer_offsets lose committed data", Permitted, "__consumer_offsets lost committed data (CAUSE): the coordinator reloaded the group without the offsets committed with the first output, and the input record was processed and its output committed again",
		func(f *Facts) bool { return f.OffsetsLost != nil }, func(f *Facts) string {
			return "__consumer_offsets lost committed data (" + f.OffsetsLost.Cause + "): the coordinator reloaded the group without the offsets committed with the first output, and the input record was processed and its output committed again"
		}},
	{DuplicateOutput, "the simulator saw an unclean election lose the input record and a later one make it the log again", Permitted, "the input partition lost committed data (CAUSE) and a later unclean election made a log still holding the input record the log again: the same record was read again at its offset, below the offset its group had committed back to, and processed again",
		func(f *Facts) bool { return f.InputLost != nil && f.LostThenResurrected }, func(f *Facts) string {
			return "the input partition lost committed data (" + f.InputLost.Cause + ") and a later unclean election made a log still holding the input record the log again: the same record was read again at its offset, below the offset its group had committed back to, and processed again"
		}},
	{DuplicateOutput, "the simulator saw committed data lost at the input's offset", Permitted, "the input partition lost committed data (CAUSE) and the offset was reused: the outputs are of two different input records",
		func(f *Facts) bool { return f.InputLost != nil }, func(f *Facts) string {
			return "the input partition lost committed data (" + f.InputLost.Cause + ") and the offset was reused: the outputs are of two different input records"
		}},
	{DuplicateOutput, "not exactly-once (commit other than transactional)", Permitted,
		"at-least-once: a processor that fails, or loses its partitions, after its output was written and before its offset commit leaves the input to be processed again, and its output written again",
		func(f *Facts) bool { return f.CommitMode != "transactional" }, nil},
	{DuplicateOutput, "", Violation,
		"exactly-once commits an input record's offset with its output in one transaction: once one output is committed, the offset is committed past the input, and any other attempt's output is aborted", nil, nil},

	{LostOutput, "commit: before-processing (at-most-once)", Permitted,
		"at-most-once commits before processing: a processor that fails after the commit leaves the records it committed without output",
		func(f *Facts) bool { return f.CommitMode == "before-processing" }, nil},
	{LostOutput, "the simulator saw committed data lost where an output record of the input was written", Permitted, "the output record was lost with committed data (CAUSE); lost-acked-write judges that loss",
		func(f *Facts) bool { return f.OutputLost != nil }, func(f *Facts) string {
			return "the output record was lost with committed data (" + f.OutputLost.Cause + "); lost-acked-write judges that loss"
		}},
	{LostOutput, "acknowledged writes to the output record's partition were permitted losses", Permitted, "the output record was lost: WHY",
		func(f *Facts) bool { return f.OutputLostHere != "" }, func(f *Facts) string { return "the output record was lost: " + f.OutputLostHere }},
	{LostOutput, "the simulator saw committed data lost at the input's offset", Permitted, "the input partition lost committed data (CAUSE): the record at the offset may be a later one the group committed past without reading",
		func(f *Facts) bool { return f.InputLost != nil }, func(f *Facts) string {
			return "the input partition lost committed data (" + f.InputLost.Cause + "): the record at the offset may be a later one the group committed past without reading"
		}},
	{LostOutput, "auto.offset.reset=latest, and the simulator saw the partition or __consumer_offsets lose committed data", Permitted,
		"committed data was lost: the group's position or committed offset was out of range, and auto.offset.reset=latest moved it to the end, past records",
		func(f *Facts) bool { return f.AutoOffsetReset == "latest" && (f.Loss != nil || f.OffsetsLost != nil) }, nil},
	{LostOutput, "", Violation,
		"at-least-once commits an input's offset only after its output is acknowledged, exactly-once only in the transaction that commits its output: an input below the committed offset has output", nil, nil},

	{NonatomicOutput, "not exactly-once (commit other than transactional)", Permitted,
		"at-least-once commits offsets apart from the output", func(f *Facts) bool { return f.CommitMode != "transactional" }, nil},
	{NonatomicOutput, "the simulator saw __consumer_offsets lose committed data", Permitted, "__consumer_offsets lost committed data (CAUSE): the coordinator reloaded the group without offsets it had acknowledged, and the processor committed the input's offset again with a new output",
		func(f *Facts) bool { return f.OffsetsLost != nil }, func(f *Facts) string {
			return "__consumer_offsets lost committed data (" + f.OffsetsLost.Cause + "): the coordinator reloaded the group without offsets it had acknowledged, and the processor committed the input's offset again with a new output"
		}},
	{NonatomicOutput, "the group's offset had passed the input before, and the simulator saw committed data lost at the input's offset", Permitted, "the input partition lost committed data (CAUSE) and the offset was reused: the group had committed past the lost record, and the consumer, its position out of range, was moved back by auto.offset.reset to the record that took the offset",
		func(f *Facts) bool { return f.OffsetPassedFirst && f.InputLost != nil }, func(f *Facts) string {
			return "the input partition lost committed data (" + f.InputLost.Cause + ") and the offset was reused: the group had committed past the lost record, and the consumer, its position out of range, was moved back by auto.offset.reset to the record that took the offset"
		}},
	{NonatomicOutput, "the transaction's offset is at or below the input, and the simulator saw committed data lost at the input's offset after the processor held the input (from its fetch: a loss that took the very record it processed, though a later poll returned it from the fetch buffer) and before the transaction's commit", Permitted, "the input partition lost committed data (CAUSE) after the processor read the input: its log truncated below the consumer's position, the consumer moved back (KIP-320 truncation detection, or auto.offset.reset when out of range) and read the records that took the offsets, and the transaction sent that position with the lost input's output (sendOffsetsToTransaction commits positions, not the records they came from)",
		func(f *Facts) bool { return f.InputLostHeld != nil }, func(f *Facts) string {
			return "the input partition lost committed data (" + f.InputLostHeld.Cause + ") after the processor read the input: its log truncated below the consumer's position, the consumer moved back (KIP-320 truncation detection, or auto.offset.reset when out of range) and read the records that took the offsets, and the transaction sent that position with the lost input's output (sendOffsetsToTransaction commits positions, not the records they came from)"
		}},
	{NonatomicOutput, "", Violation,
		"exactly-once sends the consumed offsets to the transaction that holds the output (sendOffsetsToTransaction, TxnOffsetCommit): an input's offset and its output commit or abort together", nil, nil},

	{ZombieWrite, "the simulator saw __transaction_state lose committed data", Permitted, "__transaction_state lost committed data (CAUSE): the coordinator reloaded the transactional id without the epoch bump that fenced the older producer",
		func(f *Facts) bool { return f.TxnStateLost != nil }, func(f *Facts) string {
			return "__transaction_state lost committed data (" + f.TxnStateLost.Cause + "): the coordinator reloaded the transactional id without the epoch bump that fenced the older producer"
		}},
	{ZombieWrite, "", Violation,
		"InitProducerId bumps the producer epoch and fences the older one: the coordinator aborts what the older epoch had open and answers PRODUCER_FENCED to its EndTxn, and partition leaders refuse its produce requests (INVALID_PRODUCER_EPOCH): none of its later writes becomes visible", nil, nil},

	{HangingTransaction, "the simulator saw the partition lose, with committed data, the marker its coordinator had written there", Permitted, markerLostBecause,
		func(f *Facts) bool { return f.MarkerLost != nil }, markerLostWhy},
	{HangingTransaction, "the simulator saw __transaction_state lose committed data", Permitted, "__transaction_state lost committed data (CAUSE): the coordinator reloaded without the transaction, so nothing times it out or writes its markers (an operator aborts it: kafka-transactions.sh abort, KIP-664)",
		func(f *Facts) bool { return f.TxnStateLost != nil }, func(f *Facts) string {
			return "__transaction_state lost committed data (" + f.TxnStateLost.Cause + "): the coordinator reloaded without the transaction, so nothing times it out or writes its markers (an operator aborts it: kafka-transactions.sh abort, KIP-664)"
		}},
	{HangingTransaction, "the simulator saw the last stable offset held by a transaction its coordinator no longer held open", Violation,
		"a transaction's records stop holding the last stable offset once its coordinator writes its markers (TransactionMarkerChannelManager retries them until they are written, after a failover too); one its coordinator no longer holds open is never resolved (KIP-664's hanging transaction)",
		func(f *Facts) bool { return f.HangingSeen }, nil},
	{HangingTransaction, "its commit or abort completed", Permitted,
		"the coordinator answers EndTxn once it has written PrepareCommit (or PrepareAbort) and writes the markers after (TransactionMarkerChannelManager): the history alone cannot tell markers still on their way from markers that never come",
		func(f *Facts) bool { return f.TxnResolved }, nil},
	{HangingTransaction, "its outcome never appeared, and the final reads began within transaction.timeout.ms plus the abort interval of its last operation", Permitted,
		"the coordinator aborts a transaction left open only once transaction.timeout.ms has passed, at its next check (transaction.abort.timed.out.transaction.cleanup.interval.ms, 10 s): the final reads came before that",
		func(f *Facts) bool { return f.TxnTimeoutPending }, nil},
	{HangingTransaction, "", Violation,
		"the coordinator aborts a transaction left open once transaction.timeout.ms has passed (TransactionStateManager.timedOutTransactions, checked every transaction.abort.timed.out.transaction.cleanup.interval.ms), writing its abort markers, which release the last stable offset", nil, nil},

	{Nonlinearizable, "a committed-offset register, __consumer_offsets lost committed data", Permitted, "__consumer_offsets lost committed data (CAUSE)",
		func(f *Facts) bool { return f.Register && f.OffsetsLost != nil }, func(f *Facts) string { return "__consumer_offsets lost committed data (" + f.OffsetsLost.Cause + ")" }},
	{Nonlinearizable, "a committed-offset register", Violation,
		"a group's committed offset for a partition is a linearizable register: a commit takes effect between its invocation and its acknowledgement, and every fetch returns the latest",
		func(f *Facts) bool { return f.Register }, nil},
	{Nonlinearizable, "the partition shows a violation too", Violation, "the partition also shows TYPE, a violation",
		func(f *Facts) bool { return f.Related == Violation }, func(f *Facts) string { return "the partition also shows " + f.RelatedType + ", a violation" }},
	{Nonlinearizable, "the partition shows only permitted anomalies", Permitted, "it follows from TYPE in this partition, which the configuration permits: WHY",
		func(f *Facts) bool { return f.Related == Permitted }, func(f *Facts) string {
			return "it follows from " + f.RelatedType + " in this partition, which the configuration permits: " + f.RelatedWhy
		}},
	{Nonlinearizable, "a producer of the partition has acks=0 or acks=1", Permitted,
		"acks=1 (or 0) acknowledges a record before it is committed: a read after the acknowledgement may not see it yet, and a leader change may lose it",
		func(f *Facts) bool { return f.Acks == "0" || f.Acks == "1" }, nil},
	{Nonlinearizable, "the simulator saw committed data lost in the partition", Permitted, "committed data was lost (CAUSE): the log was truncated and rewritten",
		func(f *Facts) bool { return f.Loss != nil }, func(f *Facts) string {
			return "committed data was lost (" + f.Loss.Cause + "): the log was truncated and rewritten"
		}},
	{Nonlinearizable, "", Violation,
		"with acks=all a record is committed before it is acknowledged and readers read only committed records: a partition's log behaves as one linearizable append-only sequence", nil, nil},
}

// decide applies the table to a finding's facts.
func decide(typ string, f *Facts) (string, string) {
	rtyp := typ
	switch typ {
	case IntPollSkip:
		rtyp = PollSkip
	case IntNonmonotonicPoll:
		rtyp = NonmonotonicPoll
	}
	for i := range VerdictRules {
		r := &VerdictRules[i]
		if r.Anomaly != rtyp || (r.If != nil && !r.If(f)) {
			continue
		}
		why := r.Because
		if r.Why != nil {
			why = r.Why(f)
		}
		why = strings.Replace(why, thenPlaceholder, then(f), 1)
		if r.Verdict == Violation && len(f.Bugs) > 0 {
			why += " (historical Kafka bugs switched on: " + strings.Join(f.Bugs, ", ") + ")"
		}
		return r.Verdict, why
	}
	return Violation, "this anomaly breaks a Kafka guarantee"
}

// facts gathers what a finding's verdict depends on.
func (c *Config) facts(typ string, f Finding, a *analyzer) *Facts {
	t := c.topic(topicOf(f.Partition))
	proc := f.Process
	if typ == Duplicate || typ == NonmonotonicPoll || typ == PollSkip || typ == IntPollSkip || typ == IntNonmonotonicPoll {
		// A reader found it; the producer of the record decides.
		if p, ok := a.senderOf(f.Value); ok && typ == Duplicate {
			proc = p
		}
	}
	p := c.producer(proc)
	cons := c.consumer(f.Process)
	if f.group != "" {
		cons = c.consumerOf(f.group, f.Process)
	}
	fx := &Facts{
		Acks: p.Acks, Idempotence: p.Idempotence, ReorderingRetries: p.MaxInFlight > 1 && p.Retries > 0,
		MinInsyncReplicas: t.MinInsyncReplicas, Unclean: t.Unclean, ELR: c.ELR, FlushEveryMessage: t.FlushEveryMessage,
		Isolation: f.iso, AutoOffsetReset: cons.AutoOffsetReset, CommitMode: cons.Commit, SideEffects: cons.SideEffects,
		GodView: c.Happened.GodView(), UncleanElections: c.Happened.Count(godview.UncleanElection), PowerLosses: c.Happened.Count(godview.PowerLoss), Bugs: c.Bugs,
		FailedSend: f.failedSend, Impossible: f.impossible, ViaWW: f.viaWW, Register: f.register,
		CommittedAttempts: f.committedAttempts,
	}
	if typ == ReprocessedRecord || typ == DuplicateSideEffect {
		first, second := int64(0), int64(0) // unknown: an effect's record is not timed
		if f.hasAttempts {
			first, second = f.reads[0], f.reads[1]
		}
		fx.LostThenResurrected = c.lostThenResurrected(f.Partition, f.Offset, first, second)
	}
	if fx.Acks == "" {
		fx.Acks = "all"
	}
	fx.SentTwice = typ == Duplicate && f.Partition == ""
	for _, asked := range c.Happened.Of(godview.UncleanElectionRequested) {
		if asked.Partition == "" || asked.Partition == f.Partition {
			fx.UncleanRequested = true
		}
	}
	for _, added := range c.Happened.Of(godview.PartitionsAdded) {
		if added.Topic == topicOf(f.Partition) {
			fx.PartitionsAdded = true
		}
	}
	if f.group != "" {
		fx.CommitMode = c.commitMode(a, f.group, f.Process)
	}
	if typ == NonmonotonicCommit && f.inTxn {
		fx.CommitMode = "transactional"
	}
	switch typ {
	case NonmonotonicCommit, ReprocessedRecord, DuplicateSideEffect:
		// Their operations: the earlier commit's invocation to the later
		// one's completion; the first two (judged) attempts' or effects'
		// starts.
		if n := len(f.Ops); n >= 2 {
			from, to := f.Ops[0], f.Ops[n-1]
			if typ != NonmonotonicCommit {
				to = f.Ops[1]
			}
			if f.hasAttempts {
				// A reprocessed record's attempts in aborted
				// transactions repeat nothing: the pair judged.
				from, to = f.attempts[0], f.attempts[1]
			}
			first := from
			if f.hasCommitFirst && f.commitFirst < from {
				// At-most-once commits past the batch before processing
				// it: the loss that takes that commit may come before
				// the first attempt (a member paused with the batch
				// polled processes it after the loss).
				from = f.commitFirst
			}
			lossBetween := a.offsetsLossBetween
			if typ != NonmonotonicCommit {
				// The loss must take a commit past the record, and the
				// coordinator must have held one.
				lossBetween = func(c *Config, group string, from, to int64) (DataLoss, bool) {
					return a.offsetsLossTakingCommitPast(c, group, f.Partition, f.Offset, from, to)
				}
			}
			if l, ok := lossBetween(c, f.group, from, to); ok {
				fx.OffsetsLostBetween = &l
			} else if typ != NonmonotonicCommit && f.hasCommitSecond && f.commitSecond < first {
				// The later attempt's member had committed past the
				// record before the first attempt began, and held it
				// polled (processing slowly, its pool busy): the first
				// attempt's member started below an acknowledged commit,
				// which only the coordinator's losing it before that
				// attempt explains. The holder then processes what it
				// polled, as Kafka's consumer hands the application a
				// poll's records whatever happens to the group after
				// (ConsumerCoordinator acts on a lost membership at the
				// next poll only).
				if l, ok := a.offsetsLossBetween(c, f.group, f.commitSecond, first); ok {
					fx.OffsetsLostBetween = &l
				}
			}
		}
	}
	switch typ {
	case LostAckedWrite:
		// An acks=0 write nobody read may never have reached a broker: no
		// loss the simulator saw explains it, acks=0 does.
		if l, ok := c.lossAfter(f.Partition, f.Offset, f.ackedAt); ok && !f.noAck {
			fx.Loss = &l
		}
		fx.MinInsyncReplicas = c.minInsyncReplicasAt(t, f.ackedAt)
	case InconsistentOffsets:
		if l, ok := c.loss(f.Partition, f.Offset); ok {
			fx.Loss = &l
		}
	case Duplicate:
		if l, ok := c.copiesLost(f, a); ok {
			fx.Loss, fx.CopiesLost = &l, true
		}
		for _, at := range f.copies {
			fx.Forgotten = fx.Forgotten || c.Happened.Covers(godview.ForgottenBatch, at.part, at.off)
			fx.ForgottenProducer = fx.ForgottenProducer || c.Happened.Covers(godview.ForgottenProducer, at.part, at.off)
			fx.Resurrected = fx.Resurrected || c.Happened.Covers(godview.Resurrected, at.part, at.off)
		}
	case NonmonotonicSend:
		if l, ok := c.loss(f.Partition, -1); ok {
			fx.Loss = &l
		}
		fx.UnknownProducer = c.Happened.Covers(godview.UnknownProducerAppend, f.Partition, f.Offset)
		fx.FirstOfProducer = f.firstOfProducer
		fx.ResentForgotten = f.earlierCopyAt >= 0 && c.Happened.Covers(godview.ForgottenBatch, f.Partition, f.earlierCopyAt)
	case DuplicateOutput, LostOutput, NonatomicOutput:
		fx.OffsetPassedFirst = f.offsetPassedFirst
		if b := f.offsetBelow; b != nil {
			if l, ok := a.lossBetween(f.Partition, f.Offset, b.read, b.commit); ok {
				fx.InputLostHeld = &l
			} else if l, ok := a.lossTakingRead(f.Partition, f.Offset, b.val, b.commit); ok {
				fx.InputLostHeld = &l
			}
		}
		if l, ok := c.offsetsLoss(f.group); ok {
			fx.OffsetsLost = &l
		}
		if l, ok := c.loss(f.Partition, f.Offset); ok {
			fx.InputLost, fx.Loss = &l, &l
		}
		if typ == DuplicateOutput {
			// Outputs carry their input's offset, not when it was read.
			fx.LostThenResurrected = c.lostThenResurrected(f.Partition, f.Offset, 0, 0)
		}
		for _, at := range f.copies {
			if l, ok := c.loss(at.part, at.off); ok && fx.OutputLost == nil {
				fx.OutputLost = &l
			}
			if why, ok := c.lostHere(at.part, at.off); ok && fx.OutputLostHere == "" {
				fx.OutputLostHere = why
			}
		}
	case ZombieWrite, HangingTransaction:
		if l, ok := c.Happened.First(godview.Loss, func(l *DataLoss) bool { return strings.HasPrefix(l.Partition, "__transaction_state-") }); ok {
			fx.TxnStateLost = &l
		}
		if typ == HangingTransaction {
			var h godview.Fact
			h, fx.HangingSeen = c.Happened.First(godview.HangingTransaction, func(h *godview.Fact) bool { return h.Partition == f.Partition && h.From == f.Offset })
			if fx.HangingSeen && h.Cause != "" {
				fx.MarkerLost = &h
			}
			fx.TxnResolved = f.resolved
			fx.TxnTimeoutPending = !f.resolved && f.idleFor < int64(c.producer(f.txnProc).transactionTimeout()+abortCheckInterval)
		}
	case G0, G1c:
		// A ww step orders two records by their offsets; when a loss of
		// committed data may have taken the earlier one (at or past the
		// loss's start), the later may have been appended after the loss
		// at an offset the lost log had used: offset order there is not
		// append order.
		for _, at := range f.wwFrom {
			if l, ok := c.loss(at.partition, at.offset); ok {
				fx.Loss = &l
				break
			}
		}
	case StaleOffsetFetch, Nonlinearizable, DoubleOwner, ZombieCommit, SkippedRecord:
		if l, ok := c.offsetsLoss(f.group); ok {
			fx.OffsetsLost = &l
		}
		if l, ok := c.loss(f.Partition, -1); ok {
			fx.Loss = &l
		}
	default:
		if l, ok := c.loss(f.Partition, -1); ok {
			fx.Loss = &l
		}
	}
	switch typ {
	case LostAckedWrite, InconsistentOffsets, NonmonotonicSend:
		if l, ok := c.mistakenDuplicate(f.Partition, f.Offset); ok {
			fx.MistakenDuplicate = &l
		}
	}
	switch typ {
	case InconsistentOffsets:
		fx.LostHere, _ = c.lostHere(f.Partition, f.Offset)
	default:
		fx.LostHere, _ = c.lostHere(f.Partition, -1)
	}
	// unclean.leader.election.enable as the loss found it (an operator may
	// have turned it on during the run).
	lossAt := int64(0)
	if fx.Loss != nil {
		lossAt = fx.Loss.At
	}
	fx.Unclean = c.uncleanAt(t, lossAt)
	switch typ {
	case LostAckedWrite:
		fx.ReadByPoll = a.readAt(f.Partition, f.Offset, f.Value)
	case InconsistentOffsets:
		fx.ReadValues = a.readValuesAt(f.Partition, f.Offset)
		if proc, ok := a.ackedCopyLostAt(f.Partition, f.Offset); ok {
			fx.AckedCopyLost = c.producer(proc).Acks
		}
	case PollSkip, IntPollSkip:
		// The skip's operation: what final reads hold there must have been
		// sent before it (a record that took the offset after a loss is
		// not the one skipped).
		skipOp := int64(math.MaxInt64)
		if len(f.Ops) > 0 {
			skipOp = f.Ops[len(f.Ops)-1]
		}
		fx.InFinalReads = a.inFinalReadsBefore(f.Partition, f.Offset, skipOp, f.iso == readCommitted)
		fx.ReadLostHere = f.readOther && c.replacedUnderReader(f.Partition, f.Offset)
		fx.ReadStaleLeader = f.readOther && c.readFromDeposedLeader(f.Partition, f.Offset, f.Process)
		fx.OutOfRangeReset = c.resetPastOutOfRange(f.Partition, f.Offset, f.Process)
		if l, ok := a.lossUnderSkip(f.Partition, f.Offset, skipOp, f.iso == readCommitted); ok {
			fx.LostAfterSkip = &l
		}
		if f.iso == readCommitted {
			if l, ok := a.commitUndone(f.Partition, f.Offset, skipOp); ok {
				fx.CommitUndone = &l
			}
		}
		fx.BelowLogStart = f.Offset < a.logStartOf(f.Partition)
	case NonmonotonicPoll, IntNonmonotonicPoll:
		fx.OutOfRangeRewind = f.rewound
	}
	return fx
}

// copiesLost finds the loss that took every copy of a duplicated record but
// one: each copy final reads do not hold lies where the god view saw
// committed data lost. Such a loss takes the producer's state with the log
// (Kafka rebuilds it from the log), so a retry of a batch whose copy was
// lost is written again, and the log holds it once.
func (c *Config) copiesLost(f Finding, a *analyzer) (DataLoss, bool) {
	var loss DataLoss
	kept, lost := 0, 0
	for _, at := range f.copies {
		if a.finalHolds(at.part, at.off, f.Value) {
			kept++
		} else if l, ok := c.loss(at.part, at.off); ok {
			loss, lost = l, lost+1
		} else {
			kept++
		}
	}
	return loss, lost > 0 && kept <= 1
}

// offsetsLoss finds a loss in group's partition of __consumer_offsets.
func (c *Config) offsetsLoss(group string) (DataLoss, bool) {
	return c.Happened.First(godview.Loss, func(l *DataLoss) bool { return c.holdsGroup(l.Partition, group) })
}

// holdsGroup reports whether partition is the one of __consumer_offsets that
// holds group's records: any of them when the partition count is unknown
// (or the finding names no group).
func (c *Config) holdsGroup(partition, group string) bool {
	const prefix = "__consumer_offsets-"
	if !strings.HasPrefix(partition, prefix) {
		return false
	}
	if c.OffsetsTopicPartitions <= 0 || group == "" {
		return true
	}
	return partition[len(prefix):] == strconv.Itoa(int(kafkahash.CoordinatorPartition(group, c.OffsetsTopicPartitions)))
}

// VerdictsMarkdown renders the verdict table (VERDICTS.md).
func VerdictsMarkdown() string {
	var b strings.Builder
	b.WriteString("# Verdicts\n\n")
	b.WriteString("<!-- Generated from checker/verdicts.go by `go test ./checker -run TestVerdictsMarkdown -update`; do not edit. -->\n\n")
	b.WriteString("For every anomaly the checker finds (see `checker/anomaly.go`), the rules below decide, in order,\n")
	b.WriteString("whether the configuration under test **permits** it (a cost it accepts: counted, explained, not\n")
	b.WriteString("failed) or whether a guarantee it promises was broken (**violation**). The first rule whose\n")
	b.WriteString("condition holds decides. Conditions read the configuration of the producer, topic, consumer\n")
	b.WriteString("and group involved (Kafka 4.2's defaults where the configuration says nothing: see\n")
	b.WriteString("`Report.Assumed`) and what happened in the run (the simulator's god view: losses it saw, unclean\n")
	b.WriteString("elections, power losses). When historical Kafka bugs are switched on (`bugs:`), a violation's\n")
	b.WriteString("reason names them.\n\n")
	b.WriteString("A loss is blamed on its root cause. When a power loss (or a disk fault) had already taken every\n")
	b.WriteString("in-sync copy of the data, and an unclean election or KIP-966's election of the last known leader\n")
	b.WriteString("then found no replica that still held it, the election only exposed the loss: the cause is the\n")
	b.WriteString("power loss, and `" + thenPlaceholder + "` in a reason below stands for what the controller elected then.\n")
	b.WriteString("An unclean election is the cause when an in-sync copy survived it (or may have: a replica that\n")
	b.WriteString("was down may hold the data on disk).\n\n")
	b.WriteString("`int-poll-skip` and `int-nonmonotonic-poll` (within one poll) follow the rules of `poll-skip` and\n")
	b.WriteString("`nonmonotonic-poll`.\n\n")
	b.WriteString("## What each configuration promises\n\n| setting | promises | anomalies that break it |\n| --- | --- | --- |\n")
	for _, g := range Guarantees {
		b.WriteString("| " + mdCell(g.Setting) + " | " + mdCell(g.Promises) + " | " + strings.Join(g.Anomalies, ", ") + " |\n")
	}
	b.WriteString("\n## Rules, by anomaly\n")
	seen := map[string]bool{}
	var order []string
	for _, r := range VerdictRules {
		if !seen[r.Anomaly] {
			seen[r.Anomaly] = true
			order = append(order, r.Anomaly)
		}
	}
	for _, typ := range order {
		b.WriteString("\n### " + typ + "\n\n| when | verdict | because |\n| --- | --- | --- |\n")
		for _, r := range VerdictRules {
			if r.Anomaly != typ {
				continue
			}
			when := r.When
			if when == "" {
				when = "otherwise"
			}
			b.WriteString("| " + mdCell(when) + " | " + r.Verdict + " | " + mdCell(r.Because) + " |\n")
		}
	}
	var missing []string
	for _, typ := range AnomalyTypes {
		if !seen[typ] && typ != IntPollSkip && typ != IntNonmonotonicPoll {
			missing = append(missing, typ)
		}
	}
	sort.Strings(missing)
	for _, typ := range missing {
		b.WriteString("\n### " + typ + "\n\nAlways a violation.\n")
	}
	return b.String()
}

func mdCell(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

// lossReusedOffsets explains a cycle whose ww order crosses a loss of
// committed data: the log written after the loss reuses the lost records'
// offsets, so a record appended later can stand at a lower offset.
const lossReusedOffsets = "committed data was lost (CAUSE) and its offsets reused: a record appended after the loss can stand below one appended before it, so the log's offset order is not the order of appends the ww edges assume"

func lossReusedOffsetsWhy(f *Facts) string {
	return strings.Replace(lossReusedOffsets, "CAUSE", f.Loss.Cause, 1)
}
