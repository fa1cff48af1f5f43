package raft

import (
	"encoding/json"
	"errors"
	"fmt"

	"kafkasim/model/storage"
	"kafkasim/sim"
)

// Role is a replica's role in the quorum (QuorumState's states).
type Role uint8

// Roles. Observers (brokers) are only ever Unattached or Follower.
const (
	Unattached Role = iota
	Prospective
	Candidate
	Leader
	Follower
	Resigned
)

var roleNames = [...]string{"unattached", "prospective", "candidate", "leader", "follower", "resigned"}

// String names the role.
func (r Role) String() string { return roleNames[r] }

// quorumState is what a voter persists before acting on it: the quorum-state
// file. Prospective and Resigned are never persisted.
type quorumState struct {
	Epoch    int32      `json:"leaderEpoch"`
	VotedFor sim.NodeID `json:"votedId"`
	Leader   sim.NodeID `json:"leaderId"`
}

func readQuorumState(d sim.NodeDisk, file string) (quorumState, error) {
	payload, err := storage.ReadCheckpoint(d, file)
	if errors.Is(err, sim.ErrNotExist) {
		return quorumState{VotedFor: sim.NoNode, Leader: sim.NoNode}, nil
	}
	if err != nil {
		return quorumState{}, err
	}
	var s quorumState
	if err := json.Unmarshal(payload, &s); err != nil {
		return quorumState{}, fmt.Errorf("quorum-state: %w", err)
	}
	return s, nil
}

// persistedState is the token of the quorum-state file's last fsync.
type persistedState struct{ epoch int32 }

func writeQuorumState(g *storage.Gate, file string, s quorumState) error {
	payload, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return storage.WriteCheckpoint(g, file, payload, persistedState{epoch: s.Epoch})
}
