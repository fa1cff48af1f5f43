package runner

import (
	"fmt"
	"strings"
	"time"

	"kafkasim/checker"
	"kafkasim/history"
	"kafkasim/model/cluster"
	"kafkasim/model/reader"
	"kafkasim/sim"
)

// The run's phases, in the order execute runs them: build and schedule,
// then safety, liveness, converge, probe, drain, finalReads and collect,
// each of which returns why the run stopped early (or ""), then check.

// build builds the cluster the scenario describes, with the final reader
// added.
func (r *execution) build() error {
	s := r.s
	r.cfg = s.ClusterConfig()
	r.cfg.Trace = r.opts.Trace
	r.cfg.HooksOff = r.opts.HooksOff
	fr := reader.DefaultConfig("", topicNames(s))
	fr.Start = s.Duration + s.Settle
	fr.AutoOffsetReset = "earliest"
	fr.Processing = sim.Range{Min: time.Millisecond, Max: time.Millisecond}
	r.cfg.Readers = append(r.cfg.Readers, cluster.ReaderSpec{Name: FinalReaderName, Count: 1, Config: fr})
	r.cfg.FinalReader = FinalReaderName
	c, err := cluster.Build(r.cfg)
	if err != nil {
		return err
	}
	if r.built != nil {
		r.built(c)
	}
	r.c, r.w = c, c.World
	c.History.TraceSteps(r.w.Steps)
	if err := c.History.Spill(r.opts.HistorySpill); err != nil {
		return err
	}
	r.res = &Result{Scenario: s, Cluster: c, History: c.History}
	return nil
}

// schedule arms the scenario's faults and the nemesis, and the timeline's
// sampling.
func (r *execution) schedule() error {
	s, c, w := r.s, r.c, r.w
	for _, f := range s.Faults {
		schedule := func() error { return w.ScheduleFault(f.At, f.Fault) }
		if f.AfterElections > 0 {
			schedule = func() error { return c.ScheduleFaultAfterElections(f.At, f.AfterElections, f.Fault) }
		}
		if err := schedule(); err != nil {
			return fmt.Errorf("%s: %v", f.Path, err)
		}
	}
	if len(s.Nemesis) > 0 && s.NemesisIntensity > 0 {
		plan, err := w.StartNemesis(s.NemesisOptions())
		if err != nil {
			return err
		}
		r.res.NemesisPlan = plan
	}
	r.total = s.Duration + s.Settle
	r.res.Timeline = newTimeline(c, r.opts, r.total)
	w.SetAfterEvent(r.res.Timeline.afterEvent)
	return nil
}

// safety is the fault phase: faults fire, clients run.
func (r *execution) safety() string {
	r.w.Start()
	return r.runUntil(r.s.Duration, true)
}

// liveness heals everything and lets the cluster settle.
func (r *execution) liveness() string {
	r.w.HealAll()
	return r.runUntil(r.total, true)
}

