package checker

import (
	"testing"

	"kafkasim/godview"
	"kafkasim/history"
)

// The leader a reader fetched from answered OFFSET_OUT_OF_RANGE at its
// position 3, and the log start ListOffsets gave next was 1, below it: a
// power loss had undone the leader's unsynced segment deletions (fuzz seed
// 2840: offset 2747 after 3496). Kafka's consumer seeks there all the same
// (SubscriptionState.maybeSeekUnvalidated) and reads 1 and 2 again. Only the
// god view's record of that rewind, of that reader and partition, between
// the two polls, back to at or below the offset read again from a position
// past the one read before, excuses the nonmonotonic poll.
func TestReadingAgainAfterAResetBelowThePositionIsPermittedOnlyWithTheGodView(t *testing.T) {
	h := &hb{}
	for i, v := range []string{"a", "b", "c", "d"} {
		h.send("p-0", v, 0, int64(i), history.OK)
	}
	h.poll("c-0", false, rec{0, 0, "a"}, rec{0, 1, "b"}, rec{0, 2, "c"})
	earlier := h.t // the first poll's completion
	h.poll("c-0", false, rec{0, 1, "b"}, rec{0, 2, "c"}, rec{0, 3, "d"})
	between, later := earlier+1000, h.t // the second poll's invocation, completion
	h.poll("c-1", true, rec{0, 0, "a"}, rec{0, 1, "b"}, rec{0, 2, "c"}, rec{0, 3, "d"})
	rewind := func(proc, part string, from, to, at int64) godview.Fact {
		return godview.Fact{Kind: godview.OutOfRangeRewind, Partition: part, From: from, To: to, Process: proc, At: at}
	}
	for _, c := range []struct {
		name  string
		facts []godview.Fact
		want  string
	}{
		{"no record of the rewind", nil, Violation},
		{"the reader's position was reset back between the polls", []godview.Fact{rewind("c-0", "t-0", 1, 3, between)}, Permitted},
		{"to a log start below the offset read again", []godview.Fact{rewind("c-0", "t-0", 0, 3, between)}, Permitted},
		{"at an unknown time", []godview.Fact{rewind("c-0", "t-0", 1, 3, 0)}, Permitted},
		{"another reader's was", []godview.Fact{rewind("c-2", "t-0", 1, 3, between)}, Violation},
		{"of another partition", []godview.Fact{rewind("c-0", "t-1", 1, 3, between)}, Violation},
		{"to above the offset read again", []godview.Fact{rewind("c-0", "t-0", 2, 3, between)}, Violation},
		{"from a position not past the offset read before", []godview.Fact{rewind("c-0", "t-0", 1, 2, between)}, Violation},
		{"before the earlier poll", []godview.Fact{rewind("c-0", "t-0", 1, 3, earlier-500)}, Violation},
		{"after the later poll", []godview.Fact{rewind("c-0", "t-0", 1, 3, later+500)}, Violation},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := strict
			cfg.Happened = godview.Seen(c.facts...)
			r := Check(h.ops, cfg)
			expectVerdict(t, r, NonmonotonicPoll, c.want)
			if c.want == Permitted && r.Violations != 0 {
				t.Fatalf("want no violation, got\n%s", r.Summary())
			}
		})
	}
}

// Within one poll nothing resets a reader's position: a poll that returns
// an offset below one it returned before is a violation, whatever rewind
// the god view saw around it.
func TestARewindExcusesNoNonmonotonicPollWithinOnePoll(t *testing.T) {
	h := &hb{}
	for i, v := range []string{"a", "b", "c", "d"} {
		h.send("p-0", v, 0, int64(i), history.OK)
	}
	h.poll("c-0", false, rec{0, 0, "a"}, rec{0, 1, "b"}, rec{0, 2, "c"})
	h.poll("c-0", false, rec{0, 3, "d"}, rec{0, 1, "b"})
	h.poll("c-1", true, rec{0, 0, "a"}, rec{0, 1, "b"}, rec{0, 2, "c"}, rec{0, 3, "d"})
	cfg := strict
	cfg.Happened = godview.Seen(godview.Fact{Kind: godview.OutOfRangeRewind, Partition: "t-0", From: 1, To: 4, Process: "c-0"})
	expectVerdict(t, Check(h.ops, cfg), IntNonmonotonicPoll, Violation)
}
