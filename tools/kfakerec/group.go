package main

// group.go: consumer group members (kgo.ConsumerGroup, subscribe mode) that
// poll, commit what they polled, and record their rebalance callbacks.

import (
	"context"
	"errors"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// commitTimeout bounds one CommitRecords call.
const commitTimeout = 5 * time.Second

// member is one group member process ("c-0", ...).
//
// A history process must have at most one operation in flight. franz-go runs
// the OnPartitions* callbacks on its own goroutines, possibly while the
// member's poll loop is inside PollRecords, so the loop (poll + commit) and
// the callbacks take m.mu around what they record. Without
// BlockRebalanceOnPoll a poll never waits for a callback, so this cannot
// deadlock.
//
// Callbacks must not wait long: franz-go fetches the committed offsets of new
// partitions only after OnPartitionsAssigned returns, and a slow callback lets
// the next rebalance cancel that fetch, leaving partitions unconsumed for a
// whole generation. So a callback announces itself (cbWaiting), cancels the
// in-flight poll, and the loop does not start another poll until it is done.
type member struct {
	env     *Env
	name    string
	cl      *kgo.Client
	mu      sync.Mutex
	owned   map[string]bool // "topic-partition" this member owns now
	dead    bool            // crashed: its callbacks are no longer recorded
	tracker *commitTracker
	stop    chan struct{}
	done    chan struct{}
	// crashing asks the loop to crash halfway through its next non-empty
	// poll's records; crashed closes once it has.
	crashing, crashed chan struct{}

	cbWaiting  atomic.Int32       // callbacks waiting for mu
	pollMu     sync.Mutex         // guards pollCancel
	pollCancel context.CancelFunc // cancels the in-flight poll, nil if none
}

func startMember(env *Env, name string, tracker *commitTracker) (*member, error) {
	m := &member{env: env, name: name, owned: map[string]bool{}, tracker: tracker,
		stop: make(chan struct{}), done: make(chan struct{}), crashing: make(chan struct{}), crashed: make(chan struct{})}
	cfg := env.cfg
	opts := append(env.clientOpts(name),
		kgo.ConsumerGroup(cfg.Group),
		kgo.ConsumeTopics(cfg.Topic),
		kgo.DisableAutoCommit(), // we commit explicitly and record it
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.HeartbeatInterval(250*time.Millisecond), // notice rebalances quickly
		kgo.SessionTimeout(6*time.Second),           // kfake's minimum
		kgo.RebalanceTimeout(10*time.Second),
		kgo.OnPartitionsAssigned(m.onAssigned),
		kgo.OnPartitionsRevoked(m.onRevoked),
		kgo.OnPartitionsLost(m.onLost),
	)
	if cfg.GroupProtocol == "consumer" {
		opts = append(opts, kgo.ServerSideBalancer()) // KIP-848
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	m.cl = cl
	go m.loop()
	return m, nil
}

// loop polls, and commits every non-empty poll with CommitRecords, until stop.
func (m *member) loop() {
	defer close(m.done)
	desc := PollValue{Mode: "group", Group: m.env.cfg.Group}
	for {
		select {
		case <-m.stop:
			return
		default:
		}
		// Let waiting rebalance callbacks go first.
		for m.cbWaiting.Load() > 0 {
			time.Sleep(time.Millisecond)
		}
		m.mu.Lock()
		ctx, cancel := context.WithTimeout(context.Background(), pollTimeout)
		m.pollMu.Lock()
		m.pollCancel = cancel
		m.pollMu.Unlock()
		if m.cbWaiting.Load() > 0 { // a callback arrived after the check above
			cancel()
		}
		recs, krecs := pollOnce(ctx, m.env, m.cl, m.name, desc)
		m.pollMu.Lock()
		m.pollCancel = nil
		m.pollMu.Unlock()
		cancel()
		if len(recs) > 0 && m.handle(recs, krecs) {
			m.mu.Unlock()
			return
		}
		m.mu.Unlock()
	}
}

// handle commits and processes what a poll returned, in the configured
// order; it reports whether the member crashed doing so.
func (m *member) handle(recs []Rec, krecs []*kgo.Record) bool {
	crash := false
	select {
	case <-m.crashing:
		// Halfway through a poll of at least two records: one processed
		// (and, before-processing, committed), the next in processing.
		crash = len(recs) >= 2
	default:
	}
	upTo := len(recs)
	if crash {
		upTo = len(recs) / 2 // dies while processing the record at upTo
	}
	switch m.env.cfg.Commit {
	case "", "poll":
		if crash {
			break
		}
		m.commit(recs, krecs)
	case "before-processing":
		m.commit(recs, krecs)
		m.process(recs[:upTo])
	case "after-processing":
		m.process(recs[:upTo])
		if !crash {
			m.commit(recs, krecs)
		}
	}
	if crash {
		if m.env.cfg.Commit != "poll" {
			// The record in processing when the process died: invoked, never completed.
			m.env.rec.Invoke(m.name, "process", m.processValue(recs[upTo]))
		}
		m.env.rec.Invoke(m.name, "crash", ErrorValue{Error: "process died: killed halfway through a poll's records"})
		m.env.rec.Complete(m.name, "ok", "crash", ErrorValue{Error: "process died: killed halfway through a poll's records"})
		close(m.crashed)
	}
	return crash
}

// ProcessValue is the value of a process op: the record a member processed,
// with the membership it held.
type ProcessValue struct {
	Group      string `json:"group"`
	MemberID   string `json:"member_id,omitempty"`
	Generation int32  `json:"generation"`
	Topic      string `json:"topic"`
	Partition  int32  `json:"partition"`
	Offset     int64  `json:"offset"`
}

// ErrorValue is the value of a crash op.
type ErrorValue struct {
	Error string `json:"error"`
}

func (m *member) processValue(r Rec) ProcessValue {
	memberID, gen := m.cl.GroupMetadata()
	return ProcessValue{Group: m.env.cfg.Group, MemberID: memberID, Generation: gen, Topic: r.Topic, Partition: r.Partition, Offset: r.Offset}
}

// process records one process op per record, each taking cfg.Processing.
func (m *member) process(recs []Rec) {
	for _, r := range recs {
		v := m.processValue(r)
		m.env.rec.Invoke(m.name, "process", v)
		time.Sleep(m.env.cfg.Processing)
		m.env.rec.Complete(m.name, "ok", "process", v)
	}
}

// lockForCallback takes m.mu for a rebalance callback, cutting short the
// in-flight poll (if any) instead of waiting for its timeout.
func (m *member) lockForCallback() {
	m.cbWaiting.Add(1)
	m.pollMu.Lock()
	if m.pollCancel != nil {
		m.pollCancel()
	}
	m.pollMu.Unlock()
	m.mu.Lock()
	m.cbWaiting.Add(-1)
}

// commit records one CommitRecords call. Offsets are the next offset to
// consume: highest polled offset + 1 per partition, as CommitRecords computes.
func (m *member) commit(recs []Rec, krecs []*kgo.Record) {
	offsets := map[string]int64{}
	byPart := map[int32]int64{}
	for _, r := range recs {
		k := tp(r.Topic, r.Partition)
		if r.Offset+1 > offsets[k] {
			offsets[k] = r.Offset + 1
			byPart[r.Partition] = r.Offset + 1
		}
	}
	memberID, gen := m.cl.GroupMetadata()
	v := CommitValue{Group: m.env.cfg.Group, Offsets: offsets, Generation: ptr(gen), MemberID: memberID}
	m.env.rec.Invoke(m.name, "commit", v)
	ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
	err := m.cl.CommitRecords(ctx, krecs...)
	cancel()
	if err == nil {
		m.env.rec.Complete(m.name, "ok", "commit", v)
		m.tracker.update(byPart)
		return
	}
	v.Error = err.Error()
	m.env.rec.Complete(m.name, commitOutcome(err), "commit", v)
}

// commitOutcome: "fail" when the coordinator definitely refused the commit
// (stale membership), "info" otherwise (timeouts, connection loss).
func commitOutcome(err error) string {
	for _, e := range []error{
		kerr.IllegalGeneration, kerr.UnknownMemberID, kerr.RebalanceInProgress,
		kerr.FencedInstanceID, kerr.StaleMemberEpoch, kerr.FencedMemberEpoch,
		kerr.GroupAuthorizationFailed, kerr.TopicAuthorizationFailed, kerr.OffsetMetadataTooLarge,
	} {
		if errors.Is(err, e) {
			return "fail"
		}
	}
	return "info"
}

func (m *member) ownedList() []string {
	out := []string{}
	for k := range m.owned {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// onAssigned records an assign op: everything owned now, and what was added.
func (m *member) onAssigned(_ context.Context, cl *kgo.Client, assigned map[string][]int32) {
	m.lockForCallback()
	defer m.mu.Unlock()
	if m.dead {
		return
	}
	added := tpList(assigned)
	for _, k := range added {
		m.owned[k] = true
	}
	memberID, gen := cl.GroupMetadata()
	v := AssignValue{Group: m.env.cfg.Group, Partitions: m.ownedList(), Added: added, Generation: gen, MemberID: memberID}
	m.env.rec.Invoke(m.name, "assign", v)
	m.env.rec.Complete(m.name, "ok", "assign", v)
}

func (m *member) onRevoked(_ context.Context, cl *kgo.Client, revoked map[string][]int32) {
	m.recordRevoke(cl, revoked, false)
}

func (m *member) onLost(_ context.Context, cl *kgo.Client, lost map[string][]int32) {
	m.recordRevoke(cl, lost, true)
}

// recordRevoke records a revoke op. Everything polled was already committed
// inside the poll loop, so there is nothing left to commit here.
func (m *member) recordRevoke(cl *kgo.Client, revoked map[string][]int32, lost bool) {
	m.lockForCallback()
	defer m.mu.Unlock()
	if m.dead {
		return
	}
	gone := tpList(revoked)
	for _, k := range gone {
		delete(m.owned, k)
	}
	memberID, gen := cl.GroupMetadata()
	v := AssignValue{Group: m.env.cfg.Group, Partitions: gone, Remaining: m.ownedList(), Generation: gen, MemberID: memberID, Lost: lost}
	m.env.rec.Invoke(m.name, "revoke", v)
	m.env.rec.Complete(m.name, "ok", "revoke", v)
}

// stopPolling ends the poll loop (the member stays in the group).
func (m *member) stopPolling() {
	select {
	case <-m.stop:
	default:
		close(m.stop)
	}
	<-m.done
}

// crash makes the member die halfway through its next non-empty poll's
// records (or, after 5 s without one, between polls): its loop records the
// crash and stops without committing what it had not. franz-go cannot die
// without a LeaveGroup, so the group then rebalances at once instead of
// after session.timeout.ms: the same partitions move with the same offsets
// committed, sooner. Its callbacks after the crash are not recorded.
func (m *member) crash() {
	close(m.crashing)
	select {
	case <-m.crashed:
	case <-time.After(5 * time.Second):
		m.stopPolling()
		select {
		case <-m.crashed: // it crashed in its last poll after all
		default:
			m.mu.Lock()
			m.env.rec.Invoke(m.name, "crash", ErrorValue{Error: "process died: killed between polls"})
			m.env.rec.Complete(m.name, "ok", "crash", ErrorValue{Error: "process died: killed between polls"})
			close(m.crashed)
			m.mu.Unlock()
		}
	}
	<-m.done
	m.mu.Lock()
	m.dead = true
	m.mu.Unlock()
	m.cl.Close()
}

// leave stops polling and closes the client, which leaves the group; the
// final revoke callback is recorded.
func (m *member) leave() {
	m.stopPolling()
	m.cl.Close()
}

// commitTracker keeps the highest committed offset per partition (from
// successful commits) so the workload knows when the group has caught up.
type commitTracker struct {
	mu  sync.Mutex
	off map[int32]int64
}

func newCommitTracker() *commitTracker { return &commitTracker{off: map[int32]int64{}} }

func (t *commitTracker) update(offsets map[int32]int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for p, o := range offsets {
		if o > t.off[p] {
			t.off[p] = o
		}
	}
}

func (t *commitTracker) reached(ends map[int32]int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for p, end := range ends {
		if t.off[p] < end {
			return false
		}
	}
	return true
}

// FetchCommittedValue is the value of fetch-committed: the partitions asked
// about, and (on completion) their committed offsets; -1 means the group has
// no committed offset for that partition.
type FetchCommittedValue struct {
	Group      string           `json:"group"`
	Partitions []string         `json:"partitions"`
	Offsets    map[string]int64 `json:"offsets,omitempty"`
	Error      string           `json:"error,omitempty"`
}

// fetchCommitted records one kadm FetchOffsets call per partition, each
// reporting that partition's committed offset.
func fetchCommitted(env *Env, process string) {
	cfg := env.cfg
	for p := int32(0); p < int32(cfg.Partitions); p++ {
		k := tp(cfg.Topic, p)
		v := FetchCommittedValue{Group: cfg.Group, Partitions: []string{k}}
		env.rec.Invoke(process, "fetch-committed", v)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		resp, err := env.admin.FetchOffsets(ctx, cfg.Group)
		cancel()
		if err == nil {
			var or kadm.OffsetResponse
			var ok bool
			if or, ok = resp.Lookup(cfg.Topic, p); ok && or.Err != nil {
				err = or.Err
			}
			if err == nil {
				off := int64(-1)
				if ok {
					off = or.At
				}
				v.Offsets = map[string]int64{k: off}
				env.rec.Complete(process, "ok", "fetch-committed", v)
				continue
			}
		}
		v.Error = err.Error()
		env.rec.Complete(process, "fail", "fetch-committed", v)
	}
}