// converge judges whether the cluster converged, waiting out a grace for
// one still finishing its healing.
//
// A cluster still finishing its healing (a follower fetching its last
// batches, a reader a record behind a backlog the leader is still
// appending) gets a short grace, checked every second; one that is stuck
// stays unconverged. A follower out of the ISR whose log end keeps reaching
// new highs is catching up (one batch per round trip with
// replica.fetch.max.bytes small, an fsync per batch with
// log.flush.interval.messages=1): such a second does not count against the
// grace, up to ConvergeCatchUpMax. The grace covers the longest wait the
// configuration itself puts on the way back: a request sent to a machine
// that went down silently is answered by nobody, and its client waits its
// own timeout (which may have started just before the heal) before it
// retries.
func (r *execution) converge() string {
	res, c, w := r.res, r.c, r.w
	res.Converged, res.ConvergeDetail = c.Converged()
	res.ConvergeGrace, res.ConvergeBasis = convergeGrace(r.cfg)
	caught := cluster.CatchUp{}
	caught.Progressed(c)
	catchUpEnd := w.Now() + ConvergeCatchUpMax
	// A producer holding a partition's batches as Kafka's would (retried
	// out of order until their delivery timeout) is waited for past the
	// grace, up to ProducerHoldMax.
	holdLimit := w.Now() + ProducerHoldMax
	heldEnd := min(w.Now()+c.ProducersHeldFor(), holdLimit)
	heldPastGrace := false
	for stalled := time.Duration(0); !res.Converged && (stalled < res.ConvergeGrace || w.Now() < heldEnd); {
		heldPastGrace = heldPastGrace || stalled >= res.ConvergeGrace
		if stopped := r.runFor(time.Second); stopped != "" {
			return stopped
		}
		if d := c.ProducersHeldFor(); d > 0 {
			heldEnd = max(heldEnd, min(w.Now()+d+time.Second, holdLimit))
		}
		res.Converged, res.ConvergeDetail = c.Converged()
		if caught.Progressed(c) && w.Now() < catchUpEnd {
			stalled = 0
		} else {
			stalled += time.Second
		}
	}
	if res.Converged && heldPastGrace {
		res.addConvergeDetail("waited past the grace for batches a leader answered OUT_OF_ORDER_SEQUENCE_NUMBER, not the next sequence (it took a later batch of the producer first, KIP-360): Kafka's producer retries them until delivery.timeout.ms and sends nothing later of their partition meanwhile")
	}
	if !res.Converged && len(c.Groups()) > 0 {
		// Groups are judged at an instant when everything else has
		// healed; their own writes to __consumer_offsets (auto-commits
		// every second, a group rebalancing for ever) may leave one
		// still replicating at the last sample. Look on a little for
		// such an instant; a high watermark that is stuck never gives
		// one.
		if stopped := r.judgeGroups(); stopped != "" {
			return stopped
		}
	}
	firstCommits := ""
	if !res.Converged {
		// A group that has just come out of a rebalance (one that went
		// on through the grace) has not auto-committed yet: Kafka's
		// consumer auto-commits auto.commit.interval.ms after its
		// assignment at the earliest (ConsumerCoordinator.onJoinComplete
		// restarts the timer). Wait for those first auto-commits, then
		// judge again.
		if due, members := c.FirstAutoCommitsDue(); due > 0 {
			if stopped := r.runFor(due + autoCommitSettle); stopped != "" {
				return stopped
			}
			if stopped := r.judgeGroups(); stopped != "" {
				return stopped
			}
			firstCommits = fmt.Sprintf("consumer groups judged after the first auto-commit of %s, assigned their partitions less than auto.commit.interval.ms before", strings.Join(members, ", "))
		}
	}
	if !res.Converged {
		// A consumer group Kafka itself would leave rebalancing: its
		// convergence is not judged; the rest of the run's liveness (the
		// probes, the final reads) and its safety still are.
		if why := c.GroupsNotJudged(); why != "" {
			res.Converged, res.ConvergeDetail = true, "not judged: "+why
		} else if why := c.TransactionsNotJudged(); why != "" {
			// A transaction Kafka itself leaves stalled, and the group of
			// the processor it holds: likewise.
			res.Converged, res.ConvergeDetail = true, "not judged: "+why
		}
	} else if without := c.JudgedWithout(); without != "" {
		// After what the conditions said they did not judge, if anything.
		res.addConvergeDetail("consumer groups judged without a member Kafka would stop too: " + without)
	}
	if res.Converged && firstCommits != "" {
		res.addConvergeDetail(firstCommits)
	}
	res.Timeline.sample()
	return ""
}

// judgeGroups looks on, for up to groupsJudgeWindow, for an instant when
// everything but the consumer groups has healed (their own writes to
// __consumer_offsets may leave one still replicating at the last sample),
// and judges convergence there.
func (r *execution) judgeGroups() string {
	c, w := r.c, r.w
	for end := w.Now() + groupsJudgeWindow; !c.HealedButGroups() && w.Now() < end; {
		if stopped := r.runFor(groupsJudgeStep); stopped != "" {
			return stopped
		}
	}
	r.res.Converged, r.res.ConvergeDetail = c.Converged()
	return ""
}

