// Package runner executes a scenario: it builds the cluster, runs the fault
// phase (scheduled faults and the nemesis), heals everything and lets the
// cluster settle (the liveness phase), runs final reads, and hands the
// history to the checker. It tells apart the three ways a run fails, as
// TigerBeetle's VOPR does: a broken guarantee or expectation (correctness),
// a cluster that does not heal (liveness), and the simulator itself failing
// (crash).
package runner

import (
	"fmt"
	"runtime/debug"
	"slices"
	"time"

	"kafkasim/checker"
	"kafkasim/history"
	"kafkasim/model/audit"
	"kafkasim/model/cluster"
	"kafkasim/model/reader"
	"kafkasim/reports"
	"kafkasim/scenarios"
	"kafkasim/sim"
)

// Verdicts of a run.
const (
	Pass     = "pass"
	Fail     = "fail"     // an expectation or invariant failed
	Liveness = "liveness" // the cluster did not converge after healing
	Crash    = "crash"    // the simulator itself failed
)

// FinalReaderName is the reader the runner adds to every run for final
// reads: after the settle phase it reads every partition from its log start
// to its high watermark, so that an acknowledged record missing from the
// log is lost, not merely unseen.
const FinalReaderName = scenarios.FinalReaderName

// FinalReadTimeMax bounds the final reads in simulated time, and
// ProbeTimeMax the write probes.
const (
	FinalReadTimeMax = 2 * time.Minute
	ProbeTimeMax     = time.Minute
	// ConvergeGraceMax is how long past settle the runner waits for a
	// cluster that has not quite converged, at least: the grace grows to
	// cover the configuration's own longest wait on a lost request (see
	// recoveryWait), plus ConvergeMargin.
	ConvergeGraceMax = 15 * time.Second
	// ConvergeMargin is what the grace adds to the longest configured
	// wait: the retry itself, a metadata refresh, replication.
	ConvergeMargin = 5 * time.Second
	// ConvergeWaitCap bounds the configured wait the grace covers, so that
	// a request.timeout.ms of days does not run for days.
	ConvergeWaitCap = 10 * time.Minute
	// ConvergeCatchUpMax bounds how long past settle the runner waits for
	// followers out of the ISR that are still fetching their way back
	// (their log ends reach new highs every few seconds).
	ConvergeCatchUpMax = 3 * time.Minute
	// acksNoneProbeRounds is how many rounds of probes an acks=0
	// producer writes.
	acksNoneProbeRounds = 3
)

// Options configure a run.
type Options struct {
	// Trace receives every trace record when set.
	Trace sim.TraceSink
	// SampleEvery is the timeline's period; zero picks one from the
	// scenario's length (about 400 samples).
	SampleEvery time.Duration
	// TimelinePartitionsMax bounds the partitions sampled (default 256).
	TimelinePartitionsMax int
	// Progress, when set, is called about every simulated second.
	Progress func(now, total time.Duration)
	// Clock measures wall time (the runner itself never reads the OS
	// clock: nil means wall times are zero).
	Clock func() time.Time
	// KeepCluster keeps the simulated cluster in the result (tests look
	// into it). Without it the cluster is let go before the checks: its
	// logs, disks and audit — hundreds of megabytes on a long run — are
	// then the collector's to reuse for the checker's tables.
	KeepCluster bool
	// Stop, when closed, ends the run at the next simulated second: the
	// result then has Interrupted set (and verdict crash), and is not
	// checked. Ctrl-C closes it.
	Stop <-chan struct{}
	// HooksOff runs the world without its performance hooks, for the test
	// that holds them to changing nothing (sim.Options.HooksOff).
	HooksOff bool
}

