package reader_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"kafkasim/history"
	"kafkasim/model/proto"
	"kafkasim/model/reader"
)

// A new dynamic member is told MEMBER_ID_REQUIRED and joins again with the
// id it was given (KIP-394); as the only member it leads and assigns itself
// both partitions; it starts orders-0 at the committed offset 3 and
// orders-1, with nothing committed, at auto.offset.reset (earliest); it
// processes every record once, committing after processing.
func TestMemberJoinsWithTheGivenMemberIDAndStartsAtCommittedOffsets(t *testing.T) {
	gw := newGroupWorld(2, 5, memberConfig("c-0", reader.CommitAfterProcessing))
	gw.b.requireMemberID = true
	gw.b.committed["orders-0"] = proto.OffsetCommitPartition{TopicPartition: proto.TopicPartition{Topic: "orders"}, CommittedOffset: 3, CommittedLeaderEpoch: -1}
	gw.w.Start()
	gw.w.RunUntil(10 * time.Second)

	if len(gw.b.joins) != 2 || gw.b.joins[0].MemberID != "" || gw.b.joins[1].MemberID != "m1" {
		t.Fatalf("joins %+v, want one without a member id, then one as m1", gw.b.joins)
	}
	got := ops(gw.rec, "c-0", history.FAssign, history.FFetchCommitted, history.FProcess, history.FCommit)
	want := []string{
		"invoke assign [orders-0 orders-1] gen=1", "ok assign [orders-0 orders-1] gen=1",
		"invoke fetch-committed [orders-0 orders-1]", "ok fetch-committed orders-0=3 orders-1=-1",
	}
	// orders-1 waits for its reset (ListOffsets), so the first poll
	// returns orders-0's records only; each batch is committed after it is
	// processed.
	for _, off := range []string{"orders-0@3", "orders-0@4"} {
		want = append(want, "invoke process gen=1 "+off, "ok process gen=1 "+off)
	}
	want = append(want, "invoke commit orders-0=5 gen=1", "ok commit orders-0=5 gen=1")
	for _, off := range []string{"orders-1@0", "orders-1@1", "orders-1@2", "orders-1@3", "orders-1@4"} {
		want = append(want, "invoke process gen=1 "+off, "ok process gen=1 "+off)
	}
	want = append(want, "invoke commit orders-0=5 orders-1=5 gen=1", "ok commit orders-0=5 orders-1=5 gen=1")
	if len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
		t.Fatalf("member's operations:\n%s\nwant them to begin:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if c := gw.b.committed["orders-1"]; c.CommittedOffset != 5 {
		t.Fatalf("orders-1 committed %d, want 5", c.CommittedOffset)
	}
	if n := gw.b.count("Heartbeat"); n < 2 {
		t.Fatalf("%d heartbeats in 10 s, want them every 3 s", n)
	}
}
