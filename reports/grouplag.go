package reports

import (
	"fmt"
	"maps"
	"math"
	"strconv"
	"time"

	"kafkasim/history"
)

// GroupLag is each group's consumer lag over time, from the history alone:
// at each of times (ascending), the sum over the partitions the group has
// committed of the log end offset minus the committed offset, each term
// clamped at 0. The log end offset of a partition is one past the highest
// offset an acknowledged send (or a committed transaction's send) or a
// poll has shown by then; the committed offset is the last acknowledged
// commit's (a commit, or a transaction's offsets once its txn-commit is
// acknowledged). Partitions with nothing committed yet are left out, as
// kafka-consumer-groups leaves their lag out ("-").
//
// lag[g][i] belongs to groups[g] at times[i]. The history is read in its
// order, which for kafkasim's histories is time order.
func GroupLag(h History, groups []string, times []time.Duration) [][]float64 {
	gi := make(map[string]int, len(groups))
	for i, g := range groups {
		gi[g] = i
	}
	logEnd := map[string]int64{}
	committed := make([]map[string]int64, len(groups))
	for i := range committed {
		committed[i] = map[string]int64{}
	}
	lag := make([][]float64, len(groups))
	for i := range lag {
		lag[i] = make([]float64, len(times))
	}
	k := 0
	sample := func(upTo time.Duration) {
		for ; k < len(times) && times[k] < upTo; k++ {
			for g := range groups {
				var sum int64
				for tp, c := range committed[g] { // kafkasim:orderless: a sum
					sum += max(0, logEnd[tp]-c)
				}
				lag[g][k] = float64(sum)
			}
		}
	}
	seen := func(tp string, offset int64) {
		if offset >= 0 && offset+1 > logEnd[tp] {
			logEnd[tp] = offset + 1
		}
	}
	commit := func(group string, offsets map[string]int64) {
		if g, ok := gi[group]; ok {
			for tp, o := range offsets { // kafkasim:orderless: each key set once
				committed[g][tp] = o
			}
		}
	}
	// A transaction's offsets go with its txn-commit's invocation; they
	// count once it is acknowledged.
	txnOffsets := map[string]*history.Ext{}
	h.Each(func(op *history.Op) {
		if op.F == history.FTxnCommit && op.Type == history.Invoke && op.Value.Ext != nil && len(op.Value.Ext.Offsets) > 0 {
			// Copied: the history may reuse the operation after the call.
			txnOffsets[op.Process] = &history.Ext{Group: op.Value.Ext.Group, Offsets: maps.Clone(op.Value.Ext.Offsets)}
		}
		if op.Type != history.OK {
			if op.F == history.FTxnCommit && op.Type != history.Invoke {
				delete(txnOffsets, op.Process)
			}
			return
		}
		sample(time.Duration(op.Time))
		v := &op.Value
		switch op.F {
		case history.FSend:
			if v.Partition >= 0 {
				seen(partitionName(v.Topic, v.Partition), v.Offset)
			}
		case history.FPoll:
			for i := range v.Records {
				seen(v.Records[i].TopicPartition(), v.Records[i].Offset)
			}
		case history.FCommit:
			if v.Ext != nil {
				commit(v.Ext.Group, v.Ext.Offsets)
			}
		case history.FTxnCommit:
			if v.Ext != nil {
				for _, s := range v.Ext.Sends {
					if s.Partition >= 0 {
						seen(partitionName(s.Topic, s.Partition), s.Offset)
					}
				}
			}
			if x := txnOffsets[op.Process]; x != nil {
				commit(x.Group, x.Offsets)
				delete(txnOffsets, op.Process)
			}
			if v.Ext != nil && len(v.Ext.Offsets) > 0 {
				commit(v.Ext.Group, v.Ext.Offsets)
			}
		}
	})
	sample(time.Duration(1<<63 - 1))
	return lag
}

// partitionName is the history's "topic-partition" name.
func partitionName(topic string, partition int32) string {
	return topic + "-" + strconv.Itoa(int(partition))
}

// groupLagFigure draws each consumer group's lag (GroupLag) at the
// throughput plot's bucket boundaries, beside the readers' lag: a group's
// lag is what it has committed, not where its members have read.
func (v *runView) groupLagFigure() *figure {
	acts := GroupActivities(v.r.history())
	if len(acts) == 0 || v.cs.b.n == 0 {
		return nil
	}
	groups := make([]string, len(acts))
	for i, a := range acts {
		groups[i] = a.Group
	}
	xs := bucketXs(v.cs.b, v.end)
	times := make([]time.Duration, len(xs))
	for i, x := range xs {
		times[i] = time.Duration(v.cs.b.origin) + time.Duration(math.Round(x*float64(time.Second)))
	}
	lag := GroupLag(v.r.history(), groups, times)
	var ss []series
	title := "Consumer group lag (log end minus committed offset)"
	if len(groups) == 1 {
		title = "Consumer group lag of " + groups[0] + " (log end minus committed offset)"
	}
	if len(groups) <= maxLines {
		for i, g := range groups {
			ss = append(ss, series{name: g, xs: xs, ys: lag[i]})
		}
	} else {
		ss = spread("lag", xs, lag)
		title = fmt.Sprintf("Consumer group lag across %d groups", len(groups))
	}
	p := panelSpec{series: ss, y: countAxis("lag (records)", top(ss)),
		notes: []string{"log end: acknowledged sends and polls; committed: acknowledged commits; partitions with a commit"}}
	return v.single("group-lag", title, p)
}