// Result is everything a run produced.
type Result struct {
	Scenario *scenarios.Scenario
	// Cluster is the simulated cluster: kept past the checks only with
	// Options.KeepCluster, or when the run crashed. History and Final are
	// what the run store needs of it.
	Cluster *cluster.Cluster
	History *history.Recorder
	// Final is each partition's state when the run ended, FinalTopics
	// each topic's id and configs.
	Final       []reports.PartitionState
	FinalTopics []reports.TopicState
	TraceHash   uint64
	Events      uint64
	SimTime     time.Duration
	WallTime    time.Duration
	Report      *checker.Report
	// Invariants are the god-view invariants with their status.
	Invariants []Invariant
	Violations []audit.Violation
	Losses     []audit.Loss
	// Converged and ConvergeDetail: did the cluster heal after settle, and
	// if not, what was missing.
	Converged      bool
	ConvergeDetail string
	// ConvergeGrace is how long past settle the runner waited at most for
	// convergence (not counting seconds a follower gained while catching
	// up), and ConvergeBasis how that was computed.
	ConvergeGrace time.Duration
	ConvergeBasis string
	// Stuck are replicas convergence did not wait for: kept out of their
	// ISR by a corrupt leader epoch, as Kafka keeps them (Cluster.StuckReplicas).
	Stuck          []string
	FinalReadsDone bool
	Faults         []sim.FaultRecord
	NemesisPlan    sim.NemesisPlan
	Timeline       *Timeline
	Producers      []ProducerStats
	Expectations   []ExpectationResult
	Verdict        string
	// CrashDetail says how the simulator failed, when Verdict is Crash.
	CrashDetail string
	// Interrupted: Options.Stop ended the run before it finished (its
	// Verdict is Crash and nothing was checked).
	Interrupted bool
	stop        <-chan struct{}

	unconfirmed []string // acks=0 probe values the final reads must hold
}

// Invariant is one god-view invariant.
type Invariant struct {
	Name   string
	Count  int
	Detail string // the first violation
}

// Run executes a scenario. An error means the scenario could not start (a
// bug in validation); a simulator failure during the run is a Result with
// Verdict Crash.
// watchCluster, when a test sets it, is handed the cluster a run builds.
var watchCluster func(*cluster.Cluster)

