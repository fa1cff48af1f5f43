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
	"time"

	"kafkasim/checker"
	"kafkasim/godview"
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
	// ProducerHoldMax bounds how long past its grace the runner waits for
	// a producer that holds records as Kafka's producer would (batches
	// retried out of order until their delivery.timeout.ms, 2 minutes by
	// default).
	ProducerHoldMax = 5 * time.Minute
	// ConvergeGraceMax is how long past settle the runner waits for a
	// cluster that has not quite converged, at least: the grace grows to
	// cover the configuration's own longest wait on a lost request (see
	// convergeGrace), plus ConvergeMargin.
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
	// groupsJudgeWindow and groupsJudgeStep: how long and how finely a
	// run with consumer groups that did not converge looks for an instant
	// when everything but its groups has healed, to judge them at.
	groupsJudgeWindow = 5 * time.Second
	groupsJudgeStep   = 50 * time.Millisecond
	// autoCommitSettle is how long past a member's first auto-commit due
	// time the judge waits for it to be answered (a round trip to the
	// coordinator and its replication, milliseconds in the model's
	// networks).
	autoCommitSettle = time.Second
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
	// BeforeChecks, when set, is handed what the run recorded once it is
	// complete, before the checks: the run store writes the history and
	// the plots (Store.Recorded) while the checker reads the history. All
	// only read it; the run does not wait for them.
	BeforeChecks func(Recorded)
	// HistorySpill bounds the memory the history is kept in: past its
	// budget, the older operations go to a file (history.SpillConfig).
	// Zero keeps the whole history in memory.
	HistorySpill history.SpillConfig
}

