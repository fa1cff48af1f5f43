package checker

import (
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"

	"kafkasim/history"
)

// genGroupHistory generates a history of about n operations: a producer
// writes to `partitions` partitions; a consumer group of `members` members
// processes them (a process operation per record, a side effect for every
// other one), commits after processing, and rebalances now and then (an
// eager revoke of everything, then the next generation's assignment, from
// which each member starts again at the committed offsets: records
// processed since the last commit are processed again). Nothing in it
// breaks at-least-once.
func genGroupHistory(n, partitions, members int, seed uint64) []history.Op {
	rng := rand.New(rand.NewPCG(seed, 2))
	ops := make([]history.Op, 0, n+4*members*partitions)
	add := func(process string, t history.Type, f string, v history.Value) {
		ops = append(ops, history.Op{Index: int64(len(ops)), Time: int64(len(ops)) * 1000, Process: process, Type: t, F: f, Value: v})
	}
	names := make([]string, members)
	for i := range names {
		names[i] = "c-" + strconv.Itoa(i)
	}
	logLen := make([]int64, partitions)
	logs := make([][]history.Record, partitions)
	pos := make([]int64, partitions)
	committed := make([]int64, partitions)
	gen := int32(1)
	owner := func(q int) int { return (q + int(gen)) % members }
	groupValue := func(m int) history.Value {
		v := history.NoValue()
		x := v.X()
		x.Group, x.MemberID, x.Generation = "g", names[m]+"-id", gen
		return v
	}
	owned := func(m int) []string {
		var out []string
		for q := range partitions {
			if owner(q) == m {
				out = append(out, "t-"+strconv.Itoa(q))
			}
		}
		return out
	}
	rebalance := func(f string) {
		for m := range members {
			v := groupValue(m)
			v.Ext.Partitions = owned(m)
			add(names[m], history.Invoke, f, v)
			add(names[m], history.OK, f, v)
		}
	}
	commit := func(m int) {
		v := groupValue(m)
		v.Ext.Offsets = map[string]int64{}
		for q := range partitions {
			if owner(q) == m && pos[q] > committed[q] {
				v.Ext.Offsets["t-"+strconv.Itoa(q)] = pos[q]
				committed[q] = pos[q]
			}
		}
		if len(v.Ext.Offsets) > 0 {
			add(names[m], history.Invoke, history.FCommit, v)
			add(names[m], history.OK, history.FCommit, v)
		}
	}
	rebalance(history.FAssign)
	seq := 0
	for len(ops) < n {
		switch r := rng.IntN(1000); {
		case r < 300: // a send
			seq++
			q := rng.IntN(partitions)
			v := history.NoValue()
			v.Topic, v.Value = "t", "p-0:"+strconv.Itoa(seq)
			add("p-0", history.Invoke, history.FSend, v)
			v.Partition, v.Offset = int32(q), logLen[q]
			logs[q] = append(logs[q], history.Record{Topic: "t", Partition: int32(q), Offset: logLen[q], Value: v.Value})
			logLen[q]++
			add("p-0", history.OK, history.FSend, v)
		case r < 940: // a member processes its partition's next record
			q := rng.IntN(partitions)
			if pos[q] >= logLen[q] {
				continue
			}
			m := owner(q)
			v := groupValue(m)
			v.Topic, v.Partition, v.Offset = "t", int32(q), pos[q]
			add(names[m], history.Invoke, history.FProcess, v)
			add(names[m], history.OK, history.FProcess, v)
			if pos[q]%2 == 0 {
				v.Key = "acct-" + strconv.FormatInt(pos[q], 10)
				add(names[m], history.Invoke, history.FSideEffect, v)
				add(names[m], history.OK, history.FSideEffect, v)
			}
			pos[q]++
		case r < 999:
			commit(rng.IntN(members))
		default: // eager rebalance: revoke everything, then the next generation
			rebalance(history.FRevoke)
			gen++
			copy(pos, committed)
			rebalance(history.FAssign)
		}
	}
	for m := range members {
		commit(m)
	}
	for q := range partitions { // final reads
		v := history.NoValue()
		v.Final = true
		add("final", history.Invoke, history.FPoll, v)
		v.HasRecords, v.Records = true, logs[q]
		add("final", history.OK, history.FPoll, v)
	}
	return ops
}

func TestGroupHistoryGeneratorIsAtLeastOnce(t *testing.T) {
	ops := genGroupHistory(20_000, 8, 3, 1)
	r := Check(ops, withGroup("after-processing"))
	if r.Violations != 0 || r.Count(ReprocessedRecord) == 0 || r.Count(DuplicateSideEffect) == 0 || len(r.Anomalies) != 2 {
		t.Fatalf("want permitted reprocessing and nothing else:\n%s", r.Summary())
	}
	// The same history judged at-most-once: its reprocessing breaks it.
	if r := Check(ops, withGroup("before-processing")); r.Violations == 0 {
		t.Fatalf("at-most-once should fail:\n%s", r.Summary())
	}
}

// BenchmarkCheckGroupMillionOps checks a million operations of a consumer
// group (32 partitions, 8 members) processing, committing and rebalancing.
func BenchmarkCheckGroupMillionOps(b *testing.B) {
	ops := genGroupHistory(1_000_000, 32, 8, 1)
	cfg := withGroup("after-processing")
	cfg.SkipLinearizability = true
	runtime.GC()
	b.ResetTimer()
	var r *Report
	for range b.N {
		r = Check(ops, cfg)
	}
	b.StopTimer()
	if r.Violations != 0 {
		b.Fatalf("not at-least-once:\n%s", r.Summary())
	}
	b.ReportMetric(float64(len(ops)), "history-ops")
	b.ReportMetric(float64(r.Count(ReprocessedRecord)), "reprocessed")
}
