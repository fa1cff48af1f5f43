package reader

import (
	"testing"

	"kafkasim/model/proto"
)

// What a leader's answer to OffsetsForLeaderEpoch (where the position's
// epoch ends on it) makes of a position awaiting validation: kept when the
// epoch ends at or past it, sought back to the divergence under the
// answer's epoch when the log was truncated below it, dropped for a reset
// when the leader cannot say.
func TestCompleteValidation(t *testing.T) {
	at10 := fetchPosition{offset: 10, offsetEpoch: 3}
	for _, c := range []struct {
		name    string
		pos     fetchPosition
		end     proto.EpochEndOffset
		want    validationOutcome
		wantPos fetchPosition
	}{
		{"the epoch ends past the position", at10, proto.EpochEndOffset{Epoch: 3, EndOffset: 15}, positionValid, at10},
		{"the epoch ends at the position", at10, proto.EpochEndOffset{Epoch: 3, EndOffset: 10}, positionValid, at10},
		{"a later epoch the leader knows ends past it", at10, proto.EpochEndOffset{Epoch: 5, EndOffset: 11}, positionValid, at10},
		{"truncated one below the position", at10, proto.EpochEndOffset{Epoch: 3, EndOffset: 9}, truncatedToDivergence, fetchPosition{offset: 9, offsetEpoch: 3}},
		{"truncated into an older epoch", at10, proto.EpochEndOffset{Epoch: 2, EndOffset: 4}, truncatedToDivergence, fetchPosition{offset: 4, offsetEpoch: 2}},
		{"truncated to the log's first offset", at10, proto.EpochEndOffset{Epoch: 0, EndOffset: 0}, truncatedToDivergence, fetchPosition{offset: 0, offsetEpoch: 0}},
		{"the end offset is undefined", at10, proto.EpochEndOffset{Epoch: 3, EndOffset: -1}, truncatedReset, fetchPosition{offset: -1, offsetEpoch: -1}},
		{"the epoch is undefined", at10, proto.EpochEndOffset{Epoch: -1, EndOffset: 15}, truncatedReset, fetchPosition{offset: -1, offsetEpoch: -1}},
		{"the leader does not know the epoch at all", at10, proto.EpochEndOffset{Epoch: -1, EndOffset: -1}, truncatedReset, fetchPosition{offset: -1, offsetEpoch: -1}},
		{"a position at the log's start is kept by an empty epoch", fetchPosition{offset: 0, offsetEpoch: 0}, proto.EpochEndOffset{Epoch: 0, EndOffset: 0}, positionValid, fetchPosition{offset: 0, offsetEpoch: 0}},
	} {
		got, pos := completeValidation(c.pos, c.end)
		if got != c.want || pos != c.wantPos {
			t.Errorf("%s: position %+v, answer %+v: outcome %d, position %+v; want %d, %+v", c.name, c.pos, c.end, got, pos, c.want, c.wantPos)
		}
	}
}

// auto.offset.reset: latest resets to the log end, earliest to its start;
// none resets nothing out of range, and a position the reader must have it
// takes from the start (it has no application to raise Kafka's
// NoOffsetForPartitionException to).
func TestOffsetResetPolicy(t *testing.T) {
	for _, c := range []struct {
		policy        string
		wantTimestamp int64
		wantResets    bool
	}{
		{"earliest", proto.ListEarliest, true},
		{"latest", proto.ListLatest, true},
		{"none", proto.ListEarliest, false},
	} {
		if ts := offsetResetTimestamp(c.policy); ts != c.wantTimestamp {
			t.Errorf("auto.offset.reset=%s resets to timestamp %d, want %d", c.policy, ts, c.wantTimestamp)
		}
		if r := hasDefaultOffsetResetPolicy(c.policy); r != c.wantResets {
			t.Errorf("auto.offset.reset=%s resets a position out of range: %v, want %v", c.policy, r, c.wantResets)
		}
	}
}

// A leader from the metadata: stale metadata changes nothing; a new leader
// or epoch drops the buffer fetched from the old one, and makes a position
// whose epoch is known await validation (unless validation is off or there
// is no leader to ask).
func TestUpdateLeader(t *testing.T) {
	known := fetchPosition{offset: 10, offsetEpoch: 3}
	for _, c := range []struct {
		name           string
		pos            fetchPosition
		leader, epoch  int32
		validate       bool
		wantLeader     int32
		wantEpoch      int32
		wantValidating bool
		wantBuffer     bool
	}{
		{"the same leader and epoch", known, 1, 4, true, 1, 4, false, true},
		{"stale metadata", known, 2, 3, true, 1, 4, false, true},
		{"a new epoch of the same leader", known, 1, 5, true, 1, 5, true, false},
		{"a new leader", known, 2, 5, true, 2, 5, true, false},
		{"a new leader, validation off", known, 2, 5, false, 2, 5, false, false},
		{"no leader", known, -1, 5, true, -1, 5, false, false},
		{"a new leader, no position", fetchPosition{offset: -1, offsetEpoch: -1}, 2, 5, true, 2, 5, false, false},
		{"a new leader, a reset position with no record read", fetchPosition{offset: 7, offsetEpoch: -1}, 2, 5, true, 2, 5, false, false},
	} {
		p := &partitionState{fetchPosition: c.pos, leader: 1, leaderEpoch: 4, buf: batches(0, 1), validateAfter: 99}
		p.updateLeader(c.leader, c.epoch, c.validate)
		if p.leader != c.wantLeader || p.leaderEpoch != c.wantEpoch || p.validating != c.wantValidating || (len(p.buf) > 0) != c.wantBuffer {
			t.Errorf("%s: leader %d epoch %d, validating %v, buffer kept %v; want leader %d epoch %d, validating %v, buffer kept %v",
				c.name, p.leader, p.leaderEpoch, p.validating, len(p.buf) > 0, c.wantLeader, c.wantEpoch, c.wantValidating, c.wantBuffer)
		}
		if p.validating && p.validateAfter != 0 {
			t.Errorf("%s: a validation awaited may go at %v, want at once", c.name, p.validateAfter)
		}
		if p.fetchPosition != c.pos {
			t.Errorf("%s: the position moved from %+v to %+v", c.name, c.pos, p.fetchPosition)
		}
	}
}
