// Package raft is KRaft, Kafka's pull-based Raft, as a deterministic state
// machine: the quorum of controllers that replicates the cluster metadata log,
// and the brokers that follow it as observers.
//
// What it models, after Kafka 4.x's KafkaRaftClient and QuorumState:
//   - roles Unattached, Prospective (KIP-996 pre-vote), Candidate, Leader,
//     Follower and Resigned; a voter persists (epoch, voted id, leader id) and
//     fsyncs before any message that depends on it leaves;
//   - elections: a random election timeout in [T, 2T) (T =
//     controller.quorum.election.timeout.ms), pre-vote before vote, votes
//     granted only to logs at least as up to date (last epoch, then end
//     offset); a follower that has fetched from its leader refuses pre-votes;
//   - followers and observers fetch from the leader; the leader finds where a
//     fetcher's log diverges (the largest epoch not above its last fetched
//     epoch) and the fetcher truncates there, in several rounds if needed; a
//     voter fsyncs what it appended before its next fetch, which acknowledges it;
//   - the leader appends a leader-change entry at the start of its epoch and
//     advances the high watermark to the offset a majority of voters hold only
//     once that entry is on a majority (never backwards);
//   - check quorum: a leader that hears no fetch from a majority within 1.5 ×
//     controller.quorum.fetch.timeout.ms resigns; BeginQuorumEpoch is resent to
//     voters that have not fetched for half the fetch timeout; EndQuorumEpoch on
//     resignation, with preferred successors ordered by fetched offset.
//
// Simplifications: a static voter set (no KIP-853 reconfiguration), no
// snapshots (the whole log is kept), entries appended as soon as they are
// proposed (no 25 ms linger), offsets that count batches.
package raft

import (
	"fmt"
	"slices"
	"time"

	"kafkasim/model/storage"
	"kafkasim/sim"
)

// Config configures one replica.
type Config struct {
	// Voters are the controllers; a replica not among them is an observer.
	Voters []sim.NodeID
	// Dir is the folder of the metadata log and the quorum-state file.
	Dir string
	// ElectionTimeout is controller.quorum.election.timeout.ms (1000 ms).
	ElectionTimeout time.Duration
	// FetchTimeout is controller.quorum.fetch.timeout.ms (2000 ms).
	FetchTimeout time.Duration
	// RequestTimeout is controller.quorum.request.timeout.ms (2000 ms).
	RequestTimeout time.Duration
	// ElectionBackoffMax is controller.quorum.election.backoff.max.ms (1000 ms).
	ElectionBackoffMax time.Duration
	// RetryBackoff is controller.quorum.retry.backoff.ms (20 ms).
	RetryBackoff time.Duration
	// FetchMaxWait is how long the leader holds a fetch with nothing new (500 ms).
	FetchMaxWait time.Duration
	// FetchMaxEntries bounds the entries in one fetch response.
	FetchMaxEntries int
	// BugCommitPriorEpoch switches on the bug zoo's kraft-commit-prior-epoch:
	// the leader commits entries of earlier epochs by counting replicas,
	// without first committing an entry of its own epoch.
	BugCommitPriorEpoch bool
	// Audit, when set, sees every change the god-view invariants need.
	Audit Auditor
	// OnCommit is called when the high watermark advances.
	OnCommit func(hw int64)
	// OnTruncate is called after the log is truncated to an offset.
	OnTruncate func(to int64)
	// OnRoleChange is called after every change of role, epoch or leader.
	OnRoleChange func()
}

// DefaultConfig has Kafka 4.x's defaults.
func DefaultConfig(voters []sim.NodeID) Config {
	return Config{
		Voters:             voters,
		Dir:                "__cluster_metadata-0",
		ElectionTimeout:    1000 * time.Millisecond,
		FetchTimeout:       2000 * time.Millisecond,
		RequestTimeout:     2000 * time.Millisecond,
		ElectionBackoffMax: 1000 * time.Millisecond,
		RetryBackoff:       20 * time.Millisecond,
		FetchMaxWait:       500 * time.Millisecond,
		FetchMaxEntries:    500,
	}
}

