package reports

import (
	"math"
	"sort"
	"time"

	"kafkasim/history"
)

// clientSeries are the per-bucket figures of the client history that the
// throughput, latency and unavailability plots draw.
type clientSeries struct {
	b buckets
	// Counts per bucket, by completion time.
	acked   []float64 // sends completed ok
	unacked []float64 // sends completed fail or info
	polled  []float64 // records returned by ok polls
	// invoked counts sends by invocation time, to tell how many await
	// an answer.
	invoked []float64
	// finalRecords are the records the final reads polled, which polled
	// leaves out.
	finalRecords int
	// last is the time of the last operation counted, from the buckets'
	// origin.
	last time.Duration
	// latencyP50 and latencyP99 are each bucket's produce latency
	// percentiles (ms; NaN without an acknowledged send).
	latencyP50, latencyP99 []float64
	// hasSends and hasPolls say whether any send completed and any poll
	// succeeded, so that a plot with nothing to show can be skipped.
	hasSends, hasPolls, hasLatency bool
}

// completion reports whether op ends an operation (ok, fail or info).
func completion(op *history.Op) bool { return op.Type != history.Invoke }

// counted reports whether op feeds the client series: completed sends and
// successful polls.
func counted(op *history.Op) bool {
	switch op.F {
	case history.FSend:
		return completion(op)
	case history.FPoll:
		return op.Type == history.OK
	}
	return false
}

// newClientSeries buckets the history's sends and polls per second of
// simulated time. The polls of the processes in final are counted apart:
// the final reads poll the whole log in a second or two, and a rate scaled
// to them flattens everything the scenario's clients did.
//
// It hands alsoHead every operation of its first pass over the history
// (without the polls' records) and also every operation of its second
// (with them), each nil for none, so that other series need no pass of
// their own. final is read in the second pass only: alsoHead may fill it.
func newClientSeries(h History, final map[string]bool, alsoHead, also func(op *history.Op)) clientSeries {
	minT, maxT := int64(math.MaxInt64), int64(math.MinInt64)
	// inOrder: the sends complete in time order (a simulator's history
	// always does), so each bucket's latencies can be reduced to its
	// percentiles once the next bucket begins, instead of all being kept
	// (7 M of them in an hour of the reference load, while the checks run).
	inOrder, lastAck := true, int64(math.MinInt64)
	h.EachHead(func(op *history.Op) {
		if alsoHead != nil {
			alsoHead(op)
		}
		if op.F == history.FSend && op.Type == history.OK {
			inOrder = inOrder && op.Time >= lastAck
			lastAck = op.Time
		}
		if counted(op) {
			minT = min(minT, op.Time)
			maxT = max(maxT, op.Time)
		}
	})
	var s clientSeries
	if minT > maxT { // nothing completed
		if also != nil {
			h.Each(also)
		}
		return s
	}
	s.b = newBuckets(minT, maxT)
	s.acked = make([]float64, s.b.n)
	s.unacked = make([]float64, s.b.n)
	s.polled = make([]float64, s.b.n)
	s.invoked = make([]float64, s.b.n)
	lat := newLatencies(s.b.n, inOrder)
	s.last = time.Duration(maxT - s.b.origin)

	m := newInvokeMatcher()
	h.Each(func(op *history.Op) {
		if also != nil {
			also(op)
		}
		switch op.F {
		case history.FSend:
			if op.Type == history.Invoke {
				m.invoke(op)
				s.invoked[s.b.index(op.Time)]++
				return
			}
			s.hasSends = true
			k := s.b.index(op.Time)
			invokedAt, ok := m.complete(op)
			if op.Type == history.OK {
				s.acked[k]++
				// Latency is that of acknowledged sends: a send that
				// failed after delivery.timeout.ms measures the timeout,
				// not the cluster.
				if ok && op.Time >= invokedAt {
					lat.add(k, float64(op.Time-invokedAt)/1e6)
					s.hasLatency = true
				}
			} else {
				s.unacked[k]++
			}
		case history.FPoll:
			switch {
			case op.Type != history.OK:
			case final[op.Process]:
				s.finalRecords += len(op.Value.Records)
			default:
				s.hasPolls = true
				s.polled[s.b.index(op.Time)] += float64(len(op.Value.Records))
			}
		}
	})
	s.latencyP50, s.latencyP99 = lat.percentiles()
	return s
}

