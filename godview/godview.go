// Package godview holds what the simulator's god view saw happen in a run
// that Kafka permits to cost data or order: committed data lost, records
// held back, batches a leader's producer state forgot, power losses, unclean
// elections, partitions added. The model records these facts (model/audit,
// model/cluster) and the checker looks them up by kind to tell a permitted
// cost from a broken guarantee (docs/checker.md). A history checked without
// a god view carries only what its scenario's faults may do.
//
// A new kind of excuse is a constant here (and in Kinds, so the run store's
// file of facts reads it back), an append where the model sees it happen,
// and a verdict rule that looks it up; a new field only for what no field
// names yet (Process: the reader a stale-leader-read is of), written to the
// file and read back by jsonl.go.
package godview

// Kind is what a fact says happened.
type Kind string

// The kinds of fact.
const (
	// Loss: committed data [From, To) of Partition lost in a way Kafka's
	// configuration permits, for Cause (exposed by ExposedBy), At; Records
	// records; LeaderEnd, for a loss at an election, the new leader's log
	// end then.
	Loss Kind = "loss"
	// HeldBack: offsets [From, To) in Partition's leader's log above a high
	// watermark that cannot reach them (a replica stuck by undetected
	// corruption keeps the ISR below min.insync.replicas).
	HeldBack Kind = "held-back"
	// ForgottenBatch: a committed idempotent batch [From, To) whose retry a
	// leader answered OUT_OF_ORDER_SEQUENCE_NUMBER, its producer state
	// (rebuilt at a restart) no longer holding it.
	ForgottenBatch Kind = "forgotten-batch"
	// ForgottenProducer: a committed idempotent batch [From, To) whose retry
	// a leader took as new: retention had deleted it and the leader's
	// producer state no longer knew Producer, or knew it only from an
	// earlier such retry that this one followed in sequence.
	ForgottenProducer Kind = "forgotten-producer"
	// UnknownProducerAppend: a batch [From, To) a leader appended, at a
	// sequence other than 0, from a Producer its producer state held
	// nothing of (KIP-360).
	UnknownProducerAppend Kind = "unknown-producer-append"
	// MistakenDuplicate: a leader answered a batch of Producer as a
	// duplicate of the different batch it held at [From, To), one with the
	// same producer id, epoch and sequences (ProducerStateEntry compares
	// sequences only): nothing was appended, and the producer was
	// acknowledged with those offsets. Only a producer id and epoch handed
	// out twice (a transaction coordinator that reloaded a transactional
	// id from a __transaction_state that had lost its later epochs) makes
	// two batches share them.
	MistakenDuplicate Kind = "mistaken-duplicate"
	// Resurrected: offsets [From, To) an unclean election made the log
	// although they were never committed.
	Resurrected Kind = "resurrected"
	// PowerLoss: a fault that lost a broker's page cache (a crash, a power
	// loss, a torn write, a wiped disk), At.
	PowerLoss Kind = "power-loss"
	// UncleanElection: an unclean election (or KIP-966's election of the
	// last known leader) that lost committed data of Partition, At, as its
	// cause or by exposing an earlier loss.
	UncleanElection Kind = "unclean-election"
	// PartitionsAdded: Topic's partition count grew (its keys moved between
	// partitions).
	PartitionsAdded Kind = "partitions-added"
	// UncleanElectionRequested: an operator asked for an unclean election
	// (ElectLeaders with ElectionType.UNCLEAN, KIP-460: kafkasim's
	// elect-leaders fault) of Partition, or of every partition when
	// Partition is "", At: the controller may elect a replica outside the
	// ISR whatever unclean.leader.election.enable says.
	UncleanElectionRequested Kind = "unclean-election-requested"
	// StaleLeaderRead: reader Process took records [From, To) of Partition,
	// At, from a fetch it had sent under an older leader epoch than the one
	// it then knew: a deposed leader's answer that Kafka's consumer accepts
	// because it asked from the position it still holds
	// (FetchCollector checks the fetch offset only). What it read there is
	// the deposed leader's, and it goes on from past it at the new leader.
	StaleLeaderRead Kind = "stale-leader-read"
	// OutOfRangeReset: the leader reader Process fetched Partition from
	// answered OFFSET_OUT_OF_RANGE at its position From (retention had
	// raised that leader's log start past it), and auto.offset.reset moved
	// the position on to To, the log start ListOffsets gave, At. The records
	// in [From, To) were gone from that leader's log; another replica, whose
	// log start its own retention had not raised as far (each replica
	// deletes on its own: Kafka's UnifiedLog.deleteOldSegments), may still
	// hold them and lead later.
	OutOfRangeReset Kind = "out-of-range-reset"
	// OutOfRangeRewind: the leader reader Process fetched Partition from
	// answered OFFSET_OUT_OF_RANGE at its position To, and
	// auto.offset.reset moved the position back to From, the log start
	// ListOffsets gave, At: a log start below the position that was out of
	// range (a power loss undid the leader's unsynced segment deletions,
	// or a replica whose retention had not gone as far led by then). Kafka's
	// consumer seeks to whatever ListOffsets answers
	// (SubscriptionState.maybeSeekUnvalidated): the reader reads [From, To)
	// again.
	OutOfRangeRewind Kind = "out-of-range-rewind"
	// ConfigAltered: an operator's IncrementalAlterConfigs (kafkasim's
	// alter-config fault) set Config to Value for Topic, or cluster-wide
	// (the broker default, for the topics that do not set it) when Topic is
	// "", in force from At (its commit in the metadata log): what a write
	// acknowledged later, or a loss after, is judged against.
	ConfigAltered Kind = "config-altered"
	// HangingTransaction: when the run ended, Partition's last stable
	// offset was held at From by a transaction of TransactionalID
	// (Producer: its producer id) that the transaction coordinator no
	// longer held open (KIP-664's hanging transaction: its markers never
	// reached the partition, or the coordinator lost or never had the
	// transaction), At when the model found it. Nothing Kafka does
	// resolves it: its transaction timeout runs on the coordinator, which
	// has nothing to time out. Cause and ExposedBy: those of the loss Kafka
	// permits that took the committed marker which had ended the
	// transaction there ("" when none did; KAFKA-20716).
	HangingTransaction Kind = "hanging-transaction"
)

