package checker

import (
	"testing"

	"kafkasim/history"
)

// A partition no read reached, whose acknowledged send is followed by a
// send that failed there (its partition known): the failed one takes no
// slot of the partition's operations (fuzz seed 10020: a panic).
func TestLinearizabilityOfAPartitionNoReadReachedWithAFailedSend(t *testing.T) {
	h := &hb{}
	h.send("p-0", "a", 0, 0, history.OK)
	v := history.NoValue()
	v.Topic, v.Value = "t", "b"
	h.add("p-0", history.Invoke, history.FSend, v)
	v.Partition, v.Error = 0, "NOT_ENOUGH_REPLICAS"
	h.add("p-0", history.Fail, history.FSend, v)
	r := Check(h.ops, Config{})
	if r.Violations != 0 || r.Count(Nonlinearizable) != 0 {
		t.Fatalf("violations\n%s", r.Summary())
	}
}
