package raft

import (
	"slices"
	"time"

	"kafkasim/model/proto"
	"kafkasim/sim"
)

// The leader's side: serving fetches, tracking what each replica holds,
// committing, check quorum.

type replicaState struct {
	id        sim.NodeID
	voter     bool
	endOffset int64 // the fetch offset of its last valid fetch; -1 before any
	lastFetch time.Duration
	fetched   bool
}

type parkedFetch struct {
	from  sim.NodeID
	req   *FetchRequest
	timer sim.TimerID
}

type leaderState struct {
	r                *Raft
	epochStartOffset int64
	replicas         []*replicaState // sorted by id; voters first known, observers added on fetch
	fetchedVoters    map[sim.NodeID]bool
	checkQuorum      sim.TimerID
	parked           []*parkedFetch
}

func newLeaderState(r *Raft) *leaderState {
	ls := &leaderState{r: r, fetchedVoters: map[sim.NodeID]bool{}}
	for _, v := range r.cfg.Voters {
		if v != r.id {
			ls.replicas = append(ls.replicas, &replicaState{id: v, voter: true, endOffset: -1})
		}
	}
	return ls
}

func (ls *leaderState) start() {
	r := ls.r
	if len(r.cfg.Voters) > 1 {
		ls.checkQuorum = r.after(r.checkQuorumTimeout(), timerCheckQuorum, sim.NoNode)
	}
	ls.sendBeginQuorum()
}

func (r *Raft) checkQuorumTimeout() time.Duration { return r.cfg.FetchTimeout * 3 / 2 }

// stop ends leadership: parked fetches are answered with the news.
func (ls *leaderState) stop() {
	r := ls.r
	for _, p := range ls.parked {
		r.env.Cancel(p.timer)
		r.send(p.from, &FetchResponse{Error: proto.NotLeaderOrFollower, LeaderID: sim.NoNode, LeaderEpoch: r.epoch,
			HighWatermark: r.hw, RequestedEpoch: p.req.CurrentLeaderEpoch, FetchOffset: p.req.FetchOffset})
	}
	ls.parked = nil
	r.env.Cancel(ls.checkQuorum)
}

func (ls *leaderState) replica(id sim.NodeID) *replicaState {
	i, found := slices.BinarySearchFunc(ls.replicas, id, func(s *replicaState, id sim.NodeID) int { return int(s.id) - int(id) })
	if found {
		return ls.replicas[i]
	}
	s := &replicaState{id: id, endOffset: -1}
	ls.replicas = slices.Insert(ls.replicas, i, s)
	return s
}

func (ls *leaderState) fire(t Timer) {
	r := ls.r
	switch t.kind {
	case timerCheckQuorum:
		// No fetch from a majority in a whole check-quorum window: this
		// leader may be cut off, and another may be elected; step aside.
		r.env.Note("raft", "check quorum failed: resigning")
		r.becomeResigned(ls.successors())
	case timerBeginQuorum:
		ls.sendBeginQuorum()
	case timerParkedFetch:
		for i, p := range ls.parked {
			if p.from == t.replica {
				ls.parked = slices.Delete(ls.parked, i, i+1)
				ls.respond(p.from, p.req)
				break
			}
		}
	}
}

// sendBeginQuorum tells every voter that has not fetched in half a fetch
// timeout who leads, and checks again after that.
func (ls *leaderState) sendBeginQuorum() {
	r := ls.r
	now := r.env.Now()
	half := r.cfg.FetchTimeout / 2
	for _, s := range ls.replicas {
		if s.voter && (!s.fetched || now-s.lastFetch >= half) {
			r.send(s.id, &BeginQuorumEpochRequest{LeaderID: r.id, Epoch: r.epoch})
		}
	}
	r.after(half, timerBeginQuorum, sim.NoNode)
}

// successors lists the other voters, those holding the most of the log first.
func (ls *leaderState) successors() []sim.NodeID {
	var voters []*replicaState
	for _, s := range ls.replicas {
		if s.voter {
			voters = append(voters, s)
		}
	}
	slices.SortStableFunc(voters, func(a, b *replicaState) int {
		if a.endOffset != b.endOffset {
			if a.endOffset > b.endOffset {
				return -1
			}
			return 1
		}
		return int(a.id) - int(b.id)
	})
	ids := make([]sim.NodeID, len(voters))
	for i, v := range voters {
		ids[i] = v.id
	}
	return ids
}

// updateHighWatermark commits the offset a majority of voters hold, once an
// entry of this leader's epoch is among it.
func (ls *leaderState) updateHighWatermark() {
	r := ls.r
	ends := []int64{r.durableEnd}
	for _, s := range ls.replicas {
		if s.voter {
			ends = append(ends, s.endOffset)
		}
	}
	slices.Sort(ends)
	slices.Reverse(ends)
	m := ends[len(r.cfg.Voters)/2]
	if m <= ls.epochStartOffset && !r.cfg.BugCommitPriorEpoch {
		// Raft §5.4.2: entries of earlier epochs are committed only by
		// committing one of this epoch (the leader-change entry) after them.
		return
	}
	if m > r.hw {
		r.advanceHighWatermark(m)
		ls.releaseParked()
	}
}

