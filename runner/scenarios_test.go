package runner

import (
	"io/fs"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
	"weak"

	"kafkasim/checker"
	"kafkasim/model/cluster"
	"kafkasim/scenarios"
	"kafkasim/sim"
)

func bundled(t *testing.T) map[string]*scenarios.Scenario {
	t.Helper()
	out := map[string]*scenarios.Scenario{}
	err := fs.WalkDir(scenarios.Bundled, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
			return err
		}
		data, err := fs.ReadFile(scenarios.Bundled, p)
		if err != nil {
			return err
		}
		s, err := scenarios.Parse(p, data)
		if err != nil {
			t.Fatalf("bundled scenario %s: %v", p, err)
		}
		out[p] = s
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 10 {
		t.Fatalf("only %d bundled scenarios", len(out))
	}
	return out
}

func run(t *testing.T, s *scenarios.Scenario) *Result {
	t.Helper()
	return runWith(t, s, Options{})
}

// runConverged runs a scenario file whose run must converge, and returns
// its result: the regression scenarios of why a run converged.
func runConverged(t *testing.T, file string) *Result {
	t.Helper()
	s, err := scenarios.LoadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	res := run(t, s)
	if !res.Converged {
		t.Fatalf("not converged: %s", res.ConvergeDetail)
	}
	return res
}

// expectDetail fails the test for each piece of the run's convergence
// detail it lacks.
func expectDetail(t *testing.T, res *Result, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(res.ConvergeDetail, w) {
			t.Errorf("convergence detail %q lacks %q", res.ConvergeDetail, w)
		}
	}
}

func runWith(t *testing.T, s *scenarios.Scenario, opts Options) *Result {
	t.Helper()
	res, err := Run(s, opts)
	if err != nil {
		t.Fatalf("%s: %v", s.Name, err)
	}
	return res
}

func explain(res *Result) string {
	var b strings.Builder
	b.WriteString(res.Headline() + "\n")
	for _, e := range res.Expectations {
		b.WriteString("  " + e.Key + " want " + e.Want + " got " + e.Got + "\n")
	}
	if res.Report != nil {
		b.WriteString(res.Report.Summary())
	}
	return b.String()
}

// Every bundled scenario is a regression test: its expect block holds. The
// same runs, traced, give the message names the cluster sends
// (checkMessageNames), so the bundled scenarios run once for both.
func TestBundledScenariosHoldTheirExpectations(t *testing.T) {
	var sinks []*nameSink
	t.Run("each", func(t *testing.T) {
		for name, s := range bundled(t) {
			sink := &nameSink{names: map[string]bool{}}
			sinks = append(sinks, sink)
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				res := runWith(t, s, Options{Trace: sink})
				if res.Verdict != Pass {
					t.Fatalf("%s seed %d: verdict %s\n%s", name, s.Seed, res.Verdict, explain(res))
				}
			})
		}
	})
	if !t.Failed() {
		checkMessageNames(t, sinks)
	}
}

// A bug-zoo scenario must owe its violations to the bug: the same schedule
// with the bug off breaks nothing and heals.
func TestBugZooSchedulesBreakNothingWithTheBugOff(t *testing.T) {
	for name, s := range bundled(t) {
		if !strings.HasPrefix(name, "bugzoo/") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if len(s.Bugs) == 0 {
				t.Fatalf("a bug-zoo scenario switches a bug on")
			}
			off := *s
			off.Bugs = []string{}
			res := run(t, &off)
			if n := res.ViolationCount(); n > 0 || !res.Converged {
				t.Fatalf("with the bug off: %d violations, converged %v (%s)\n%s", n, res.Converged, res.ConvergeDetail, explain(res))
			}
		})
	}
}

type countingSink struct{ n int }

func (c *countingSink) Record(sim.TraceRecord) { c.n++ }

