package reader_test

import (
	"strings"
	"testing"
	"time"

	"kafkasim/model/group/consumergroup"
	"kafkasim/model/proto"
	"kafkasim/model/reader"
)

// The coordinator forgets the group (its records on __consumer_offsets were
// lost, and the broker that took the partition over replayed none of it):
// the member's next heartbeat, at its epoch, is answered GROUP_ID_NOT_FOUND
// (GroupMetadataManager.consumerGroupHeartbeat creates a group only at
// member epoch 0), which Kafka's client takes as fatal
// (AbstractHeartbeatRequestManager.onErrorResponse's default arm): the
// member stops for good and never joins again. ConsumerFatal says so, with
// when it last joined, for the convergence check to ground it in the loss.
func TestConsumerMemberStopsWhenItsGroupIsGone(t *testing.T) {
	b, gw := loseGroupUnderMember(t, 0)
	m := gw.member(0)
	_, at, _, _ := m.ConsumerFatal()
	var after []string
	for i, l := range b.log {
		if b.at[i] > at && strings.HasPrefix(l, "c-0 ConsumerGroupHeartbeat") {
			after = append(after, l)
		}
	}
	if len(after) > 0 {
		t.Fatalf("c-0 heartbeated after it stopped (a member in FATAL state sends nothing):\n%s", strings.Join(after, "\n"))
	}
	if m.Stable() {
		t.Fatal("c-0 is stable after it stopped")
	}
}

// loseGroupUnderMember runs member c-0 of group g, its clock set back by
// clockBack at 500 ms (0: not), has the coordinator forget the group at
// 8 s, and checks that c-0 stopped on GROUP_ID_NOT_FOUND, having joined
// before the loss and stopped after it, in the run's virtual time.
func loseGroupUnderMember(t *testing.T, clockBack time.Duration) (*cgBroker, *groupWorld) {
	t.Helper()
	b := newCGBroker(2, 5, false)
	gw := newCGWorld(b, consumerMemberConfig("c-0", reader.CommitAuto))
	gw.w.Start()
	gw.w.RunUntil(500 * time.Millisecond)
	if clockBack > 0 {
		gw.w.Clock(gw.members[0]).Jump(gw.w.Now(), -clockBack)
	}
	gw.w.RunUntil(8 * time.Second)
	m := gw.member(0)
	if _, _, _, ok := m.ConsumerFatal(); ok || m.Fatal() != "" {
		t.Fatalf("c-0 stopped before its group was lost: %q", m.Fatal())
	}
	lostAt := gw.w.Now()
	b.g = consumergroup.New("g")
	gw.w.RunUntil(40 * time.Second)

	code, at, joined, ok := m.ConsumerFatal()
	if !ok || code != proto.GroupIDNotFound {
		t.Fatalf("c-0 ended with %v (%v), fatal %q: want GROUP_ID_NOT_FOUND", code, ok, m.Fatal())
	}
	if joined < 0 || joined >= lostAt || at < lostAt || at > gw.w.Now() {
		t.Fatalf("c-0 joined at %v and stopped at %v, the group lost at %v (virtual time now %v): want virtual times, joined before the loss and stopped after",
			joined, at, lostAt, gw.w.Now())
	}
	return b, gw
}

// A member whose clock a fault set back reports when it joined and stopped
// in the run's virtual time, which the god view's losses are in: on its
// own clock it would have stopped before the loss that stopped it (and a
// member that joins once its clock is set back below zero would have
// joined at a negative time, taken for "never joined").
func TestConsumerFatalTimesAreVirtualTime(t *testing.T) { loseGroupUnderMember(t, 4*time.Second) }
