package sweep

import (
	"math"
	"slices"

	"kafkasim/history"
	"kafkasim/reports"
	"kafkasim/scenarios"
)

// What a run's read-process-write processors deliver, measured from its
// history alone: how long an input record takes to reach a read_committed
// reader as an output record, and how many output records become visible
// per second.

// ProcessorMetrics are the metrics a run with a processor reports,
// besides Metrics and GroupMetrics: a sweep whose base has no processor
// has none of them.
var ProcessorMetrics = []string{"p99-end-to-end-latency-ms", "mean-end-to-end-latency-ms", "committed-outputs-per-second"}

// hasProcessor reports whether a scenario has a processors entry.
func hasProcessor(s *scenarios.Scenario) bool {
	for _, c := range s.Consumers {
		if c.Processor != nil {
			return true
		}
	}
	return false
}

// measuresProcessors reports whether a stored run record has the
// processor metrics its scenario calls for: one written before they
// existed is run again rather than read as zeros.
func measuresProcessors(rec RunRecord, s *scenarios.Scenario) bool {
	if !hasProcessor(s) {
		return true
	}
	for _, m := range ProcessorMetrics {
		if _, ok := rec.Metrics[m]; !ok {
			return false
		}
	}
	return true
}

// output is an output send of a processor: the input it was made from,
// and whether it is sent in a transaction.
type output struct {
	src tpo
	txn bool
}

type tpo struct {
	topic     string
	partition int32
	offset    int64
}

// processorMetrics measures the processors of a history (names are
// ProcessorMetrics). An output record is visible to a read_committed
// reader from:
//
//   - the ok of its transaction's txn-commit (an exactly-once processor:
//     the EndTxn answer; the commit markers that move the last stable
//     offset follow it, and the history does not record when), the
//     transaction's sends matched by process and value;
//   - the ok of its own send (an at-least-once processor: acknowledged,
//     acks=all, so below the high watermark).
//
// An input record is produced at the invocation of its send (the
// application's send(), whose time is the record's CreateTime timestamp),
// found by the partition and offset its ok gave and the output's source.
//
//   - p99-end-to-end-latency-ms, mean-end-to-end-latency-ms: over the input
//     records sent by until (nanoseconds: the end of the fault phase; not
//     the records of the final phase's probes) whose send's ok gave their
//     offset and which have a visible output, the time from the input's
//     send to its first output becoming visible (a record processed again
//     counts once, by its first visible output);
//   - committed-outputs-per-second: output records that became visible by
//     until, per second from the first input send (any send not a
//     processor's) to until; an at-least-once processor's duplicates
//     count.
//
// All three are 0 when no output became visible.
func processorMetrics(h reports.History, until int64) map[string]float64 {
	produced := map[string]int64{}  // process, value -> an input send's invocation
	inputAt := map[tpo]int64{}      // an input record -> its send's invocation
	outputOf := map[string]output{} // process, value -> an output send not yet visible
	firstVisible := map[tpo]int64{} // an input record -> its first visible output
	outputs := 0                    // visible by until
	first := int64(-1)              // the first input send's invocation
	visible := func(src tpo, at int64) {
		if t, ok := firstVisible[src]; !ok || at < t {
			firstVisible[src] = at
		}
		if at <= until {
			outputs++
		}
	}
	h.EachHead(func(op *history.Op) {
		key := op.Process + "\x00" + op.Value.Value
		switch op.F {
		case history.FSend:
			// An output's source is on its invocation (and, from
			// kafkasim, on its completion too).
			if x := op.Value.Ext; x != nil && x.Source != nil && op.Type == history.Invoke {
				outputOf[key] = output{tpo{x.Source.Topic, x.Source.Partition, x.Source.Offset}, x.TransactionalID != ""}
			}
			o, isOutput := outputOf[key]
			if !isOutput {
				switch op.Type {
				case history.Invoke:
					produced[key] = op.Time
					if first < 0 {
						first = op.Time
					}
				case history.OK:
					if t, ok := produced[key]; ok && op.Value.Partition >= 0 && op.Value.Offset >= 0 {
						inputAt[tpo{op.Value.Topic, op.Value.Partition, op.Value.Offset}] = t
					}
					delete(produced, key)
				default:
					delete(produced, key)
				}
				return
			}
			switch {
			case op.Type == history.Invoke:
			case o.txn:
				// Visible with its transaction's commit, below.
				if op.Type != history.OK {
					delete(outputOf, key)
				}
			default:
				if op.Type == history.OK {
					visible(o.src, op.Time)
				}
				delete(outputOf, key)
			}
		case history.FTxnCommit:
			if op.Type != history.OK || op.Value.Ext == nil {
				return
			}
			for _, s := range op.Value.Ext.Sends {
				k := op.Process + "\x00" + s.Value
				if o, ok := outputOf[k]; ok && o.txn {
					visible(o.src, op.Time)
					delete(outputOf, k)
				}
			}
		case history.FTxnAbort:
			if op.Type != history.OK || op.Value.Ext == nil {
				return
			}
			for _, s := range op.Value.Ext.Sends {
				delete(outputOf, op.Process+"\x00"+s.Value)
			}
		}
	})
	var lat []int64
	var sum int64
	for src, v := range firstVisible { // kafkasim:orderless: sorted and summed as integers
		if at, ok := inputAt[src]; ok && at <= until {
			lat = append(lat, v-at)
			sum += v - at
		}
	}
	m := map[string]float64{"p99-end-to-end-latency-ms": 0, "mean-end-to-end-latency-ms": 0, "committed-outputs-per-second": 0}
	if len(lat) > 0 {
		slices.Sort(lat)
		m["p99-end-to-end-latency-ms"] = float64(lat[int(math.Ceil(0.99*float64(len(lat))))-1]) / 1e6
		m["mean-end-to-end-latency-ms"] = float64(sum) / float64(len(lat)) / 1e6
	}
	if first >= 0 && until > first {
		m["committed-outputs-per-second"] = float64(outputs) / (float64(until-first) / 1e9)
	}
	return m
}