// NoProducer is Fact.Producer for a kind that names no producer (Kafka's
// NO_PRODUCER_ID).
const NoProducer = -1

// Fact is one thing the god view saw happen. Which fields a kind fills is
// said at the kind.
type Fact struct {
	Kind      Kind
	Partition string // "topic-N"
	From, To  int64  // offsets [From, To)
	Records   int    // records lost (Loss)
	// Producer is the producer id of the batch (ForgottenBatch,
	// ForgottenProducer, UnknownProducerAppend, MistakenDuplicate),
	// NoProducer otherwise.
	Producer int64
	// Cause is a loss's root cause: "unclean-election", "power-loss",
	// "disk-wipe" or "disk-corruption" (HangingTransaction: its marker's
	// loss's).
	Cause string
	// ExposedBy: "unclean-election" when the cause (a power loss or a disk
	// fault) had already taken every in-sync copy, and an unclean election
	// (or KIP-966's election of the last known leader) only exposed the
	// loss; "" otherwise.
	ExposedBy string
	// At is when it happened, in virtual nanoseconds of the run (0:
	// unknown): a write acknowledged after a loss was not taken by it.
	At int64
	// LeaderEnd: a loss at an election, the new leader's log end then (0
	// otherwise). Its records in [From, LeaderEnd) are older epochs' (never
	// committed) that stand where committed ones stood; a reader's KIP-320
	// validation cannot see that divergence.
	LeaderEnd int64
	Topic     string // PartitionsAdded, ConfigAltered
	Process   string // StaleLeaderRead, OutOfRangeReset, OutOfRangeRewind: the reader
	// Config and Value: ConfigAltered's config name and new value.
	Config, Value string
	// TransactionalID: HangingTransaction's transactional.id ("" when
	// the partition's producer state does not say).
	TransactionalID string
}

// Covers reports whether offset of partition lies in the fact's [From, To).
func (f *Fact) Covers(partition string, offset int64) bool {
	return f.Partition == partition && f.From <= offset && offset < f.To
}

// List is a run's facts, by kind in the order they happened, and whether a
// god view recorded them. The zero List is a history checked without a god
// view and with nothing known.
type List struct {
	godView bool
	all     []Fact // in the order given: the run store writes them so
	byKind  map[Kind][]Fact
}

// Seen is what the simulator's god view saw happen in a run.
func Seen(facts ...Fact) List { return newList(true, facts) }

// Scheduled is what a scenario's faults may do, for a history checked
// without the simulator's god view: nothing it lacks a fact of is known not
// to have happened.
func Scheduled(facts ...Fact) List { return newList(false, facts) }

func newList(godView bool, facts []Fact) List {
	l := List{godView: godView, all: append([]Fact(nil), facts...)}
	for _, f := range facts {
		if l.byKind == nil {
			l.byKind = map[Kind][]Fact{}
		}
		l.byKind[f.Kind] = append(l.byKind[f.Kind], f)
	}
	return l
}

// GodView reports whether the simulator's god view recorded the list: a
// kind it holds no fact of did not happen. Without one, only what the
// scenario's faults may do is known.
func (l List) GodView() bool { return l.godView }

// All lists every fact, of every kind, in the order the list was made
// with. The caller must not change them.
func (l List) All() []Fact { return l.all }

// Of lists the facts of kind, in the order they happened. The caller must
// not change them.
func (l List) Of(kind Kind) []Fact { return l.byKind[kind] }

// Count is how many facts of kind the list holds.
func (l List) Count(kind Kind) int { return len(l.byKind[kind]) }

// Covers reports whether offset of partition lies inside a fact of kind.
func (l List) Covers(kind Kind, partition string, offset int64) bool {
	for i := range l.byKind[kind] {
		if l.byKind[kind][i].Covers(partition, offset) {
			return true
		}
	}
	return false
}

// First is the first fact of kind for which match holds.
func (l List) First(kind Kind, match func(f *Fact) bool) (Fact, bool) {
	for i := range l.byKind[kind] {
		if f := &l.byKind[kind][i]; match(f) {
			return *f, true
		}
	}
	return Fact{}, false
}