// probe has every running producer write one record to each partition and
// waits for the outcomes. A producer that cannot write after the heal is a
// liveness failure. A transactional producer a newer instance fenced is
// not probed (fenced); one fenced because its coordinator's transaction
// log lost its later epochs is closed and created again first, before its
// first probe or its second (fencedBehind); one whose transaction Kafka
// leaves stalled is not judged (stalledProbe).
func (r *execution) probe() string {
	c, res := r.c, r.res
	w := c.World
	acksNone := map[sim.NodeID]bool{}
	i := 0
	for _, spec := range res.Scenario.Producers {
		for range spec.Count {
			acksNone[c.Producers[i]] = spec.Config.Get("acks") == "0"
			i++
		}
	}
	var probing []sim.NodeID
	anyAcksNone := false
	tids := transactionalIDs(c, r.cfg.Producers)
	var fencedNotes []string
	for _, id := range c.Producers {
		if why := fenced(c, id, tids[id]); why != "" {
			fencedNotes = append(fencedNotes, why)
			continue
		}
		if why := fencedBehind(c, id, tids[id]); why != "" && recreate(w, id) {
			fencedNotes = append(fencedNotes, why)
		}
		if p := c.Producer(id); p != nil && w.State(id) == sim.Running {
			p.Probe()
			probing = append(probing, id)
			anyAcksNone = anyAcksNone || acksNone[id]
		}
	}
	// An acks=0 probe sent on stale metadata is lost without a word (the
	// broker closes the connection and the producer refreshes): probe such
	// producers twice more, and judge them by the last round.
	lastRound := map[sim.NodeID][]string{}
	if anyAcksNone {
		for round := 0; round < acksNoneProbeRounds-1; round++ {
			if stopped := r.runFor(2 * time.Second); stopped != "" {
				return stopped
			}
			for _, id := range probing {
				if p := c.Producer(id); p != nil && acksNone[id] {
					before := map[string]bool{}
					for _, v := range p.ProbesUnknown() {
						before[v] = true
					}
					p.Probe()
					lastRound[id] = nil
					for _, v := range p.ProbesUnknown() {
						if !before[v] {
							lastRound[id] = append(lastRound[id], v)
						}
					}
				}
			}
		}
	}
	probeMax := max(ProbeTimeMax, res.ConvergeGrace)
	if stopped := r.awaitProbes(probing, probeMax); stopped != "" {
		return stopped
	}
	// Kafka's idempotent producer can leave a partition unwritable for a
	// delivery timeout after every fault has healed: a batch that expired
	// in flight on its first attempt and was then refused leaves a gap in
	// its sequences, and the next batch meets OUT_OF_ORDER_SEQUENCE_NUMBER
	// until it expires in retry, which marks the gap and bumps the epoch
	// (Sender.failExpiredBatches, TransactionManager.canRetry). So a
	// producer whose probe did not go through is probed once more, and
	// judged by that round: a producer that cannot write then is stuck.
	before := map[sim.NodeID][4]int{}
	recreated := map[sim.NodeID]bool{}
	var again []sim.NodeID
	for _, id := range probing {
		if p := c.Producer(id); p != nil && !acksNone[id] {
			acked, failed, unknown, pending := p.ProbeOutcome()
			if (failed > 0 || unknown > 0) && pending == 0 {
				if why := fencedBehind(c, id, tids[id]); why != "" && recreate(w, id) {
					// The new instance's probes are all its own.
					fencedNotes = append(fencedNotes, why)
					recreated[id] = true
					p = c.Producer(id)
				} else {
					before[id] = [4]int{acked, failed, unknown, pending}
				}
				p.Probe()
				again = append(again, id)
			}
		}
	}
	if len(again) > 0 {
		if stopped := r.awaitProbes(again, probeMax); stopped != "" {
			return stopped
		}
	}
	var stalledNotes []string
	notJudged := map[sim.NodeID]bool{}
	for _, id := range probing {
		p := c.Producer(id)
		if p == nil {
			continue
		}
		acked, failed, unknown, pending := p.ProbeOutcome()
		if b, ok := before[id]; ok {
			acked, failed, unknown, pending = acked-b[0], failed-b[1], unknown-b[2], pending-b[3]
		}
		if acksNone[id] {
			// acks=0 never says: the final reads must hold the probes.
			// (The last round is already unknown: acks=0 completes at once.)
			r.unconfirmed = append(r.unconfirmed, lastRound[id]...)
			acked, unknown = acked+unknown, 0
		}
		if (failed > 0 || unknown > 0 || pending > 0) && res.Converged {
			if why := stalledProbe(c, id, tids[id]); why != "" {
				stalledNotes = append(stalledNotes, why)
				notJudged[id] = true
				continue
			}
			res.Converged = false
			res.ConvergeDetail = fmt.Sprintf("%s cannot write after the heal: of %d probe writes, %d acknowledged, %d failed, %d unknown, %d without an answer after %v",
				w.Name(id), acked+failed+unknown+pending, acked, failed, unknown, pending, probeMax)
		}
	}
	var names []string
	for _, id := range again {
		if !recreated[id] && !notJudged[id] {
			names = append(names, w.Name(id))
		}
	}
	if res.Converged && len(names) > 0 {
		res.addConvergeDetail("probed twice: the first probe of " + strings.Join(names, ", ") +
			" did not go through, the second did (Kafka's idempotent producer can take a delivery timeout to heal a sequence gap)")
	}
	if res.Converged {
		for _, why := range append(fencedNotes, stalledNotes...) {
			res.addConvergeDetail(why)
		}
	}
	return ""
}

