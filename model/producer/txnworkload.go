package producer

import (
	"math/rand/v2"
	"slices"

	"kafkasim/history"
)

// The transactional workload: at every tick (Rate: transactions begun per
// second) the application begins a transaction, sends RecordsMin..
// RecordsMax records, and commits it, or aborts it with probability Abort
// — once the sends have their answers (producer.flush(), then
// abortTransaction(): the aborted records are in the log, which
// read_uncommitted readers see and read_committed ones skip; an abort
// called at once would fail the batches not sent yet, and nothing would
// reach the log);
// one transaction at a time (a tick that finds one still ending begins
// none). An abortable error fails the commit, and the application aborts
// (KafkaProducer's documented loop); a fatal one (fenced) stops the
// instance. The history gets txn-begin, txn-commit and txn-abort, each
// with the transactional_id, and the commit's or abort's completion lists
// the transaction's sends.

// txnStreamSalt seeds the workload's own random stream (with a draw of
// the node's): whether each transaction aborts and how many records it
// has draw from it, not from the stream keys and timing come from.
const txnStreamSalt = 0x74786e776f726b6c // "txnworkl"

// txnApp is the transactional workload's state.
type txnApp struct {
	on   bool
	rand *rand.Rand
	// ready: InitTransactions completed; busy: a transaction is open or
	// ending; stopped: the producer is fenced (FatalError).
	ready, busy, stopped bool
	// silentAbort: the abort under way follows a failed commit: the
	// history already has the transaction's end.
	silentAbort bool
	// sends are the open transaction's sends, in order, as they stand.
	sends []history.Send
	// offsets are the consumer offsets sent in it (none yet: the stream
	// processor's).
	offsets map[string]int64
	// probeWanted: probes wait for the transaction under way to end.
	probeWanted bool
	// unanswered counts the open transaction's sends without their
	// answer; abortWhenFlushed: the transaction aborts once none is left.
	unanswered       int
	abortWhenFlushed bool
}

func (w *workload) txnStartApp() {
	w.txn = txnApp{on: true, rand: rand.New(rand.NewPCG(w.env.Rand().Uint64(), txnStreamSalt))}
	w.client.InitTransactions(w)
}

func (w *workload) txnSpec() TxnWorkload {
	if w.cfg.Transactions != nil {
		return *w.cfg.Transactions
	}
	return TxnWorkload{RecordsMin: 1, RecordsMax: 1}
}

// txnTick begins a transaction, unless the workload has stopped, and
// schedules the next.
func (w *workload) txnTick() {
	now := w.env.WorldTime()
	if w.cfg.Stop > 0 && now >= w.cfg.Stop {
		return
	}
	w.beginTxn(false)
	w.env.After(w.interval(), newTimer(timerTxnWorkload, 0))
}

func (w *workload) txnValue() history.Value {
	v := history.NoValue()
	v.X().TransactionalID = w.client.cfg.TransactionalID
	return v
}

// beginTxn runs one transaction: of the workload's records, or of probes.
func (w *workload) beginTxn(probe bool) {
	t := &w.txn
	if !t.ready || t.busy || t.stopped || !w.client.BeginTransaction() {
		if probe && !t.stopped {
			t.probeWanted = true
			return
		}
		if probe {
			w.probe() // fenced: each probe fails at once
		}
		return
	}
	t.busy, t.sends, t.offsets, t.unanswered = true, t.sends[:0], nil, 0
	v := w.txnValue()
	w.record(history.Invoke, history.FTxnBegin, &v)
	v = w.txnValue()
	w.record(history.OK, history.FTxnBegin, &v)
	abort := false
	if probe {
		t.probeWanted = false
		w.probe()
	} else {
		spec := w.txnSpec()
		n := spec.RecordsMin
		if spec.RecordsMax > spec.RecordsMin {
			n += t.rand.IntN(spec.RecordsMax - spec.RecordsMin + 1)
		}
		abort = t.rand.Float64() < spec.Abort
		for range n {
			w.send()
		}
	}
	if abort && t.unanswered > 0 {
		t.abortWhenFlushed = true
		return
	}
	v = w.txnValue()
	if abort {
		w.record(history.Invoke, history.FTxnAbort, &v)
		w.client.AbortTransaction()
	} else {
		w.record(history.Invoke, history.FTxnCommit, &v)
		w.client.CommitTransaction()
	}
}

// txnSend marks a send's value as the open transaction's (its
// transactional_id, and the producer id and epoch it goes with: TV2 bumps
// the epoch only at EndTxn) and notes it in the transaction's sends.
func (w *workload) txnSend(v *history.Value, invoke bool) {
	x := v.X()
	x.TransactionalID = w.client.cfg.TransactionalID
	pid, epoch := w.client.ProducerIDAndEpoch()
	x.Producer = &history.ProducerEpoch{ID: pid, Epoch: int32(epoch)}
	t := &w.txn
	if invoke {
		t.unanswered++
		t.sends = append(t.sends, history.Send{Topic: v.Topic, Key: v.Key, HasKey: v.HasKey, Value: v.Value, Partition: -1, Offset: -1})
		return
	}
	t.unanswered--
	for i := len(t.sends) - 1; i >= 0; i-- {
		if s := &t.sends[i]; s.Value == v.Value {
			s.Partition, s.Offset = v.Partition, v.Offset
			break
		}
	}
}

// txnSendAnswered: a send of the open transaction has its answer; the
// abort that waited for the last one goes.
func (w *workload) txnSendAnswered() {
	t := &w.txn
	if !t.abortWhenFlushed || t.unanswered > 0 {
		return
	}
	t.abortWhenFlushed = false
	v := w.txnValue()
	w.record(history.Invoke, history.FTxnAbort, &v)
	w.client.AbortTransaction()
}

// OnTxnResult records how a transactional operation ended (TxnCallback).
func (w *workload) OnTxnResult(op TxnOp, outcome history.Type, why string) {
	t := &w.txn
	switch op {
	case TxnOpInit:
		if outcome != history.OK {
			t.stopped = true
			if t.probeWanted {
				// initTransactions failed (fatally): the probe's sends
				// fail at once, as every send of a fatal producer does.
				t.probeWanted = false
				w.probe()
			}
			return
		}
		t.ready = true
	case TxnOpCommit, TxnOpAbort:
		f := history.FTxnCommit
		if op == TxnOpAbort {
			f = history.FTxnAbort
		}
		if !t.silentAbort || op == TxnOpCommit {
			v := w.txnValue()
			v.Ext.Sends = slices.Clone(t.sends)
			if v.Ext.Sends == nil {
				v.Ext.Sends = []history.Send{}
			}
			v.Ext.Offsets = t.offsets
			if outcome != history.OK {
				v.Error = why
			}
			w.record(outcome, f, &v)
		}
		switch st := w.client.TxnState(); {
		case outcome == history.OK:
			t.busy, t.silentAbort = false, false
		case st == TxnAbortableError:
			// KafkaProducer's documented handling of a KafkaException:
			// abort, and go on with the next transaction.
			t.silentAbort = true
			w.client.AbortTransaction()
			return
		default:
			// Fenced (or otherwise fatal): the instance writes no more.
			t.busy, t.stopped = false, true
			return
		}
	}
	if t.probeWanted && !t.busy && t.ready {
		w.beginTxn(true)
	}
}
