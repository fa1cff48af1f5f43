package fuzz

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"kafkasim/model/cluster"
	"kafkasim/scenarios"
	"kafkasim/sim"
)

// Stream processors in drawn scenarios: some seeds add a read-process-write
// processor entry x (group xg, instances x-0..), reading the first topic and
// writing one record per input record to a topic of its own, x-out;
// exactly-once (exactly_once_v2: transactional.id x-<i>, read_committed
// input, offsets in the transaction) in two seeds of three, at-least-once
// otherwise. Faults aimed at it: an instance killed or paused (past its
// session half the time: a zombie that still holds an open transaction or
// commits late), cut off from the brokers or its coordinator, its clock
// moved; its group's coordinator and, exactly-once, its transaction
// coordinator crashed. A stream of its own decides and draws all of it, and
// it comes after every other draw: a seed draws exactly what it drew before
// processors existed and only adds them.

// processorStream seeds the processors' stream (the second word of its PCG).
const processorStream = 0x3c6ef372fe94f82b

// processorPercent of the seeds get a processor in Generate; a campaign
// takes its own (Options.ProcessorPercent, the fuzz command's
// --processors).
var processorPercent = 0

// processorFaultKinds are the faults aimed at a processor, swarm style.
var processorFaultKinds = []string{"member-stop", "member-pause", "member-partition", "member-clock", "coordinator", "txn-coordinator"}

// processorOutput is the topic a drawn processor writes.
const processorOutput = "x-out"

// withProcessor adds a processor, its output topic and the faults aimed at
// it to some seeds' scenario (drawn by rng, the processors' stream), and
// reports whether it did.
func withProcessor(rng *rand.Rand, s *scenarios.Scenario, percent int) bool {
	if rng.IntN(100) >= percent || len(s.Topics) == 0 || s.Duration <= 2*time.Second {
		return false
	}
	in := s.Topics[0]
	out := s.NewTopic(processorOutput, 1+rng.IntN(max(in.Partitions, 1)), in.ReplicationFactor)
	// Its records carry the input's keys, null ones too: a compacted
	// output would refuse them.
	set(&out.Config, "cleanup.policy", "delete")
	s.Topics = append(s.Topics, out)

	rate := 0.0
	for _, p := range s.Producers {
		if p.Topic != in.Name {
			continue
		}
		r := p.Rate * float64(p.Count)
		if p.Transactions != nil {
			r *= float64(p.Transactions.RecordsMax) // Rate counts transactions
		}
		rate += r
	}
	// drawGroup slows the producers down to what an external store keeps
	// up with; a processor has none, and the seed's producers stay as
	// drawn.
	producers := slices.Clone(s.Producers)
	c := drawGroup(rng, s, "xg", "x", rate)
	s.Producers = producers
	// A processor is one thread with no pool, no external store and no
	// static membership (Kafka Streams' own); it commits as it is told.
	c.Workers, c.SideEffects, c.Static, c.Commit = 1, "", false, scenarios.CommitAfterProcessing
	// Its processing time keeps up with the input on one thread (the group
	// draw sized it for its pool).
	if meanMax := time.Duration(float64(time.Second) / (capacityMargin * max(rate, 1))); c.Processing.Max > meanMax {
		scale := float64(meanMax) / float64(c.Processing.Max)
		c.Processing = sim.Range{Min: max(micros(time.Duration(float64(c.Processing.Min)*scale)), time.Microsecond),
			Max: max(micros(meanMax), time.Microsecond)}
		c.Processing.Max = max(c.Processing.Max, c.Processing.Min)
	}
	// The group draw sized max.poll.interval.ms for its pool: on one
	// thread a full poll's processing must stay well within it (a few
	// times over, as the group draw wants), or every poll leaves the group.
	if c.Config.Explicit["max.poll.interval.ms"] {
		records := 500
		if n, err := strconv.Atoi(c.Config.Get("max.poll.records")); err == nil && n > 0 {
			records = n
		}
		batch := time.Duration(records) * c.Processing.Max
		if interval := msOf(c.Config, "max.poll.interval.ms", 0); interval < 3*batch+time.Second {
			set(&c.Config, "max.poll.interval.ms", strconv.FormatInt((3*batch+time.Second).Milliseconds(), 10))
		}
	}
	for _, k := range []string{"enable.auto.commit", "auto.commit.interval.ms", "isolation.level"} {
		unset(&c.Config, k)
	}
	p := &scenarios.Processor{Output: processorOutput, ExactlyOnce: rng.IntN(3) > 0,
		CommitInterval: []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, time.Second, 5 * time.Second}[rng.IntN(4)]}
	p.Producer = scenarios.Config{Values: map[string]string{}, Explicit: map[string]bool{}}
	set(&p.Producer, "linger.ms", strconv.Itoa([]int{0, 5, 20}[rng.IntN(3)]))
	if p.ExactlyOnce {
		set(&p.Producer, "transaction.timeout.ms", strconv.Itoa([]int{10000, 20000, 60000}[rng.IntN(3)]))
	}
	c.Processor = p
	s.Consumers = append(s.Consumers, c)
	s.Faults = withProcessorFaults(rng, s, c, s.Faults)
	return true
}

// withProcessorFaults adds 0-4 faults aimed at processor entry c; they do
// not count against faultsMax, like the member faults.
func withProcessorFaults(rng *rand.Rand, s *scenarios.Scenario, c scenarios.Consumer, faults []scenarios.ScheduledFault) []scenarios.ScheduledFault {
	kinds, weights := swarm(rng, processorFaultKinds)
	if len(kinds) == 0 {
		kinds, weights = []string{"member-stop"}, []int{1}
	}
	out := slices.Clone(faults)
	for range rng.IntN(5) {
		at := time.Duration(rng.Int64N(int64(s.Duration-time.Second))) / time.Millisecond * time.Millisecond
		kind := kinds[pick(rng, weights)]
		var f scenarios.ScheduledFault
		ok := false
		if kind == "txn-coordinator" {
			if !c.Processor.ExactlyOnce {
				continue
			}
			k := []string{"crash", "kill", "shutdown"}[rng.IntN(3)]
			id := cluster.ClientName(c.Name, rng.IntN(c.Count))
			f = scenarios.ScheduledFault{Fault: sim.Fault{Kind: sim.FaultKind(k), Target: "txn-coordinator(" + id + ")",
				For: between(rng, 500*time.Millisecond, 12*time.Second)}, Key: k}
			ok = true
		} else {
			f, ok = drawMemberFault(rng, s, c, kind)
		}
		if ok {
			f.At = at
			out = append(out, f)
		}
	}
	out = inTimeOrder(out)
	for i := range out {
		out[i].Path = fmt.Sprintf("faults[%d]", i)
	}
	return out
}