// awaitProbes runs until none of producers' probes waits for an answer, or
// for probeMax at most.
func (r *execution) awaitProbes(producers []sim.NodeID, probeMax time.Duration) string {
	c, w := r.c, r.c.World
	deadline := w.Now() + probeMax
	for w.Now() < deadline {
		pending := false
		for _, id := range producers {
			if p := c.Producer(id); p != nil {
				if _, _, _, n := p.ProbeOutcome(); n > 0 {
					pending = true
				}
			}
		}
		if !pending {
			return ""
		}
		if stopped := r.runFor(time.Second); stopped != "" {
			return stopped
		}
	}
	return ""
}

// drain waits for replication to drain after the probes. Final reads end
// at the high watermark: it must be at the log end (the probes replicated)
// and stay there, or the final reads end below acknowledged records that
// are only not yet committed, which readers still polling read a moment
// later (and the checker calls lost). The output partitions of stream
// processors whose group Kafka rebalances for ever (not judged) never
// stop moving: they are not waited for (DrainedButOutpacedOutputs), and
// what the final reads end below is unseen, acknowledged after they began.
func (r *execution) drain() string {
	res, c := r.res, r.c
	ok, why := c.DrainedButOutpacedOutputs()
	for waited := time.Duration(0); res.Converged && !ok && waited < ConvergeGraceMax; waited += time.Second {
		if stopped := r.runFor(time.Second); stopped != "" {
			return stopped
		}
		ok, why = c.DrainedButOutpacedOutputs()
	}
	if !ok && res.Converged {
		res.Converged, res.ConvergeDetail = false, "after the probes: "+why
	}
	return ""
}

// finalReads has the final reader read every partition from its log start
// to its high watermark.
func (r *execution) finalReads() string {
	res, c, w := r.res, r.c, r.w
	final := c.FinalReader
	// The final reader must know every partition, those added during the
	// run too (its metadata may be older than the add): it asks again
	// until it does, for a few seconds at most.
	for waited := time.Duration(0); waited < 5*time.Second; waited += 100 * time.Millisecond {
		fr := c.Reader(final)
		if fr == nil || knowsAll(c, fr) {
			break
		}
		fr.RefreshMetadata()
		if stopped := r.runFor(100 * time.Millisecond); stopped != "" {
			return stopped
		}
	}
	if fr := c.Reader(final); fr != nil {
		fr.StartFinal()
	}
	deadline := w.Now() + FinalReadTimeMax
	for w.Now() < deadline {
		if stopped := r.runFor(time.Second); stopped != "" {
			return stopped
		}
		if fr := c.Reader(final); fr != nil && fr.FinalDone() {
			res.FinalReadsDone = true
			break
		}
	}
	w.SetAfterEvent(nil)
	if res.FinalReadsDone && res.Converged && len(r.unconfirmed) > 0 {
		if missing := missingFromFinalReads(c, r.unconfirmed); missing != "" {
			res.Converged, res.ConvergeDetail = false, "an acks=0 producer cannot write after the heal: its probe "+missing+" is not in the log"
		}
	}
	if !res.FinalReadsDone && res.Converged {
		pending := "the final reader is down"
		if fr := c.Reader(final); fr != nil {
			pending = fr.FinalPending()
		}
		res.Converged, res.ConvergeDetail = false, fmt.Sprintf("final reads did not reach every partition's end within %v: %s", FinalReadTimeMax, pending)
	}
	return ""
}