// The same seed gives the same trace hash, traced or not, and the
// timeline's sampling does not change it.
func TestRunsAreDeterministic(t *testing.T) {
	s := bundled(t)["acks-all-safe.yaml"]
	a := run(t, s)
	sink := &countingSink{}
	b, err := Run(s, Options{Trace: sink, SampleEvery: 7e6, KeepCluster: true})
	if err != nil {
		t.Fatal(err)
	}
	if a.TraceHash != b.TraceHash || a.Events != b.Events {
		t.Fatalf("same seed, hashes %016x (%d events) and %016x (%d events)", a.TraceHash, a.Events, b.TraceHash, b.Events)
	}
	// Every delivered message is in the trace (dropped ones, and events
	// for nodes that are down, are not delivered).
	if delivered := b.Cluster.World.NetworkStats().Delivered; uint64(sink.n) < delivered {
		t.Fatalf("the trace holds %d records for %d delivered messages", sink.n, delivered)
	}
	other := *s
	other.Seed++
	if c := run(t, &other); c.TraceHash == a.TraceHash {
		t.Fatalf("seeds %d and %d gave the same hash", s.Seed, other.Seed)
	}
}

// Regressions: scenarios that once failed (most found by kafkasim fuzz and
// shrunk), each the proof of a fix. testdata/*.yaml must all pass.
func TestRegressionScenarios(t *testing.T) {
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(files) < 5 {
		t.Fatalf("regression scenarios: %v %v", files, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			s, err := scenarios.LoadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			res := runWith(t, s, Options{KeepCluster: true})
			if res.Verdict != Pass {
				t.Fatalf("verdict %s\n%s", res.Verdict, explain(res))
			}
			// The runner checks the history as the recorder streams it,
			// through one reused *Op: the analysis must be the one the
			// built operations give. (Porcupine is off here: its time
			// limit can end two checks of one history differently.)
			cfg := checkerConfig(s, res.Cluster)
			// The direct check that decides each partition's log passed
			// them: porcupine's search, where it finishes, must agree.
			cross := cfg
			cross.CrossCheckLogs = true
			if lin := checker.Check(res.Cluster.History.Ops(), cross).Linearizability; len(lin.Disagreed) > 0 {
				t.Fatalf("porcupine finds no linearization of %v, which the direct check passed", lin.Disagreed)
			}
			cfg.SkipLinearizability = true
			streamed := checker.CheckEach(res.Cluster.History.Each, cfg)
			if built := checker.Check(res.Cluster.History.Ops(), cfg); !reflect.DeepEqual(built, streamed) {
				t.Fatalf("the streamed check differs from the check of the built operations:\nstreamed:\n%s\nbuilt:\n%s", streamed.Summary(), built.Summary())
			}
		})
	}
}

// A run whose producers cannot write after the heal is a liveness failure,
// told apart from a correctness failure.
func TestLivenessFailureIsToldApart(t *testing.T) {
	s := *bundled(t)["acks-all-safe.yaml"]
	s.Nemesis = nil
	// A controller whose disk is wiped refuses to start again until an
	// operator formats it: the cluster cannot heal, however long the
	// runner waits. (A wait the configuration itself imposes, such as a
	// long broker.session.timeout.ms, is no longer one: the grace covers
	// it.)
	s.Settle = 5 * time.Second
	s.Faults = []scenarios.ScheduledFault{
		{At: s.Duration - 2*time.Second, Fault: sim.Fault{Kind: sim.FaultDisk, Disk: sim.DiskWipe, Target: "controller-2"}, Key: "disk", Path: "test"},
		{At: s.Duration - time.Second, Fault: sim.Fault{Kind: sim.FaultKill, Target: "controller-2"}, Key: "kill", Path: "test"},
	}
	norm, err := scenarios.Normalize(&s)
	if err != nil {
		t.Fatal(err)
	}
	s = *norm
	res := run(t, &s)
	if res.Converged || res.Verdict != Liveness {
		t.Fatalf("want a liveness failure, got verdict %s converged %v\n%s", res.Verdict, res.Converged, explain(res))
	}
	if !strings.Contains(res.ConvergeDetail, "controller-2") {
		t.Fatalf("want the wiped controller-2 blamed, got %q", res.ConvergeDetail)
	}
	if res.ViolationCount() != 0 {
		t.Fatalf("a liveness failure is not a violation: %s", explain(res))
	}
}