// Recorded is what a run recorded, complete before its checks begin.
type Recorded struct {
	History *history.Recorder
	// Plots is what reports.WritePlots draws: the part of ReportData
	// that does not wait for the checks.
	Plots *reports.Run
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
	// FinalGroups is each consumer group as its coordinator held it.
	FinalGroups []reports.GroupState
	// FinalTransactions is each transactional id as its coordinator held
	// it.
	FinalTransactions []reports.TransactionState
	TraceHash         uint64
	Events            uint64
	SimTime           time.Duration
	WallTime          time.Duration
	Report            *checker.Report
	// Happened is what the god view saw happen that Kafka permits, as the
	// checker was given it (the run store keeps it for check RUN_DIR).
	Happened godview.List
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
	Stuck []string
	// Leaderless are partitions Kafka leaves without a leader until an
	// operator acts (Cluster.LeaderlessForGood): convergence cannot wait
	// them out.
	Leaderless     []string
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
func Run(s *scenarios.Scenario, opts Options) (*Result, error) {
	return newExecution(s, opts).execute()
}

// execution is one run of a scenario as it goes through its phases
// (execute lists them in order). Each phase that runs the world returns why
// the run stopped early, or "": execute ends a stopped run in one place.
type execution struct {
	s     *scenarios.Scenario
	opts  Options
	now   func() time.Time
	start time.Time
	cfg   cluster.Config
	// c and w are the cluster and its world, nil once the checks let them
	// go (without Options.KeepCluster).
	c     *cluster.Cluster
	w     *sim.World
	res   *Result
	total time.Duration // the fault phase and settle
	// unconfirmed are the acks=0 probe values the final reads must hold.
	unconfirmed []string
	// built, when a test sets it, is handed the cluster once it is built.
	built func(*cluster.Cluster)
}

func newExecution(s *scenarios.Scenario, opts Options) *execution {
	now := opts.Clock
	if now == nil {
		now = func() time.Time { return time.Time{} }
	}
	return &execution{s: s, opts: opts, now: now}
}

// execute runs the phases in order. A panic inside the model is the
// simulator failing, not the user: it is reported as a crash with where it
// happened.
func (r *execution) execute() (res *Result, err error) {
	r.start = r.now()
	if err := r.build(); err != nil {
		return nil, err
	}
	defer func() {
		if p := recover(); p != nil {
			res, err = r.panicked(p), nil
		}
	}()
	if err := r.schedule(); err != nil {
		return nil, err
	}
	for _, phase := range []func() string{r.safety, r.liveness, r.converge, r.probe, r.drain, r.finalReads, r.collect} {
		if stopped := phase(); stopped != "" {
			return r.crashed(stopped), nil
		}
	}
	r.check()
	return r.res, nil
}

// panicked is the result of a run the model's panic p ended.
func (r *execution) panicked(p any) *Result {
	res, w := r.res, r.w
	res.Verdict = Crash
	if w == nil { // in the checks, the cluster let go
		res.CrashDetail = fmt.Sprintf("panic in the checks: %v\n%s", p, debug.Stack())
	} else {
		res.CrashDetail = fmt.Sprintf("panic at simulated %v (event %d): %v\n%s", w.Now(), w.Steps(), p, debug.Stack())
		res.TraceHash, res.Events, res.SimTime = w.TraceHash(), w.Steps(), w.Now()
	}
	res.WallTime = r.now().Sub(r.start)
	return res
}

// crashed is the result of a run that stopped early, for why.
func (r *execution) crashed(why string) *Result {
	res, w := r.res, r.w
	res.Verdict = Crash
	res.CrashDetail = why
	res.Interrupted = why == interruptedDetail
	res.TraceHash, res.Events, res.SimTime, res.WallTime = w.TraceHash(), w.Steps(), w.Now(), r.now().Sub(r.start)
	res.Faults = w.FaultLog()
	return res
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
		if g := r.Config.Group; g != nil && cfg.Groups != nil {
			// A member that died in the fault phase leaves the group only
			// when its session times out; the rebalance that follows may
			// wait the initial delay (an emptied group) and a heartbeat.
			gc := cfg.Groups.Coordinator
			session, what := g.SessionTimeout, "session.timeout.ms"
			if g.Protocol == reader.ProtocolConsumer {
				session, what = gc.GroupConsumerSessionTimeout, "group.consumer.session.timeout.ms"
			}
			consider(session+gc.GroupInitialRebalanceDelay+g.HeartbeatInterval, fmt.Sprintf("consumer %s: %s %v + group.initial.rebalance.delay.ms %v + heartbeat.interval.ms %v",
				r.Name, what, session, gc.GroupInitialRebalanceDelay, g.HeartbeatInterval))
			if g.Protocol != reader.ProtocolConsumer {
				// A classic member whose JoinGroup response was lost
				// (a partition from its coordinator while the join
				// completed) sends no heartbeats while it waits and
				// retries only when the JoinGroup times out, after
				// max(request.timeout.ms, max.poll.interval.ms +
				// JOIN_GROUP_TIMEOUT_LAPSE) (ConsumerCoordinator
				// .sendJoinGroupRequest); its rejoin then rebalances
				// the others at their next heartbeat.
				join := max(g.RequestTimeout, g.MaxPollInterval+5*time.Second)
				consider(join+g.HeartbeatInterval, fmt.Sprintf("consumer %s: JoinGroup timeout max(request.timeout.ms, max.poll.interval.ms + 5s) %v + heartbeat.interval.ms %v",
					r.Name, join, g.HeartbeatInterval))
			}
		}
	}
	if ts := cfg.Transactions; ts != nil {
		// A transaction whose producer died and is not coming back (a
		// fatal error, a crash past the run) holds its partitions' LSO
		// until its coordinator aborts it: transaction.timeout.ms after
		// it began, at the next timed-out-transaction check
		// (TransactionCoordinator.abortTimedOutTransactions).
		interval := ts.AbortCheckInterval()
		for _, p := range cfg.Producers {
			if p.Config.TransactionalID != "" {
				consider(p.Config.TransactionTimeout+interval, fmt.Sprintf("producer %s: transaction.timeout.ms %v + transaction.abort.timed.out.transaction.cleanup.interval.ms %v",
					p.Name, p.Config.TransactionTimeout, interval))
			}
		}
		for _, r := range cfg.Readers {
			if pc := r.Processor; pc != nil && pc.Producer.TransactionalID != "" {
				consider(pc.Producer.TransactionTimeout+interval, fmt.Sprintf("processor %s: transaction.timeout.ms %v + transaction.abort.timed.out.transaction.cleanup.interval.ms %v",
					r.Name, pc.Producer.TransactionTimeout, interval))
			}
		}
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

// runUntil runs the world until t; with progress, Options.Progress hears of
// each simulated second. It returns why the run stopped early, or "".
func (r *execution) runUntil(t time.Duration, progress bool) string {
	w := r.w
	for w.Now() < t {
		if r.interrupted() {
			return interruptedDetail
		}
		step := min(t, w.Now()+time.Second)
		rr := w.RunUntil(step)
		if rr.Livelocked() {
			return rr.Detail
		}
		if progress && r.opts.Progress != nil {
			r.opts.Progress(w.Now(), r.total)
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

// runFor runs the world for d more (see runUntil).
func (r *execution) runFor(d time.Duration) string {
	return r.runUntil(r.w.Now()+d, false)
}

// interruptedDetail is why a run stopped when Options.Stop closed.
const interruptedDetail = "interrupted"

func (r *execution) interrupted() bool {
	select {
	case <-r.opts.Stop:
		return true
	default:
		return false
	}
}

// topicNames are the scenario's topics, which the final reader reads.
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
	cc := CheckerConfig(s, c.Facts())
	sizes := c.History.Sizes()
	cc.Sizes = &sizes
	return cc
}

// CheckerConfig is what the scenario promises, with kafkasim's final
// reader, plus happened: a run's checker's configuration, and that of a
// history checked again (kafkasim check RUN_DIR).
func CheckerConfig(s *scenarios.Scenario, happened godview.List) checker.Config {
	cc := s.Guarantees()
	cc.Consumers = append(cc.Consumers, checker.ConsumerGuarantees{Prefix: FinalReaderName, Isolation: "read_uncommitted", AutoOffsetReset: "earliest"})
	cc.Happened = happened
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
	for _, names := range [][]string{audit.ControlPlaneInvariants, audit.DataPlaneInvariants, a.GroupInvariants(), a.TxnInvariants()} {
		for _, n := range names {
			out = append(out, Invariant{Name: n, Count: a.Count(n), Detail: first[n]})
		}
	}
	return out
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