// collect takes what the run ended with from the world and the god view.
func (r *execution) collect() string {
	res, c, w := r.res, r.c, r.w
	res.TraceHash, res.Events, res.SimTime = w.TraceHash(), w.Steps(), w.Now()
	res.Faults = w.FaultLog()
	res.Violations = c.Audit.Violations()
	res.Losses = c.Audit.Losses()
	res.Stuck = c.StuckReplicas()
	if !res.Converged && len(res.Stuck) > 0 {
		// Undetected corruption left a replica Kafka cannot bring back
		// without an operator; what depends on it (a min ISR it must be
		// part of, the writes waiting for that) cannot heal either. The
		// run's liveness is not judged; its safety still is.
		res.Converged = true
		res.ConvergeDetail = "not judged: a replica is stuck (see stuck_replicas), so the cluster cannot heal without an operator: " + res.ConvergeDetail
	}
	res.Leaderless = c.LeaderlessForGood()
	if !res.Converged && len(res.Leaderless) > 0 {
		// A partition Kafka itself leaves leaderless until an operator
		// runs an unclean election: what depends on it (its producers'
		// records, readers' positions, the probes, the final reads)
		// cannot heal either. The run's liveness is not judged, provided
		// everything else the cluster must heal (the control plane and
		// every other partition, led, in sync and drained) did; its
		// safety still is.
		if ok, why := c.HealedButLeaderless(); ok {
			res.Converged = true
			res.ConvergeDetail = "not judged: a partition has no replica Kafka may elect (see leaderless_partitions), so the cluster cannot heal without an operator: " + res.ConvergeDetail
		} else {
			res.ConvergeDetail = why + " (besides the partitions Kafka leaves leaderless, see leaderless_partitions; first missing: " + res.ConvergeDetail + ")"
		}
	}
	if r.interrupted() { // the checks of a long run take seconds
		return interruptedDetail
	}
	return ""
}

// check lets the cluster go (unless Options.KeepCluster) and hands the
// history to the checker; it evaluates the expectations and the verdict.
func (r *execution) check() {
	res, s, c := r.res, r.s, r.c
	res.Invariants = invariants(c.Audit)
	res.Producers = producerStats(s, c)
	res.Final, res.FinalTopics, res.FinalGroups = FinalState(c), FinalTopics(c), FinalGroups(c)
	res.FinalTransactions = FinalTransactions(c)
	checks := checkerConfig(s, c)
	res.Happened = checks.Happened
	if !r.opts.KeepCluster {
		c.History.Detach()
		res.Cluster, r.c, r.w = nil, nil, nil
		res.Timeline.letGo()
	}
	if r.opts.BeforeChecks != nil {
		r.opts.BeforeChecks(Recorded{History: res.History, Plots: res.plotData()})
	}
	res.Report = checker.CheckEach(res.History.Each, checks)
	res.linkEvents()
	res.Expectations = evaluate(s, res)
	res.Verdict = verdict(res)
	res.WallTime = r.now().Sub(r.start)
}

// knowsAll reports whether a reader's metadata has every partition of the
// topics it reads.
func knowsAll(c *cluster.Cluster, r *reader.Reader) bool {
	im := c.Metadata()
	if im == nil {
		return true
	}
	for _, p := range im.Partitions() {
		if r.Reads(p.Topic) && !r.Knows(p.Topic, p.Partition) {
			return false
		}
	}
	return true
}

// missingFromFinalReads returns the first value final reads do not hold.
func missingFromFinalReads(c *cluster.Cluster, values []string) string {
	want := map[string]bool{}
	for _, v := range values {
		want[v] = true
	}
	final := c.World.Name(c.FinalReader)
	c.History.Each(func(op *history.Op) {
		if op.Process != final || op.F != history.FPoll || op.Type != history.OK {
			return
		}
		for _, r := range op.Value.Records {
			delete(want, r.Value)
		}
	})
	for _, v := range values {
		if want[v] {
			return v
		}
	}
	return ""
}

// addConvergeDetail adds a note to the convergence detail, after what is
// there.
func (res *Result) addConvergeDetail(note string) {
	res.ConvergeDetail = strings.TrimPrefix(res.ConvergeDetail+"; ", "; ") + note
}