// Auditor sees what the god-view invariants check.
type Auditor interface {
	// EpochPersisted: the replica's quorum state, at epoch, is durable.
	EpochPersisted(node sim.NodeID, epoch int32)
	// BecameLeader: the replica leads epoch.
	BecameLeader(node sim.NodeID, epoch int32)
	// HighWatermark: the replica, in epoch, advanced its high watermark to
	// hw.
	HighWatermark(node sim.NodeID, epoch int32, hw int64, log *Log)
	// Diverged: the replica, in epoch with its high watermark at hw, is
	// about to truncate its log to to, removing removed, because the leader
	// it follows says the logs diverge there.
	Diverged(node sim.NodeID, epoch int32, hw, to int64, removed []Entry)
	// Fatal: the replica met a state Kafka treats as fatal.
	Fatal(node sim.NodeID, what string)
}

type timerKind uint8

const (
	timerElection     timerKind = iota // election timeout, fetch timeout, resign timeout
	timerFetchRequest                  // an in-flight fetch timed out
	timerFetchRetry                    // back off before fetching again
	timerCheckQuorum
	timerBeginQuorum
	timerParkedFetch
	timerVoteRetry
)

// Timer is what the raft asks its node to hand back.
type Timer struct {
	kind    timerKind
	gen     uint64
	replica sim.NodeID
}

// Raft is one replica of the metadata log.
type Raft struct {
	cfg       Config
	env       sim.Env
	gate      *storage.Gate
	id        sim.NodeID
	observer  bool
	log       *Log
	stateFile string

	role     Role
	epoch    int32
	votedFor sim.NodeID
	leader   sim.NodeID
	hw       int64
	// durableEnd is how much of this replica's own log is fsynced: a leader
	// counts only that towards the high watermark.
	durableEnd  int64
	truncations uint64

	gen           uint64 // bumped on every role change: older timers are stale
	electionTimer sim.TimerID

	// Prospective and Candidate.
	votes map[sim.NodeID]bool // voter -> granted

	// Follower and observer fetching.
	hasFetchedFromLeader bool
	fetchInFlight        bool
	fetchTarget          sim.NodeID
	fetchOffset          int64
	fetchTimer           sim.TimerID
	bootstrapNext        int

	ls *leaderState

	stopping bool
	fatal    string
}

// New creates a replica over env's disk, sending through gate. It reads
// nothing until Start.
func New(env sim.Env, gate *storage.Gate, cfg Config) *Raft {
	voters := slices.Clone(cfg.Voters)
	slices.Sort(voters)
	cfg.Voters = voters
	return &Raft{cfg: cfg, env: env, gate: gate, id: env.ID(), observer: !slices.Contains(voters, env.ID()),
		votedFor: sim.NoNode, leader: sim.NoNode, stateFile: cfg.Dir + "/quorum-state"}
}

// Start recovers the log and the quorum state and takes up the role they imply.
func (r *Raft) Start() {
	var cut int64
	r.log, cut = OpenLog(r.env.Disk(), r.cfg.Dir+"/log")
	if cut > 0 {
		r.env.Note("raft", fmt.Sprintf("recovery cut %d bytes of torn metadata log", cut))
	}
	r.gate.FsyncWith(r.log.File(), r.mark()) // a killed process's page cache may hold unsynced entries
	st, err := readQuorumState(r.env.Disk(), r.stateFile)
	if err != nil {
		r.env.Note("raft", "quorum-state unreadable, starting unattached at the log's epoch: "+err.Error())
		st = quorumState{VotedFor: sim.NoNode, Leader: sim.NoNode}
	}
	if st.Epoch < r.log.LastEpoch() {
		st = quorumState{Epoch: r.log.LastEpoch(), VotedFor: sim.NoNode, Leader: sim.NoNode}
	}
	r.epoch, r.votedFor, r.leader = st.Epoch, st.VotedFor, st.Leader
	switch {
	case r.observer:
		r.leader = sim.NoNode
		r.becomeUnattachedObserver()
	case st.Leader == r.id:
		// A leader that restarts may neither vote again nor reuse its epoch.
		r.becomeResigned(nil)
	case len(r.cfg.Voters) == 1:
		r.becomeCandidate()
	case st.VotedFor == r.id && st.Leader == sim.NoNode:
		r.role = Candidate
		r.startNomination()
	case st.Leader != sim.NoNode:
		r.becomeFollower(st.Epoch, st.Leader)
	default:
		r.becomeUnattached(st.Epoch, st.VotedFor)
	}
}

// durableMark is the token of an fsync of the log: once it completes, the log
// is durable up to end, unless it was truncated since.
type durableMark struct {
	end         int64
	truncations uint64
}