// latencies gathers each bucket's latencies and gives their percentiles:
// in order, one bucket at a time (reduced when the next begins); else all
// buckets at once.
type latencies struct {
	inOrder  bool
	cur      int         // in order: the bucket open, -1 for none
	buf      []float64   // in order: its latencies
	byBucket [][]float64 // else
	p50, p99 []float64
}

func newLatencies(n int, inOrder bool) *latencies {
	l := &latencies{inOrder: inOrder, cur: -1, p50: make([]float64, n), p99: make([]float64, n)}
	for i := range n {
		l.p50[i], l.p99[i] = math.NaN(), math.NaN()
	}
	if !inOrder {
		l.byBucket = make([][]float64, n)
	}
	return l
}

func (l *latencies) add(k int, ms float64) {
	if !l.inOrder {
		l.byBucket[k] = append(l.byBucket[k], ms)
		return
	}
	if k != l.cur {
		l.reduce()
		l.cur = k
	}
	l.buf = append(l.buf, ms)
}

// reduce sets the open bucket's percentiles and empties it.
func (l *latencies) reduce() {
	if l.cur >= 0 && len(l.buf) > 0 {
		l.p50[l.cur], l.p99[l.cur] = percentile(l.buf, 0.50), percentile(l.buf, 0.99)
	}
	l.buf = l.buf[:0]
}

func (l *latencies) percentiles() (p50, p99 []float64) {
	l.reduce()
	for k, xs := range l.byBucket {
		if len(xs) > 0 {
			l.p50[k], l.p99[k] = percentile(xs, 0.50), percentile(xs, 0.99)
		}
	}
	return l.p50, l.p99
}

// awaiting is, at the end of each bucket, how many sends had been invoked
// and not yet answered: it climbs while the cluster takes no writes and
// answers none, which the failed share cannot show (it counts answers).
func (s clientSeries) awaiting() []float64 {
	out := make([]float64, s.b.n)
	open := 0.0
	for i := range out {
		open += s.invoked[i] - s.acked[i] - s.unacked[i]
		out[i] = max(open, 0)
	}
	return out
}

// percentile is the nearest-rank q-quantile (0 < q <= 1) of xs, which it
// sorts in place.
func percentile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	sort.Float64s(xs)
	r := int(math.Ceil(q*float64(len(xs)))) - 1
	return xs[max(0, min(r, len(xs)-1))]
}

// pendingSend is an invoked send waiting for its completion.
type pendingSend struct {
	at   int64
	done bool
}

// invokeMatcher pairs each send completion with its invocation. A producer
// keeps many sends in flight (max.in.flight.requests.per.connection, and
// batching), so completions of one process need not come back in invocation
// order; record values are unique per history (docs/history.md), so the value
// identifies the send. Sends without a value fall back to the process's
// oldest outstanding invocation.
type invokeMatcher struct {
	byValue map[string]*pendingSend   // process + NUL + record value
	queue   map[string][]*pendingSend // per process, in invocation order
}

func newInvokeMatcher() *invokeMatcher {
	return &invokeMatcher{byValue: map[string]*pendingSend{}, queue: map[string][]*pendingSend{}}
}

func matchKey(op *history.Op) string { return op.Process + "\x00" + op.Value.Value }

func (m *invokeMatcher) invoke(op *history.Op) {
	p := &pendingSend{at: op.Time}
	if op.Value.Value != "" {
		m.byValue[matchKey(op)] = p
	}
	m.queue[op.Process] = append(m.queue[op.Process], p)
}

// complete returns the invocation time of op's send, and false when no
// outstanding invocation is found.
func (m *invokeMatcher) complete(op *history.Op) (int64, bool) {
	if op.Value.Value != "" {
		k := matchKey(op)
		if p := m.byValue[k]; p != nil && !p.done {
			p.done = true
			delete(m.byValue, k)
			m.trim(op.Process)
			return p.at, true
		}
	}
	m.trim(op.Process)
	q := m.queue[op.Process]
	if len(q) == 0 {
		return 0, false
	}
	p := q[0]
	p.done = true
	m.queue[op.Process] = q[1:]
	m.trim(op.Process)
	return p.at, true
}

// trim drops completed sends from the head of a process's queue, so that
// the queue holds only what is in flight.
func (m *invokeMatcher) trim(process string) {
	q := m.queue[process]
	for len(q) > 0 && q[0].done {
		q = q[1:]
	}
	if len(q) == 0 {
		delete(m.queue, process)
		return
	}
	m.queue[process] = q
}
