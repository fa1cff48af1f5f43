package reports

import (
	"time"

	"kafkasim/history"
)

// The report's transactions: each transaction the history shows, from its
// txn-begin to its txn-commit or txn-abort, with how it ended as its
// producer heard it.

// txnRowsMax bounds the transactions listed (the counts cover them all).
const txnRowsMax = 200

type txnView struct {
	Process, TransactionalID string
	Begin, End, Span         string
	Outcome, Class           string
	Sends                    int
	BeginOp                  int64
}

type txnSummary struct {
	Rows                                      []txnView
	More                                      int
	Committed, Aborted, Failed, Unknown, Open int
}

// transactionViews lists the history's transactions in the order they
// began; nil when it has none.
func transactionViews(r *Run) *txnSummary {
	s := &txnSummary{}
	open := map[string]int{} // process → index in all
	var all []txnView
	var begins []time.Duration
	close := func(proc string, t time.Duration, outcome, class string, sends int) {
		i, ok := open[proc]
		if !ok {
			return
		}
		delete(open, proc)
		all[i].End, all[i].Span = fmtSpan(t), fmtSpan(t-begins[i])
		all[i].Outcome, all[i].Class, all[i].Sends = outcome, class, sends
	}
	r.history().EachHead(func(op *history.Op) {
		t := time.Duration(op.Time)
		switch op.F {
		case history.FTxnBegin:
			if op.Type != history.Invoke {
				return
			}
			close(op.Process, t, "never ended", "bad", 0)
			tid := ""
			if op.Value.Ext != nil {
				tid = op.Value.Ext.TransactionalID
			}
			open[op.Process] = len(all)
			all = append(all, txnView{Process: op.Process, TransactionalID: tid, Begin: fmtSpan(t), BeginOp: op.Index})
			begins = append(begins, t)
		case history.FTxnCommit, history.FTxnAbort:
			if op.Type == history.Invoke {
				return
			}
			sends := 0
			if op.Value.Ext != nil {
				sends = len(op.Value.Ext.Sends)
			}
			commit := op.F == history.FTxnCommit
			switch {
			case op.Type == history.OK && commit:
				close(op.Process, t, "committed", "ok", sends)
			case op.Type == history.OK:
				close(op.Process, t, "aborted", "", sends)
			case op.Type == history.Fail && commit:
				close(op.Process, t, "commit failed", "bad", sends)
			case op.Type == history.Fail:
				close(op.Process, t, "abort failed", "bad", sends)
			default:
				close(op.Process, t, "unknown (no answer)", "bad", sends)
			}
		case history.FCrash:
			if op.Type == history.Invoke {
				close(op.Process, t, "producer crashed", "bad", 0)
			}
		}
	})
	if len(all) == 0 {
		return nil
	}
	for i := range all {
		v := &all[i]
		switch v.Outcome {
		case "":
			v.Outcome, v.Class, v.End, v.Span = "open when the history ended", "bad", "", ""
			s.Open++
		case "committed":
			s.Committed++
		case "aborted":
			s.Aborted++
		case "commit failed", "abort failed":
			s.Failed++
		default:
			s.Unknown++
		}
	}
	if len(all) > txnRowsMax {
		s.More = len(all) - txnRowsMax
		all = all[:txnRowsMax]
	}
	s.Rows = all
	return s
}

func fmtSpan(d time.Duration) string { return d.Round(time.Millisecond).String() }