func (r *Raft) handleFetch(from sim.NodeID, m *FetchRequest) {
	reply := func(err proto.ErrorCode) {
		r.send(from, &FetchResponse{Error: err, LeaderID: r.leader, LeaderEpoch: r.epoch, HighWatermark: r.hw,
			RequestedEpoch: m.CurrentLeaderEpoch, FetchOffset: m.FetchOffset})
	}
	if m.FetchOffset < 0 || m.LastFetchedEpoch < 0 || m.LastFetchedEpoch > m.CurrentLeaderEpoch {
		reply(proto.InvalidRequest)
		return
	}
	if m.CurrentLeaderEpoch < r.epoch {
		reply(proto.FencedLeaderEpoch)
		return
	}
	if m.CurrentLeaderEpoch > r.epoch {
		reply(proto.UnknownLeaderEpoch)
		return
	}
	if r.role != Leader {
		reply(proto.NotLeaderOrFollower)
		return
	}
	ls := r.ls
	// Where does the fetcher's log stop matching ours?
	if m.FetchOffset > 0 {
		epoch, end := r.log.EndOffsetForEpoch(m.LastFetchedEpoch)
		if epoch != m.LastFetchedEpoch || end < m.FetchOffset {
			r.send(from, &FetchResponse{Error: proto.None, LeaderID: r.id, LeaderEpoch: r.epoch, HighWatermark: r.hw,
				Diverging: &DivergingEpoch{Epoch: epoch, EndOffset: end}, RequestedEpoch: m.CurrentLeaderEpoch, FetchOffset: m.FetchOffset})
			return
		}
	}
	s := ls.replica(from)
	s.voter = slices.Contains(r.cfg.Voters, from)
	s.endOffset = m.FetchOffset
	s.lastFetch = r.env.Now()
	s.fetched = true
	if s.voter {
		ls.noteVoterFetch(from)
		ls.updateHighWatermark()
	}
	if r.role != Leader {
		return // committing resigned us? (it cannot; kept for safety)
	}
	for i, p := range ls.parked {
		if p.from == from {
			r.env.Cancel(p.timer)
			ls.parked = slices.Delete(ls.parked, i, i+1)
			break
		}
	}
	if m.FetchOffset < r.log.EndOffset() || m.HighWatermark != r.hw {
		ls.respond(from, m)
		return
	}
	p := &parkedFetch{from: from, req: m}
	p.timer = r.after(r.cfg.FetchMaxWait, timerParkedFetch, from)
	ls.parked = append(ls.parked, p)
}

func (ls *leaderState) noteVoterFetch(from sim.NodeID) {
	r := ls.r
	ls.fetchedVoters[from] = true
	if len(ls.fetchedVoters) >= r.majority()-1 {
		clear(ls.fetchedVoters)
		r.env.Cancel(ls.checkQuorum)
		ls.checkQuorum = r.after(r.checkQuorumTimeout(), timerCheckQuorum, sim.NoNode)
	}
}

func (ls *leaderState) respond(to sim.NodeID, m *FetchRequest) {
	r := ls.r
	r.send(to, &FetchResponse{Error: proto.None, LeaderID: r.id, LeaderEpoch: r.epoch, HighWatermark: r.hw,
		Entries: r.log.Entries(m.FetchOffset, r.cfg.FetchMaxEntries), RequestedEpoch: m.CurrentLeaderEpoch, FetchOffset: m.FetchOffset})
}

// releaseParked answers every parked fetch that now has something new.
func (ls *leaderState) releaseParked() {
	r := ls.r
	kept := ls.parked[:0]
	for _, p := range ls.parked {
		if p.req.FetchOffset < r.log.EndOffset() || p.req.HighWatermark != r.hw {
			r.env.Cancel(p.timer)
			ls.respond(p.from, p.req)
		} else {
			kept = append(kept, p)
		}
	}
	clear(ls.parked[len(kept):])
	ls.parked = kept
}

// appendLocal appends an entry of this leader's own and fsyncs it; the leader
// counts it towards the high watermark once durable.
func (r *Raft) appendLocal(e Entry) bool {
	if err := r.log.Append(e); err != nil {
		r.die("cannot append to the metadata log: " + err.Error())
		return false
	}
	r.gate.FsyncWith(r.log.File(), r.mark())
	if r.ls != nil {
		r.ls.releaseParked()
	}
	return true
}

// Propose appends data to the log if this replica leads; it returns the
// entry's offset. The entry is committed once the high watermark passes it,
// which the node learns through OnCommit.
func (r *Raft) Propose(data []byte) (int64, bool) {
	if r.role != Leader || r.stopping {
		return 0, false
	}
	e := Entry{Offset: r.log.EndOffset(), Epoch: r.epoch, Data: data, Memo: &Memo{}}
	if !r.appendLocal(e) {
		return 0, false
	}
	return e.Offset, true
}
