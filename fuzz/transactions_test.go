package fuzz

import (
	"testing"
)

// Some seeds draw a transactional producer and a read_committed reader;
// the rest draw what they drew before transactions existed (the seeds
// with transactions only add them).
func TestGeneratorDrawsTransactions(t *testing.T) {
	n := 0
	for seed := uint64(1); seed <= 200; seed++ {
		s, err := Generate(seed, nil, nil)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		var txn, rc bool
		for _, p := range s.Producers {
			txn = txn || p.Transactions != nil
		}
		for _, c := range s.Consumers {
			rc = rc || c.Config.Get("isolation.level") == "read_committed"
		}
		if txn != rc {
			t.Fatalf("seed %d: a transactional producer %v, a read_committed reader %v", seed, txn, rc)
		}
		if txn {
			n++
		}
	}
	if n < 20 || n > 60 {
		t.Fatalf("200 seeds drew transactions %d times, want about 40", n)
	}
}
