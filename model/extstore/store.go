// Package extstore is the external system a group member's processing
// writes to: a database, a payment service, an e-mail gateway. Kafka's
// transactions do not reach it: a record processed twice (after a crash,
// a rebalance, a zombie member) applies its effect twice unless the store
// itself deduplicates by key. The store is a node of its own, so a fault can
// cut it off or crash it like any node.
//
// The fault model:
//   - a write is applied, made durable (appended to the store's journal and
//     fsynced) and then acknowledged; a crash before the fsync completes may
//     lose it (the member never heard back: its side effect is
//     indeterminate), one after cannot;
//   - a plain store applies every write it receives, so a write received
//     twice (a retry after a lost acknowledgement, a record processed twice)
//     is applied twice;
//   - an idempotent store keeps one effect per key (an upsert by business
//     key): a write whose key it holds, or is making durable, is
//     acknowledged as not applied;
//   - a restarted store knows what its journal holds (its durable part: the
//     simulated disk drops what was not fsynced at a crash).
package extstore

import (
	"bytes"
	"strconv"

	"kafkasim/sim"
)

// Mode is how the store applies writes.
type Mode uint8

// Modes, as a scenario's side-effects key names them.
const (
	Plain Mode = iota
	Idempotent
)

// ParseMode maps side-effects' value to a Mode.
func ParseMode(s string) (Mode, bool) {
	switch s {
	case "plain":
		return Plain, true
	case "idempotent":
		return Idempotent, true
	}
	return 0, false
}

func (m Mode) String() string {
	if m == Idempotent {
		return "idempotent"
	}
	return "plain"
}

// journal is the store's file: one key a line, in the order applied.
const journal = "effects.journal"

// ApplyRequest asks the store to apply the effect of processing one record:
// Key is the external key written (the record's identity, so that an
// idempotent store keeps one effect per record).
type ApplyRequest struct {
	CorrelationID uint64
	Key           string
}

// ApplyResponse acknowledges a durable write. Applied is false when an
// idempotent store already held the key.
type ApplyResponse struct {
	CorrelationID uint64
	Applied       bool
}

// MessageName implements sim.Message.
func (*ApplyRequest) MessageName() string { return "StoreApply" }

// MessageName implements sim.Message.
func (*ApplyResponse) MessageName() string { return "StoreApplyResponse" }

// Store is the external store node.
type Store struct {
	mode Mode
	env  sim.Env
	// applied counts each key's durable applications (a plain store's
	// duplicates show as counts above one).
	applied map[string]int
	// pending are keys written to the journal and not yet fsynced, for an
	// idempotent store's dedup.
	pending map[string]bool
	// Stats for reports and tests.
	Stats Stats
}

// Stats counts what the store did.
type Stats struct {
	Writes, Applied, Deduplicated int
}

// fsynced is the token of a write's fsync.
type fsynced struct {
	from          sim.NodeID
	correlationID uint64
	key           string
}

// String is how the trace shows the token.
func (f fsynced) String() string {
	return "extstore.fsynced {key:" + f.key + " corr:" + strconv.FormatUint(f.correlationID, 10) + "}"
}

// New returns a constructor for a store.
func New(mode Mode) func() sim.Node { return func() sim.Node { return &Store{mode: mode} } }

// Start rebuilds the store from its journal.
func (s *Store) Start(env sim.Env) {
	s.env = env
	s.applied = map[string]int{}
	s.pending = map[string]bool{}
	data, err := env.Disk().ReadFile(journal)
	if err != nil {
		return // no journal yet (or unreadable: the store starts empty)
	}
	for len(data) > 0 {
		line, rest, complete := bytes.Cut(data, []byte{'\n'})
		if !complete {
			break // a write torn at a crash: never acknowledged
		}
		s.applied[string(line)]++
		data = rest
	}
}

// Deliver applies a write.
func (s *Store) Deliver(from sim.NodeID, m sim.Message) {
	req, ok := m.(*ApplyRequest)
	if !ok {
		return
	}
	s.Stats.Writes++
	if s.mode == Idempotent && (s.applied[req.Key] > 0 || s.pending[req.Key]) {
		s.Stats.Deduplicated++
		s.env.Send(from, &ApplyResponse{CorrelationID: req.CorrelationID, Applied: false})
		return
	}
	if _, err := s.env.Disk().Append(journal, append([]byte(req.Key), '\n')); err != nil {
		return // a full or failing disk: no answer, the member's write times out
	}
	s.pending[req.Key] = true
	s.env.Disk().Fsync(journal, fsynced{from: from, correlationID: req.CorrelationID, key: req.Key})
}

// Fire acknowledges a write once durable.
func (s *Store) Fire(t sim.Timer) {
	done, ok := t.(*sim.FsyncDone)
	if !ok {
		return
	}
	f, ok := done.Token.(fsynced)
	if !ok {
		return
	}
	delete(s.pending, f.key)
	if done.Err != nil {
		return // not durable: no answer
	}
	s.applied[f.key]++
	s.Stats.Applied++
	s.env.Send(f.from, &ApplyResponse{CorrelationID: f.correlationID, Applied: true})
}

// Applications is how many times the store durably applied key's effect.
func (s *Store) Applications(key string) int { return s.applied[key] }

// Keys is the number of distinct keys applied.
func (s *Store) Keys() int { return len(s.applied) }
