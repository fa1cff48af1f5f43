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
			expectDetail(t, res, "probed twice: the first probe of p2-0 did not go through, the second did")
		})
	}
}

// A producer holding batches a leader answers out of order, not the next
// sequence, is waited for until their delivery timeout, as Kafka's producer
// holds them, and the run says so.
func TestOutOfOrderBatchesAreWaitedForUntilTheirDeliveryTimeout(t *testing.T) {
	res := runConverged(t, "testdata/idempotent-first-batches-refused-then-out-of-order-held-until-delivery-timeout.yaml")
	expectDetail(t, res, "waited past the grace for batches a leader answered OUT_OF_ORDER_SEQUENCE_NUMBER")
}

// A transactional producer its coordinator fenced because the transaction
// log lost its later epochs is closed and created again before its probe,
// as Kafka's application must; the new instance's probe goes through, and
// the run says why it was created again.
func TestProducerFencedAfterTxnStateLossIsCreatedAgain(t *testing.T) {
	res := runConverged(t, "testdata/transactional-producer-fenced-after-txn-state-loss-created-again.yaml")
	expectDetail(t, res,
		"t-0 closed and created again before its probe: fenced (PRODUCER_FENCED), transactional.id pay-0 is at producer id 0, epoch 7, behind the epoch 34 it held",
	)
	if strings.Contains(res.ConvergeDetail, "not judged") || strings.Contains(res.ConvergeDetail, "probed twice") {
		t.Errorf("convergence detail %q: want the new instance's probe judged, and through at once", res.ConvergeDetail)
	}
}

// A producer its coordinator fenced from behind (the transaction log lost
// its later epochs) is created again too when the coordinator has since
// caught up with its epoch: aborting the transaction it held open at the
// lower epoch on its timeout bumped it to the producer's own.
func TestProducerFencedByACoordinatorThatCaughtUpIsCreatedAgain(t *testing.T) {
	res := runConverged(t, "testdata/transactional-producer-fenced-by-a-coordinator-behind-it-that-caught-up-created-again.yaml")
	expectDetail(t, res,
		"t-1 closed and created again before its probe: fenced (PRODUCER_FENCED), transactional.id pay-1 is at producer id 1000, epoch 15, the epoch it held: no newer instance fenced it",
	)
	if strings.Contains(res.ConvergeDetail, "not judged") || strings.Contains(res.ConvergeDetail, "probed twice") {
		t.Errorf("convergence detail %q: want the new instance's probe judged, and through at once", res.ConvergeDetail)
	}
}

// The new instance's probe meets a partition whose producer state is ahead
// of the coordinator's: the transaction stalls in PrepareAbort, as Kafka's
// would, and its probes are not judged, by name and cause.
func TestProbeOfAStalledTransactionIsNotJudged(t *testing.T) {
	res := runConverged(t, "testdata/transactional-probe-stalled-after-txn-state-loss-not-judged.yaml")
	expectDetail(t, res,
		"t-0 closed and created again before its probe",
		"t-0's probes not judged: transaction pay-0 (producer id 0, epoch 11) is stalled in PrepareAbort on its coordinator broker-2",
	)
	if strings.Contains(res.ConvergeDetail, "probed twice") {
		t.Errorf("convergence detail %q: a stalled producer's second probe did not go through", res.ConvergeDetail)
	}
}