func (r *Raft) mark() durableMark {
	return durableMark{end: r.log.EndOffset(), truncations: r.truncations}
}

// Accessors for the node and the god view.

// Role is the replica's role.
func (r *Raft) Role() Role { return r.role }

// Epoch is the replica's epoch.
func (r *Raft) Epoch() int32 { return r.epoch }

// Leader is the leader the replica knows of, or sim.NoNode.
func (r *Raft) Leader() sim.NodeID { return r.leader }

// HighWatermark is the replica's high watermark: entries below it are committed.
func (r *Raft) HighWatermark() int64 { return r.hw }

// Log is the replica's log (read only).
func (r *Raft) Log() *Log { return r.log }

// Voters are the quorum's voters.
func (r *Raft) Voters() []sim.NodeID { return r.cfg.Voters }

// IsVoter reports whether this replica votes.
func (r *Raft) IsVoter() bool { return !r.observer }

// Fatal is the fatal condition the replica met, if any.
func (r *Raft) Fatal() string { return r.fatal }

// IsLeader reports whether this replica leads its epoch now.
func (r *Raft) IsLeader() bool { return r.role == Leader }

func (r *Raft) majority() int { return len(r.cfg.Voters)/2 + 1 }

func (r *Raft) send(to sim.NodeID, m sim.Message) { r.gate.Send(to, m) }

func (r *Raft) after(d time.Duration, kind timerKind, replica sim.NodeID) sim.TimerID {
	return r.env.After(d, Timer{kind: kind, gen: r.gen, replica: replica})
}

func (r *Raft) randomElectionTimeout() time.Duration {
	t := r.cfg.ElectionTimeout
	if t <= 0 {
		return 0
	}
	return t + time.Duration(r.env.Rand().Int64N(int64(t)))
}

func (r *Raft) resetElectionTimer(d time.Duration) {
	r.env.Cancel(r.electionTimer)
	r.electionTimer = r.after(d, timerElection, sim.NoNode)
}

func (r *Raft) persist() {
	if r.observer {
		return
	}
	if err := writeQuorumState(r.gate, r.stateFile, quorumState{Epoch: r.epoch, VotedFor: r.votedFor, Leader: r.leader}); err != nil {
		r.die("cannot persist quorum state: " + err.Error())
	}
}

// die ends the process the way Kafka does on a metadata I/O error: halt.
func (r *Raft) die(why string) {
	r.env.Note("raft", "fatal: "+why)
	r.env.Exit()
}

func (r *Raft) changed(oldRole Role, oldEpoch int32, oldLeader sim.NodeID) {
	if r.role != oldRole || r.epoch != oldEpoch || r.leader != oldLeader {
		if r.role == Leader || (r.leader != oldLeader && r.leader != sim.NoNode) {
			r.env.Note("raft", fmt.Sprintf("%s epoch %d leader %d", r.role, r.epoch, r.leader))
		}
		if r.cfg.OnRoleChange != nil {
			r.cfg.OnRoleChange()
		}
	}
}

// transition runs a role change: it invalidates the old role's timers and
// state, and reports the change afterwards.
func (r *Raft) transition(role Role, epoch int32, leader sim.NodeID, body func()) {
	oldRole, oldEpoch, oldLeader := r.role, r.epoch, r.leader
	if epoch < r.epoch {
		// Kafka's QuorumState refuses every transition to an earlier epoch
		// (IllegalStateException, and the node halts): whatever asked for
		// it answered something this replica has moved past.
		r.fatal = fmt.Sprintf("asked to become %s of epoch %d, at epoch %d", role, epoch, r.epoch)
		r.env.Note("raft", "fatal: "+r.fatal)
		if r.cfg.Audit != nil {
			r.cfg.Audit.Fatal(r.id, r.fatal)
		}
		return
	}
	if r.role == Leader && (role != Leader || epoch != r.epoch) {
		r.ls.stop()
		r.ls = nil
	}
	r.gen++
	r.env.Cancel(r.electionTimer)
	r.env.Cancel(r.fetchTimer)
	r.fetchInFlight = false
	r.votes = nil
	r.role, r.epoch, r.leader = role, epoch, leader
	body()
	r.changed(oldRole, oldEpoch, oldLeader)
}

func (r *Raft) becomeUnattached(epoch int32, votedFor sim.NodeID) {
	r.transition(Unattached, epoch, sim.NoNode, func() {
		r.votedFor = votedFor
		r.persist()
		if !r.observer {
			r.resetElectionTimer(r.randomElectionTimeout())
		}
	})
}