func Run(s *scenarios.Scenario, opts Options) (res *Result, err error) {
	now := opts.Clock
	if now == nil {
		now = func() time.Time { return time.Time{} }
	}
	start := now()
	cfg := s.ClusterConfig()
	cfg.Trace = opts.Trace
	cfg.HooksOff = opts.HooksOff
	fr := reader.DefaultConfig("", topicNames(s))
	fr.Start = s.Duration + s.Settle
	fr.AutoOffsetReset = "earliest"
	fr.Processing = sim.Range{Min: time.Millisecond, Max: time.Millisecond}
	cfg.Readers = append(cfg.Readers, cluster.ReaderSpec{Name: FinalReaderName, Count: 1, Config: fr})
	c, err := cluster.Build(cfg)
	if err != nil {
		return nil, err
	}
	if watchCluster != nil {
		watchCluster(c)
	}
	w := c.World
	c.History.TraceSteps(w.Steps)
	res = &Result{Scenario: s, Cluster: c, History: c.History, stop: opts.Stop}
	defer func() {
		// A panic inside the model is the simulator failing, not the
		// user: report it as a crash with where it happened.
		if p := recover(); p != nil {
			res.Verdict = Crash
			if w == nil { // in the checks, the cluster let go
				res.CrashDetail = fmt.Sprintf("panic in the checks: %v\n%s", p, debug.Stack())
			} else {
				res.CrashDetail = fmt.Sprintf("panic at simulated %v (event %d): %v\n%s", w.Now(), w.Steps(), p, debug.Stack())
				res.TraceHash, res.Events, res.SimTime = w.TraceHash(), w.Steps(), w.Now()
			}
			res.WallTime = now().Sub(start)
			err = nil
		}
	}()
	for _, f := range s.Faults {
		schedule := func() error { return w.ScheduleFault(f.At, f.Fault) }
		if f.AfterElections > 0 {
			schedule = func() error { return c.ScheduleFaultAfterElections(f.At, f.AfterElections, f.Fault) }
		}
		if err := schedule(); err != nil {
			return nil, fmt.Errorf("%s: %v", f.Path, err)
		}
	}
	if len(s.Nemesis) > 0 && s.NemesisIntensity > 0 {
		plan, err := w.StartNemesis(s.NemesisOptions())
		if err != nil {
			return nil, err
		}
		res.NemesisPlan = plan
	}
	total := s.Duration + s.Settle
	res.Timeline = newTimeline(c, opts, total)
	w.SetAfterEvent(res.Timeline.afterEvent)

	// The safety phase: faults fire, clients run.
	w.Start()
	if stopped := res.runPhase(w, s.Duration, total, opts.Progress); stopped != "" {
		return res.crashed(w, stopped, now().Sub(start)), nil
	}
	// The liveness phase: heal everything, let the cluster settle.
	w.HealAll()
	if stopped := res.runPhase(w, total, total, opts.Progress); stopped != "" {
		return res.crashed(w, stopped, now().Sub(start)), nil
	}
	res.Converged, res.ConvergeDetail = converged(c)
	// A cluster still finishing its healing (a follower fetching its last
	// batches, a reader a record behind a backlog the leader is still
	// appending) gets a short grace, checked every second; one that is
	// stuck stays unconverged.
	// A follower out of the ISR whose log end keeps reaching new highs is
	// catching up (one batch per round trip with replica.fetch.max.bytes
	// small, an fsync per batch with log.flush.interval.messages=1): such a
	// second does not count against the grace, up to ConvergeCatchUpMax.
	// The grace covers the longest wait the configuration itself puts on
	// the way back: a request sent to a machine that went down silently
	// is answered by nobody, and its client waits its own timeout (which
	// may have started just before the heal) before it retries.
	res.ConvergeGrace, res.ConvergeBasis = convergeGrace(cfg)
	caught := catchUp{}
	caught.progressed(c)
	catchUpEnd := w.Now() + ConvergeCatchUpMax
	for stalled := time.Duration(0); !res.Converged && stalled < res.ConvergeGrace; {
		if stopped := res.runPhase(w, w.Now()+time.Second, 0, nil); stopped != "" {
			return res.crashed(w, stopped, now().Sub(start)), nil
		}
		res.Converged, res.ConvergeDetail = converged(c)
		if caught.progressed(c) && w.Now() < catchUpEnd {
			stalled = 0
		} else {
			stalled += time.Second
		}
	}
	res.Timeline.sample()
	// Every producer must be able to write again: one probe record to each
	// partition, which must be acknowledged.
	if stopped := probeWrites(c, res); stopped != "" {
		return res.crashed(w, stopped, now().Sub(start)), nil
	}
	// Final reads end at the high watermark: it must be at the log end
	// (the probes replicated) and stay there, or the final reads end below
	// acknowledged records that are only not yet committed, which readers
	// still polling read a moment later (and the checker calls lost).
	ok, why := drained(c)
	for waited := time.Duration(0); res.Converged && !ok && waited < ConvergeGraceMax; waited += time.Second {
		if stopped := res.runPhase(w, w.Now()+time.Second, 0, nil); stopped != "" {
			return res.crashed(w, stopped, now().Sub(start)), nil
		}
		ok, why = drained(c)
	}
	if !ok && res.Converged {
		res.Converged, res.ConvergeDetail = false, "after the probes: "+why
	}
	// Final reads.
	final := c.Readers[len(c.Readers)-1]
	// The final reader must know every partition, those added during the
	// run too (its metadata may be older than the add): it asks again
	// until it does, for a few seconds at most.
	for waited := time.Duration(0); waited < 5*time.Second; waited += 100 * time.Millisecond {
		r := c.Reader(final)
		if r == nil || knowsAll(c, r) {
			break
		}
		r.RefreshMetadata()
		if stopped := res.runPhase(w, w.Now()+100*time.Millisecond, 0, nil); stopped != "" {
			return res.crashed(w, stopped, now().Sub(start)), nil
		}
	}
	if r := c.Reader(final); r != nil {
		r.StartFinal()
	}
	deadline := w.Now() + FinalReadTimeMax
	for w.Now() < deadline {
		if stopped := res.runPhase(w, w.Now()+time.Second, 0, nil); stopped != "" {
			return res.crashed(w, stopped, now().Sub(start)), nil
		}
		if r := c.Reader(final); r != nil && r.FinalDone() {
			res.FinalReadsDone = true
			break
		}
	}
	w.SetAfterEvent(nil)
	if res.FinalReadsDone && res.Converged && len(res.unconfirmed) > 0 {
		if missing := missingFromFinalReads(c, res.unconfirmed); missing != "" {
			res.Converged, res.ConvergeDetail = false, "an acks=0 producer cannot write after the heal: its probe "+missing+" is not in the log"
		}
	}
	if !res.FinalReadsDone && res.Converged {
		pending := "the final reader is down"
		if r := c.Reader(final); r != nil {
			pending = r.FinalPending()
		}
		res.Converged, res.ConvergeDetail = false, fmt.Sprintf("final reads did not reach every partition's end within %v: %s", FinalReadTimeMax, pending)
	}
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
	if res.interrupted() { // the checks of a long run take seconds
		return res.crashed(w, interruptedDetail, now().Sub(start)), nil
	}
	res.Invariants = invariants(c.Audit)
	res.Producers = producerStats(s, c)
	res.Final, res.FinalTopics = FinalState(c), FinalTopics(c)
	checks := checkerConfig(s, c)
	if !opts.KeepCluster {
		c.History.Detach()
		res.Cluster, c, w = nil, nil, nil
		res.Timeline.letGo()
	}
	res.Report = checker.CheckEach(res.History.Each, checks)
	res.linkEvents()
	res.Expectations = evaluate(s, res)
	res.Verdict = verdict(res)
	res.WallTime = now().Sub(start)
	return res, nil
}

