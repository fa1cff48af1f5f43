package raft

import (
	"fmt"
	"strconv"

	"kafkasim/model/proto"
	"kafkasim/sim"
)

// The KRaft RPCs, with the fields of Kafka's Vote, BeginQuorumEpoch,
// EndQuorumEpoch and Fetch (on the __cluster_metadata partition) that the
// protocol's decisions depend on. Cluster ids, directory ids and voter keys
// (KIP-853) are left out: the voter set is static.

// VoteRequest asks for a vote, or with PreVote (KIP-996) for a pre-vote that
// commits the receiver to nothing.
type VoteRequest struct {
	// Epoch is the candidate's epoch: its new epoch for a vote, its current
	// epoch for a pre-vote.
	Epoch           int32
	CandidateID     sim.NodeID
	LastOffsetEpoch int32
	LastOffset      int64 // log end offset
	PreVote         bool
}

// VoteResponse answers a VoteRequest with the receiver's view.
type VoteResponse struct {
	Error       proto.ErrorCode
	LeaderID    sim.NodeID
	LeaderEpoch int32
	Granted     bool
	// PreVote echoes the request so the nominee can match the answer.
	PreVote bool
}

// BeginQuorumEpochRequest announces a new leader to a voter.
type BeginQuorumEpochRequest struct {
	LeaderID sim.NodeID
	Epoch    int32
}

// BeginQuorumEpochResponse acknowledges it.
type BeginQuorumEpochResponse struct {
	Error       proto.ErrorCode
	LeaderID    sim.NodeID
	LeaderEpoch int32
}

// EndQuorumEpochRequest tells the voters that the leader resigned, and who
// should try first.
type EndQuorumEpochRequest struct {
	LeaderID            sim.NodeID
	Epoch               int32
	PreferredSuccessors []sim.NodeID
}

// EndQuorumEpochResponse acknowledges it.
type EndQuorumEpochResponse struct {
	Error       proto.ErrorCode
	LeaderID    sim.NodeID
	LeaderEpoch int32
}

// FetchRequest pulls the metadata log from the leader. FetchOffset is the
// fetcher's log end offset, and for a voter it is durable: the leader counts
// it towards the high watermark.
type FetchRequest struct {
	ReplicaID          sim.NodeID
	CurrentLeaderEpoch int32
	FetchOffset        int64
	LastFetchedEpoch   int32
	// HighWatermark is the fetcher's; the leader answers at once when its
	// own differs (Kafka 4.2), so commits propagate without waiting out the
	// long poll.
	HighWatermark int64
	Observer      bool
}

// DivergingEpoch tells a fetcher where its log stops matching the leader's:
// the largest epoch not above its last fetched epoch, and where that epoch ends
// in the leader's log.
type DivergingEpoch struct {
	Epoch     int32
	EndOffset int64
}

// FetchResponse carries entries from FetchOffset on, or a divergence.
type FetchResponse struct {
	Error          proto.ErrorCode
	LeaderID       sim.NodeID
	LeaderEpoch    int32
	HighWatermark  int64
	Diverging      *DivergingEpoch
	Entries        []Entry
	RequestedEpoch int32 // echo of CurrentLeaderEpoch, to drop stale answers
	FetchOffset    int64 // echo of FetchOffset, to drop stale answers
}

// MessageName implements sim.Message.
func (*VoteRequest) MessageName() string { return "Vote" }

// MessageName implements sim.Message.
func (*VoteResponse) MessageName() string { return "VoteResponse" }

// MessageName implements sim.Message.
func (*BeginQuorumEpochRequest) MessageName() string { return "BeginQuorumEpoch" }

// MessageName implements sim.Message.
func (*BeginQuorumEpochResponse) MessageName() string { return "BeginQuorumEpochResponse" }

// MessageName implements sim.Message.
func (*EndQuorumEpochRequest) MessageName() string { return "EndQuorumEpoch" }

// MessageName implements sim.Message.
func (*EndQuorumEpochResponse) MessageName() string { return "EndQuorumEpochResponse" }

// MessageName implements sim.Message.
func (*FetchRequest) MessageName() string { return "Fetch(metadata)" }

// MessageName implements sim.Message.
func (*FetchResponse) MessageName() string { return "FetchResponse(metadata)" }

func (m *VoteRequest) String() string {
	kind := "Vote"
	if m.PreVote {
		kind = "PreVote"
	}
	return fmt.Sprintf("%s epoch=%d candidate=%d last=(%d,%d)", kind, m.Epoch, m.CandidateID, m.LastOffsetEpoch, m.LastOffset)
}

func (m *VoteResponse) String() string {
	return fmt.Sprintf("VoteResponse pre=%v granted=%v epoch=%d leader=%d err=%s", m.PreVote, m.Granted, m.LeaderEpoch, m.LeaderID, m.Error)
}

func (m *FetchRequest) String() string { return string(m.AppendDetail(nil)) }

// AppendDetail appends String's words (sim.DetailAppender): every broker's
// and controller's metadata fetches are in the trace, a string each
// before.
func (m *FetchRequest) AppendDetail(b []byte) []byte {
	b = append(b, "Fetch(metadata) replica="...)
	b = strconv.AppendInt(b, int64(m.ReplicaID), 10)
	b = append(b, " epoch="...)
	b = strconv.AppendInt(b, int64(m.CurrentLeaderEpoch), 10)
	b = append(b, " offset="...)
	b = strconv.AppendInt(b, m.FetchOffset, 10)
	b = append(b, " lastEpoch="...)
	b = strconv.AppendInt(b, int64(m.LastFetchedEpoch), 10)
	b = append(b, " hw="...)
	return strconv.AppendInt(b, m.HighWatermark, 10)
}

func (m *FetchResponse) String() string { return string(m.AppendDetail(nil)) }

// AppendDetail appends String's words (sim.DetailAppender).
func (m *FetchResponse) AppendDetail(b []byte) []byte {
	b = append(b, "FetchResponse(metadata) err="...)
	b = append(b, m.Error.String()...)
	b = append(b, " leader="...)
	b = strconv.AppendInt(b, int64(m.LeaderID), 10)
	b = append(b, " epoch="...)
	b = strconv.AppendInt(b, int64(m.LeaderEpoch), 10)
	b = append(b, " hw="...)
	b = strconv.AppendInt(b, m.HighWatermark, 10)
	b = append(b, " entries="...)
	b = strconv.AppendInt(b, int64(len(m.Entries)), 10)
	if m.Diverging != nil {
		b = append(b, " diverging=("...)
		b = strconv.AppendInt(b, int64(m.Diverging.Epoch), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, m.Diverging.EndOffset, 10)
		b = append(b, ')')
	}
	return b
}