func (r *Raft) becomeUnattachedObserver() {
	r.transition(Unattached, r.epoch, sim.NoNode, func() { r.fetch() })
}

func (r *Raft) becomeProspective() {
	r.transition(Prospective, r.epoch, r.leader, r.startNomination)
}

func (r *Raft) becomeCandidate() {
	r.transition(Candidate, r.epoch+1, sim.NoNode, func() {
		r.votedFor = r.id
		r.persist()
		r.startNomination()
	})
}

// startNomination asks every other voter for a pre-vote (Prospective) or a
// vote (Candidate); a nominee that is the only voter wins at once.
func (r *Raft) startNomination() {
	r.votes = map[sim.NodeID]bool{r.id: true}
	r.resetElectionTimer(r.randomElectionTimeout())
	if r.tally() {
		return
	}
	r.requestVotes()
}

func (r *Raft) requestVotes() {
	req := &VoteRequest{Epoch: r.epoch, CandidateID: r.id, LastOffsetEpoch: r.log.LastEpoch(),
		LastOffset: r.log.EndOffset(), PreVote: r.role == Prospective}
	for _, v := range r.cfg.Voters {
		if _, answered := r.votes[v]; !answered && v != r.id {
			r.send(v, req)
		}
	}
	// Vote requests are retried until answered: a voter behind a partition
	// that heals within the election timeout still gets asked.
	r.after(r.cfg.RequestTimeout, timerVoteRetry, sim.NoNode)
}

// tally acts on the votes so far; it reports whether the nomination ended.
func (r *Raft) tally() bool {
	granted, rejected := 0, 0
	for _, v := range r.cfg.Voters {
		if g, ok := r.votes[v]; ok {
			if g {
				granted++
			} else {
				rejected++
			}
		}
	}
	switch {
	case granted >= r.majority():
		if r.role == Prospective {
			r.becomeCandidate()
		} else {
			r.becomeLeader()
		}
		return true
	case rejected > len(r.cfg.Voters)-r.majority() && r.role == Prospective:
		r.loseNomination()
		return true
	}
	return false
}

// loseNomination ends a failed pre-vote: back to the leader it knew, if any.
func (r *Raft) loseNomination() {
	if r.leader != sim.NoNode && r.leader != r.id {
		r.becomeFollower(r.epoch, r.leader)
	} else {
		r.becomeUnattached(r.epoch, r.votedFor)
	}
}

func (r *Raft) becomeFollower(epoch int32, leader sim.NodeID) {
	sameEpoch := epoch == r.epoch
	r.transition(Follower, epoch, leader, func() {
		r.resetElectionTimer(r.cfg.FetchTimeout)
		if !r.observer {
			if !sameEpoch {
				r.votedFor = sim.NoNode // a vote belongs to its epoch
			}
			r.hasFetchedFromLeader = false
			r.persist()
		}
		r.fetch()
	})
}

func (r *Raft) becomeLeader() {
	r.transition(Leader, r.epoch, r.id, func() {
		r.persist()
		r.ls = newLeaderState(r)
		if r.cfg.Audit != nil {
			r.cfg.Audit.BecameLeader(r.id, r.epoch)
		}
		r.ls.epochStartOffset = r.log.EndOffset()
		r.appendLocal(Entry{Offset: r.log.EndOffset(), Epoch: r.epoch, Control: true,
			Data: []byte(fmt.Sprintf("LeaderChange leader=%d epoch=%d", r.id, r.epoch))})
		r.ls.start()
	})
}

// becomeResigned gives up leadership (or starts a restarted former leader):
// the voters are told, and after an election timeout this replica joins the
// next epoch's election.
func (r *Raft) becomeResigned(successors []sim.NodeID) {
	r.transition(Resigned, r.epoch, r.id, func() {
		req := &EndQuorumEpochRequest{LeaderID: r.id, Epoch: r.epoch, PreferredSuccessors: successors}
		for _, v := range r.cfg.Voters {
			if v != r.id {
				r.send(v, req)
			}
		}
		r.resetElectionTimer(r.randomElectionTimeout())
	})
}

// Resign gives up leadership gracefully (a controller shutting down).
func (r *Raft) Resign() {
	r.stopping = true
	if r.role == Leader {
		r.becomeResigned(r.ls.successors())
	}
}