// convergeGrace is how long past settle the runner waits for convergence:
// ConvergeGraceMax, or the longest wait the configuration puts on the way
// back from a fault plus ConvergeMargin when that is longer. The waits are
// the clients' and followers' timeouts on a request nobody answers (a
// crashed machine tells no peer): each producer's request.timeout.ms plus
// its retry backoff, each reader's fetch timeout, the followers'
// replica.socket.timeout.ms, the brokers' session timeout and the quorum's
// fetch timeout. The basis says which wait decided.
func convergeGrace(cfg cluster.Config) (time.Duration, string) {
	var longest time.Duration
	why := ""
	consider := func(d time.Duration, what string) {
		if d > longest {
			longest, why = d, what
		}
	}
	for _, p := range cfg.Producers {
		consider(p.Config.LostRequestWait(), fmt.Sprintf("producer %s: request.timeout.ms %v + retry backoff %v",
			p.Name, p.Config.RequestTimeout, max(p.Config.RetryBackoff, p.Config.RetryBackoffMax)))
	}
	for _, r := range cfg.Readers {
		if r.Name == FinalReaderName {
			continue // it starts after settle
		}
		consider(r.Config.LostRequestWait(), fmt.Sprintf("consumer %s: fetch.max.wait.ms %v + request.timeout.ms/10 %v + retry.backoff.ms %v",
			r.Name, r.Config.FetchMaxWait, r.Config.RequestTimeout/10, r.Config.RetryBackoff))
	}
	consider(cfg.Data.LostFetchWait(), fmt.Sprintf("followers: replica.socket.timeout.ms %v + replica.fetch.backoff.ms %v",
		cfg.Data.ReplicaSocketTimeout, cfg.Data.ReplicaFetchBackoff))
	consider(cfg.Broker.SessionTimeout, fmt.Sprintf("broker.session.timeout.ms %v", cfg.Broker.SessionTimeout))
	consider(cfg.Quorum.FetchTimeout, fmt.Sprintf("controller.quorum.fetch.timeout.ms %v", cfg.Quorum.FetchTimeout))
	if longest > ConvergeWaitCap {
		longest, why = ConvergeWaitCap, fmt.Sprintf("%s, capped at %v", why, ConvergeWaitCap)
	}
	if longest+ConvergeMargin <= ConvergeGraceMax {
		return ConvergeGraceMax, fmt.Sprintf("%v (the longest configured wait, %s, + %v margin, is shorter)", ConvergeGraceMax, why, ConvergeMargin)
	}
	return longest + ConvergeMargin, fmt.Sprintf("%s + %v margin", why, ConvergeMargin)
}

// runPhase runs the world until t, reporting progress each simulated
// second. It returns why the run stopped early, or "".
func (res *Result) runPhase(w *sim.World, t, total time.Duration, progress func(now, total time.Duration)) string {
	for w.Now() < t {
		if res.interrupted() {
			return interruptedDetail
		}
		step := min(t, w.Now()+time.Second)
		rr := w.RunUntil(step)
		if rr.Livelocked() {
			return rr.Detail
		}
		if progress != nil {
			progress(w.Now(), total)
		}
		switch rr.Reason {
		case sim.StopHalted:
			return "halted: " + rr.Detail
		case sim.StopIdle:
			return "" // nothing left to happen: an idle world is done
		}
	}
	return ""
}

