package reports

import (
	"testing"

	"kafkasim/history"
)

func TestTransactionViews(t *testing.T) {
	x := func(tid string, sends int) history.Value {
		v := history.NoValue()
		v.Ext = &history.Ext{TransactionalID: tid, Sends: make([]history.Send, sends)}
		return v
	}
	ops := []history.Op{
		{Index: 0, Time: 1e9, Process: "t-0", F: history.FTxnBegin, Type: history.Invoke, Value: x("pay-0", 0)},
		{Index: 1, Time: 1e9, Process: "t-1", F: history.FTxnBegin, Type: history.Invoke, Value: x("pay-1", 0)},
		{Index: 2, Time: 2e9, Process: "t-0", F: history.FTxnCommit, Type: history.OK, Value: x("pay-0", 2)},
		{Index: 3, Time: 3e9, Process: "t-1", F: history.FTxnAbort, Type: history.OK, Value: x("pay-1", 1)},
		{Index: 4, Time: 4e9, Process: "t-0", F: history.FTxnBegin, Type: history.Invoke, Value: x("pay-0", 0)},
		{Index: 5, Time: 5e9, Process: "t-0", F: history.FTxnCommit, Type: history.Info, Value: x("pay-0", 3)},
		{Index: 6, Time: 6e9, Process: "t-1", F: history.FTxnBegin, Type: history.Invoke, Value: x("pay-1", 0)},
	}
	s := transactionViews(&Run{Ops: ops})
	if s == nil || len(s.Rows) != 4 || s.Committed != 1 || s.Aborted != 1 || s.Unknown != 1 || s.Open != 1 {
		t.Fatalf("summary %+v", s)
	}
	if r := s.Rows[0]; r.TransactionalID != "pay-0" || r.Span != "1s" || r.Sends != 2 || r.Outcome != "committed" {
		t.Fatalf("first row %+v", r)
	}
	if r := s.Rows[3]; r.Outcome != "open when the history ended" || r.BeginOp != 6 {
		t.Fatalf("last row %+v", r)
	}
	if transactionViews(&Run{Ops: ops[:0]}) != nil {
		t.Fatal("a history without transactions has a transactions section")
	}
}