// A bit flip that raises a batch's partition leader epoch (outside the CRC)
// keeps that replica out of the ISR, as in Kafka; the run reports it and
// still passes. The scenario's flip must keep landing there: if the model's
// event order moves it, the scenario no longer tests this.
func TestFlippedLeaderEpochReplicaIsStuck(t *testing.T) {
	s, err := scenarios.LoadFile("testdata/flipped-leader-epoch-keeps-follower-out.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res := run(t, s)
	if res.Verdict != Pass || len(res.Stuck) != 1 || !strings.Contains(res.Stuck[0], "orders-0: broker-2") {
		t.Fatalf("verdict %s, stuck %q\n%s", res.Verdict, res.Stuck, explain(res))
	}
}

// A run lets its cluster go before the checks (the collector may then reuse
// its logs and disks for the checker's tables), yet keeps the history and
// the final state the run store needs: the verdict, the anomalies and the
// final state are those of a run that keeps its cluster.
func TestRunLetsTheClusterGoBeforeTheChecks(t *testing.T) {
	s := bundled(t)["acks1-leader-failover.yaml"]
	var built weak.Pointer[cluster.Cluster]
	x := newExecution(s, Options{})
	x.built = func(c *cluster.Cluster) { built = weak.Make(c) }
	let, err := x.execute()
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	if built.Value() != nil {
		t.Fatal("the run's result still reaches its cluster")
	}
	kept := runWith(t, s, Options{KeepCluster: true})
	if let.Cluster != nil || kept.Cluster == nil {
		t.Fatalf("cluster kept: %v by default, %v with KeepCluster", let.Cluster != nil, kept.Cluster != nil)
	}
	if let.History == nil || let.History.Len() == 0 || let.History.Len() != kept.History.Len() {
		t.Fatalf("history of %d operations, want %d", let.History.Len(), kept.History.Len())
	}
	if !reflect.DeepEqual(let.Final, kept.Final) || len(let.Final) == 0 || !reflect.DeepEqual(let.Final, FinalState(kept.Cluster)) {
		t.Fatalf("final state %+v, want %+v", let.Final, kept.Final)
	}
	if let.Verdict != kept.Verdict || !reflect.DeepEqual(let.Report.Anomalies, kept.Report.Anomalies) {
		t.Fatalf("verdict %s with %d anomalies, want %s with %d", let.Verdict, len(let.Report.Anomalies), kept.Verdict, len(kept.Report.Anomalies))
	}
}

// A transactional producer fenced by its coordinator's timeout abort
// writes no more, as Kafka's: the run converges without probing it and
// says so.
func TestFencedTransactionalProducersAreNotProbed(t *testing.T) {
	res := runConverged(t, "testdata/transactional-producers-fenced-on-timeout-not-probed.yaml")
	if !strings.Contains(res.ConvergeDetail, "not probed: fenced, transactional.id") {
		t.Fatalf("converged without naming a fenced producer: %q (re-tune the seed if the faults no longer fence one)", res.ConvergeDetail)
	}
}

// A transaction whose markers a partition refused (INVALID_PRODUCER_EPOCH,
// after __transaction_state lost the records of the producer's later
// epochs) stays PrepareAbort, as Kafka leaves it: the run converges with
// that transaction and its processor's group not judged, and says so.
func TestStalledTransactionIsNotJudged(t *testing.T) {
	res := runConverged(t, "testdata/stalled-prepareabort-after-txn-state-loss-not-judged.yaml")
	if !strings.Contains(res.ConvergeDetail, "not judged: transaction x-0") || !strings.Contains(res.ConvergeDetail, "stalled in PrepareAbort") {
		t.Fatalf("converged without naming the stalled transaction: %q (re-tune the seed if the faults no longer stall one)", res.ConvergeDetail)
	}
}

// A processor instance whose group's offsets stay pending in a transaction
// left hanging in __consumer_offsets (its coordinator lost it to a power
// loss) is answered UNSTABLE_OFFSET_COMMIT for ever, as Kafka's
// OffsetMetadataManager answers it until an operator aborts the
// transaction: the run converges with those partitions not judged, and
// says so.
func TestOffsetsPendingInHangingTransactionNotJudged(t *testing.T) {
	res := runConverged(t, "testdata/processor-eos-offsets-pending-in-hanging-transaction-not-judged.yaml")
	if !strings.Contains(res.ConvergeDetail, "not judged: group xg") || !strings.Contains(res.ConvergeDetail, "UNSTABLE_OFFSET_COMMIT") {
		t.Fatalf("converged without naming the pending offsets: %q (re-tune the seed if the faults no longer leave a transaction hanging in __consumer_offsets)", res.ConvergeDetail)
	}
}