// interruptedDetail is why a run stopped when Options.Stop closed.
const interruptedDetail = "interrupted"

func (res *Result) interrupted() bool {
	select {
	case <-res.stop:
		return true
	default:
		return false
	}
}

func (res *Result) crashed(w *sim.World, why string, wall time.Duration) *Result {
	res.Verdict = Crash
	res.CrashDetail = why
	res.Interrupted = why == interruptedDetail
	res.TraceHash, res.Events, res.SimTime, res.WallTime = w.TraceHash(), w.Steps(), w.Now(), wall
	res.Faults = w.FaultLog()
	return res
}

func topicNames(s *scenarios.Scenario) []string {
	out := make([]string, len(s.Topics))
	for i, t := range s.Topics {
		out[i] = t.Name
	}
	return out
}

// checkerConfig is what the scenario promises plus what the god view saw
// happen that Kafka permits.
func checkerConfig(s *scenarios.Scenario, c *cluster.Cluster) checker.Config {
	cc := s.Guarantees()
	cc.Consumers = append(cc.Consumers, checker.ConsumerGuarantees{Prefix: FinalReaderName, Isolation: "read_uncommitted", AutoOffsetReset: "earliest"})
	cc.Losses = []checker.DataLoss{}
	for _, l := range c.Audit.Losses() {
		cc.Losses = append(cc.Losses, checker.DataLoss{Partition: l.Partition, From: l.From, To: l.To, Cause: l.Cause, ExposedBy: l.ExposedBy,
			At: l.At, LeaderEnd: l.LeaderEnd})
		// An unclean election that only exposed a power loss happened all
		// the same.
		if l.Cause == audit.CauseUncleanElection || l.ExposedBy == audit.CauseUncleanElection {
			cc.UncleanElections++
		}
	}
	for _, h := range c.HeldBack() {
		cc.HeldBack = append(cc.HeldBack, checker.HeldBack{Partition: h.Partition, From: h.From, To: h.To})
	}
	for _, f := range c.Audit.ForgottenBatches() {
		cc.Forgotten = append(cc.Forgotten, checker.ForgottenBatch{Partition: f.Partition, From: f.From, To: f.To})
	}
	for _, f := range c.Audit.ForgottenProducers() {
		cc.ForgottenProducers = append(cc.ForgottenProducers, checker.OffsetRange{Partition: f.Partition, From: f.From, To: f.To})
	}
	for _, u := range c.Audit.UnknownProducerAppends() {
		cc.UnknownProducerAppends = append(cc.UnknownProducerAppends, checker.OffsetRange{Partition: u.Partition, From: u.From, To: u.To})
	}
	for _, r := range c.Audit.ResurrectedRanges() {
		cc.Resurrected = append(cc.Resurrected, checker.OffsetRange{Partition: r.Partition, From: r.From, To: r.To})
	}
	for _, r := range c.World.FaultLog() {
		if r.Undo || r.Skipped != "" {
			continue
		}
		if op, ok := r.Fault.Custom.(cluster.AddPartitions); ok && !slices.Contains(cc.PartitionsAdded, op.Topic) {
			cc.PartitionsAdded = append(cc.PartitionsAdded, op.Topic)
		}
		switch {
		case r.Fault.Kind == sim.FaultCrash, r.Fault.Kind == sim.FaultPowerLoss,
			r.Fault.Kind == sim.FaultDisk && (r.Fault.Disk == sim.DiskTornWrite || r.Fault.Disk == sim.DiskWipe):
			cc.PowerLosses++
		}
	}
	sizes := c.History.Sizes()
	cc.Sizes = &sizes
	return cc
}

func invariants(a *audit.Audit) []Invariant {
	first := map[string]string{}
	for _, v := range a.Violations() {
		if _, ok := first[v.Invariant]; !ok {
			first[v.Invariant] = v.String()
		}
	}
	var out []Invariant
	for _, names := range [][]string{audit.ControlPlaneInvariants, audit.DataPlaneInvariants} {
		for _, n := range names {
			out = append(out, Invariant{Name: n, Count: a.Count(n), Detail: first[n]})
		}
	}
	return out
}

