package runner

import (
	"strings"
	"testing"
)

// A producer whose first probe did not go through is probed again, and the
// run converges for the reason it gives: Kafka's idempotent producer, with a
// sequence gap a batch expired in flight left, writes again only once a
// retried batch expires.
func TestProbedTwiceAfterASequenceGap(t *testing.T) {
	for _, file := range []string{
		"testdata/idempotent-batch-expired-in-flight-then-refused-blocks-its-partition-a-delivery-timeout.yaml",
		"testdata/idempotent-batches-expired-in-flight-at-a-new-epoch-then-refused.yaml",
	} {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			res := runConverged(t, file)
			if want := "probed twice: the first probe of p2-0 did not go through, the second did"; !strings.Contains(res.ConvergeDetail, want) {
				t.Errorf("convergence detail %q lacks %q", res.ConvergeDetail, want)
			}
		})
	}
}

// A producer holding batches a leader answers out of order, not the next
// sequence, is waited for until their delivery timeout, as Kafka's producer
// holds them, and the run says so.
func TestOutOfOrderBatchesAreWaitedForUntilTheirDeliveryTimeout(t *testing.T) {
	res := runConverged(t, "testdata/idempotent-first-batches-refused-then-out-of-order-held-until-delivery-timeout.yaml")
	if want := "waited past the grace for batches a leader answered OUT_OF_ORDER_SEQUENCE_NUMBER"; !strings.Contains(res.ConvergeDetail, want) {
		t.Errorf("convergence detail %q lacks %q", res.ConvergeDetail, want)
	}
}