// probeWrites has every running producer write one record to each partition
// and waits for the outcomes. A producer that cannot write after the heal
// is a liveness failure.
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

func probeWrites(c *cluster.Cluster, res *Result) string {
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
	for _, id := range c.Producers {
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
			if stopped := res.runPhase(w, w.Now()+2*time.Second, 0, nil); stopped != "" {
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
	deadline := w.Now() + probeMax
	for w.Now() < deadline {
		pending := false
		for _, id := range probing {
			if p := c.Producer(id); p != nil {
				if _, _, _, n := p.ProbeOutcome(); n > 0 {
					pending = true
				}
			}
		}
		if !pending {
			break
		}
		if stopped := res.runPhase(w, w.Now()+time.Second, 0, nil); stopped != "" {
			return stopped
		}
	}
	for _, id := range probing {
		p := c.Producer(id)
		if p == nil {
			continue
		}
		acked, failed, unknown, pending := p.ProbeOutcome()
		if acksNone[id] {
			// acks=0 never says: the final reads must hold the probes.
			// (The last round is already unknown: acks=0 completes at once.)
			res.unconfirmed = append(res.unconfirmed, lastRound[id]...)
			acked, unknown = acked+unknown, 0
		}
		if (failed > 0 || unknown > 0 || pending > 0) && res.Converged {
			res.Converged = false
			res.ConvergeDetail = fmt.Sprintf("%s cannot write after the heal: of %d probe writes, %d acknowledged, %d failed, %d unknown, %d without an answer after %v",
				w.Name(id), acked+failed+unknown+pending, acked, failed, unknown, pending, probeMax)
		}
	}
	return ""
}

// ProducerStats are one producer group's figures (of each instance since its
// last restart): what went on the wire, batched and compressed.
type ProducerStats struct {
	Name           string  `json:"name"`
	Instances      int     `json:"instances"`
	Sent           int     `json:"records_sent"`
	Acked          int     `json:"records_acked"`
	Batches        int     `json:"batches"`
	Requests       int     `json:"requests"`
	Retries        int     `json:"retries"`
	BytesSent      int64   `json:"bytes_sent"`
	RecordsBytes   int64   `json:"records_bytes"`
	BytesPerRecord float64 `json:"bytes_per_record"`
}

func producerStats(s *scenarios.Scenario, c *cluster.Cluster) []ProducerStats {
	var out []ProducerStats
	i := 0
	for _, spec := range s.Producers {
		ps := ProducerStats{Name: spec.Name, Instances: spec.Count}
		for range spec.Count {
			if p := c.Producer(c.Producers[i]); p != nil {
				st := p.Stats
				ps.Sent += st.Sent
				ps.Acked += st.Acked
				ps.Batches += st.Batches
				ps.Requests += st.Requests
				ps.Retries += st.Retries
				ps.BytesSent += st.BytesSent
				ps.RecordsBytes += st.RecordsBytes
			}
			i++
		}
		if ps.Sent > 0 {
			ps.BytesPerRecord = float64(ps.BytesSent) / float64(ps.Sent)
		}
		out = append(out, ps)
	}
	return out
}

// linkEvents points each example's operations into the trace: the step at
// which each was recorded (the trace's "step" field).
func (res *Result) linkEvents() {
	h := res.History
	link := func(ex *checker.Example) {
		ex.Events = ex.Events[:0]
		for _, op := range ex.Ops {
			if st := h.Step(op); st > 0 {
				ex.Events = append(ex.Events, int64(st))
			}
		}
	}
	for i := range res.Report.Anomalies {
		a := &res.Report.Anomalies[i]
		link(&a.Example)
		for j := range a.Examples {
			link(&a.Examples[j])
		}
	}
}

// missingFromFinalReads returns the first value final reads do not hold.
func missingFromFinalReads(c *cluster.Cluster, values []string) string {
	want := map[string]bool{}
	for _, v := range values {
		want[v] = true
	}
	c.History.Each(func(op *history.Op) {
		if op.Process != FinalReaderName+"-0" || op.F != history.FPoll || op.Type != history.OK {
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
