package runner

import (
	"fmt"
	"time"

	"kafkasim/checker"
	"kafkasim/internal/plural"
	"kafkasim/reports"
	"kafkasim/sim"
)

// Summary is summary.json (docs/run-store.md). Fields past the core set are
// extensions; readers ignore what they do not know.
type Summary struct {
	Scenario     string              `json:"scenario"`
	Seed         uint64              `json:"seed"`
	Version      string              `json:"version"`
	TraceHash    string              `json:"trace_hash"`
	Events       uint64              `json:"events"`
	SimTimeNs    int64               `json:"sim_time_ns"`
	WallTimeNs   int64               `json:"wall_time_ns"`
	Writes       SummaryWrites       `json:"writes"`
	Reads        SummaryReads        `json:"reads"`
	Anomalies    []SummaryAnomaly    `json:"anomalies"`
	Invariants   map[string]string   `json:"invariants"`
	Expectations SummaryExpectations `json:"expectations"`

	// Extensions.
	Verdict        string `json:"verdict"`
	Converged      bool   `json:"converged"`
	ConvergeDetail string `json:"converge_detail,omitempty"`
	// ConvergeGraceNs is how long past settle convergence was waited for
	// at most, and ConvergeGraceBasis how it was computed.
	ConvergeGraceNs         int64           `json:"converge_grace_ns,omitempty"`
	ConvergeGraceBasis      string          `json:"converge_grace_basis,omitempty"`
	Stuck                   []string        `json:"stuck_replicas,omitempty"`
	Leaderless              []string        `json:"leaderless_partitions,omitempty"`
	FinalReads              bool            `json:"final_reads"`
	EventsPerSecond         float64         `json:"events_per_second"`
	SimSecondsPerWallSecond float64         `json:"sim_seconds_per_wall_second"`
	Violations              int             `json:"violations"`
	Losses                  []SummaryLoss   `json:"losses"`
	Faults                  int             `json:"faults"`
	Nemesis                 []string        `json:"nemesis,omitempty"`
	Crash                   string          `json:"crash,omitempty"`
	Expected                []SummaryCheck  `json:"expected"`
	Producers               []ProducerStats `json:"producers"`
	// Linearizability: the partitions (decided by the direct check) and
	// committed offsets (porcupine: checked, skipped or undecided in its
	// budget).
	Linearizability *checker.LinearizabilityStats `json:"linearizability,omitempty"`
	Notes           []string                      `json:"notes,omitempty"`
	// Warnings say what the run could not check: a run that wrote
	// nothing checked no delivery guarantee (Result.Vacuous).
	Warnings []string `json:"warnings,omitempty"`
}

// SummaryWrites are the send figures.
type SummaryWrites struct {
	Attempted int `json:"attempted"`
	Acked     int `json:"acked"`
	Failed    int `json:"failed"`
	// Aborted: sends of transactions their producer aborted (not failed
	// writes: neither in Failed nor in Availability's denominator).
	Aborted       int     `json:"aborted,omitempty"`
	Indeterminate int     `json:"indeterminate"`
	LostAcked     int     `json:"lost_acked"`
	Availability  float64 `json:"availability"`
}

// SummaryReads are the poll figures.
type SummaryReads struct {
	Polls      int `json:"polls"`
	Records    int `json:"records"`
	Duplicates int `json:"duplicates"`
}

// SummaryAnomaly is one anomaly type with one verdict.
type SummaryAnomaly struct {
	Type    string          `json:"type"`
	Verdict string          `json:"verdict"`
	Count   int             `json:"count"`
	Because string          `json:"because"`
	Example checker.Example `json:"example"`
}

// SummaryExpectations say whether the expect block held.
type SummaryExpectations struct {
	OK       bool     `json:"ok"`
	Failures []string `json:"failures"`
}

// SummaryCheck is one expectation with what the run got (an extension).
type SummaryCheck struct {
	Key  string `json:"key"`
	Want string `json:"want"`
	Got  string `json:"got"`
	OK   bool   `json:"ok"`
}

// SummaryLoss is committed data the god view saw lost the way Kafka permits.
type SummaryLoss struct {
	AtNs      int64  `json:"at_ns"`
	Partition string `json:"partition"`
	From      int64  `json:"from"`
	To        int64  `json:"to"`
	Records   int    `json:"records"`
	Cause     string `json:"cause"`
	// ExposedBy: "unclean-election" when the cause (a power loss, a disk
	// fault) had taken every in-sync copy and an unclean election, or
	// KIP-966's election of the last known leader, then exposed the loss.
	ExposedBy string `json:"exposed_by,omitempty"`
	// LeaderEnd: for a loss at an election, the new leader's log end then
	// (its older-epoch records below it replaced committed ones).
	LeaderEnd int64 `json:"leader_end,omitempty"`
}

// injectedFaults counts the faults that acted: scheduled and nemesis faults,
// not their undoing, not one that found no node, not the settle phase's
// heal.
func injectedFaults(log []sim.FaultRecord) int {
	n := 0
	for _, r := range log {
		if !r.Undo && r.Skipped == "" && r.Origin != "heal" {
			n++
		}
	}
	return n
}

// Summary builds summary.json's content.
func (res *Result) Summary(version string) Summary {
	s := Summary{
		Scenario: res.Scenario.Name, Seed: res.Scenario.Seed, Version: version,
		TraceHash: fmt.Sprintf("%016x", res.TraceHash), Events: res.Events,
		SimTimeNs: int64(res.SimTime), WallTimeNs: int64(res.WallTime),
		Anomalies: []SummaryAnomaly{}, Invariants: map[string]string{},
		Verdict: res.Verdict, Converged: res.Converged, ConvergeDetail: res.ConvergeDetail, Stuck: res.Stuck, Leaderless: res.Leaderless,
		ConvergeGraceNs: int64(res.ConvergeGrace), ConvergeGraceBasis: res.ConvergeBasis,
		FinalReads: res.FinalReadsDone, Violations: res.ViolationCount(), Losses: []SummaryLoss{},
		Faults: injectedFaults(res.Faults), Crash: res.CrashDetail, Expected: []SummaryCheck{},
		Producers: append([]ProducerStats{}, res.Producers...),
	}
	if res.WallTime > 0 {
		secs := res.WallTime.Seconds()
		s.EventsPerSecond = float64(res.Events) / secs
		s.SimSecondsPerWallSecond = res.SimTime.Seconds() / secs
	}
	if rep := res.Report; rep != nil {
		st := rep.Stats
		s.Writes = SummaryWrites{Attempted: st.Attempted, Acked: st.Acked, Failed: st.Failed, Aborted: st.Aborted, Indeterminate: st.Indeterminate,
			LostAcked: st.LostAcked, Availability: st.Availability}
		s.Reads = SummaryReads{Polls: st.Polls, Records: st.Records, Duplicates: st.Duplicates}
		for _, a := range rep.Anomalies {
			s.Anomalies = append(s.Anomalies, SummaryAnomaly{Type: a.Type, Verdict: a.Verdict, Count: a.Count, Because: a.Because, Example: a.Example})
		}
		lin := rep.Linearizability
		s.Linearizability = &lin
		s.Notes = rep.Notes()
	}
	for _, inv := range res.Invariants {
		if inv.Count == 0 {
			s.Invariants[inv.Name] = "ok"
		} else {
			s.Invariants[inv.Name] = fmt.Sprintf("violated %s: %s", plural.Times(inv.Count), inv.Detail)
		}
	}
	for _, l := range res.Losses {
		s.Losses = append(s.Losses, SummaryLoss{AtNs: l.At, Partition: l.Partition, From: l.From, To: l.To, Records: l.Records, Cause: l.Cause, ExposedBy: l.ExposedBy, LeaderEnd: l.LeaderEnd})
	}
	for _, r := range res.NemesisPlan.Rules {
		state := "off"
		if r.Enabled {
			state = fmt.Sprintf("on x%.2f", r.RateFactor)
		}
		s.Nemesis = append(s.Nemesis, fmt.Sprintf("%s: %s", r.Rule.Fault.Kind, state))
	}
	s.Expectations.OK = res.Verdict == Pass
	s.Expectations.Failures = []string{}
	for _, e := range res.Expectations {
		s.Expected = append(s.Expected, SummaryCheck(e))
		if !e.OK {
			s.Expectations.Failures = append(s.Expectations.Failures, fmt.Sprintf("%s: want %s, got %s", e.Key, e.Want, e.Got))
		}
	}
	if res.Verdict == Crash {
		s.Expectations.Failures = append(s.Expectations.Failures, "the simulator failed: "+firstLine(res.CrashDetail))
	}
	if v := res.Vacuous(); v != "" {
		s.Warnings = append(s.Warnings, v)
	}
	return s
}

// ReportData is what the report shows.
func (res *Result) ReportData(version string) *reports.Run {
	s := res.Scenario
	r := &reports.Run{Scenario: s.Name, Description: s.Description, Seed: s.Seed, Version: version,
		TraceHash: fmt.Sprintf("%016x", res.TraceHash), Events: res.Events, SimTime: res.SimTime, WallTime: res.WallTime,
		Verdict: res.Verdict, Headline: res.Headline(), Converged: res.Converged, ConvergeDetail: res.ConvergeDetail}
	if v := res.Vacuous(); v != "" {
		r.Headline = "WARNING: " + v + ". " + r.Headline
	}
	for _, e := range res.Expectations {
		r.Expectations = append(r.Expectations, reports.Expectation(e))
	}
	if rep := res.Report; rep != nil {
		st := rep.Stats
		r.Writes = reports.Writes{Attempted: st.Attempted, Acked: st.Acked, Failed: st.Failed, Aborted: st.Aborted, Indeterminate: st.Indeterminate,
			LostAcked: st.LostAcked, Availability: st.Availability}
		r.Reads = reports.Reads{Polls: st.Polls, Records: st.Records, Duplicates: st.Duplicates}
		for _, a := range rep.Anomalies {
			ra := reports.Anomaly{Type: a.Type, Verdict: a.Verdict, Count: a.Count, Because: a.Because}
			examples := a.Examples
			if len(examples) == 0 {
				examples = []checker.Example{a.Example}
			}
			for _, ex := range examples {
				events := make([]uint64, 0, len(ex.Events))
				for _, e := range ex.Events {
					events = append(events, uint64(e))
				}
				ra.Examples = append(ra.Examples, reports.Example{Partition: ex.Partition, Offset: ex.Offset, Value: ex.Value,
					Process: ex.Process, Ops: ex.Ops, Events: events, Detail: ex.Detail})
			}
			r.Anomalies = append(r.Anomalies, ra)
		}
	}
	for _, inv := range res.Invariants {
		st := "ok"
		if inv.Count > 0 {
			st = "violated"
		}
		detail := inv.Detail
		if inv.Count > 1 {
			detail = fmt.Sprintf("%d times; first: %s", inv.Count, detail)
		}
		r.Invariants = append(r.Invariants, reports.Invariant{Name: inv.Name, Status: st, Detail: detail})
	}
	res.fillRecorded(r)
	if res.Report != nil {
		for _, v := range res.Report.Visualizations {
			r.Linearizability = append(r.Linearizability, reports.Visualization{Partition: v.Partition, HTML: v.HTML})
		}
	}
	return r
}

// plotData is the part of ReportData the plots draw (reports.WritePlots):
// what the run recorded, nothing the checks found, so that the plots can be
// drawn while the checks run.
func (res *Result) plotData() *reports.Run {
	s := res.Scenario
	r := &reports.Run{Scenario: s.Name, Description: s.Description, Seed: s.Seed,
		TraceHash: fmt.Sprintf("%016x", res.TraceHash), Events: res.Events, SimTime: res.SimTime}
	res.fillRecorded(r)
	return r
}

// fillRecorded fills in what the run recorded: faults, phases, timeline,
// final state, history and configuration (what the plots draw).
func (res *Result) fillRecorded(r *reports.Run) {
	s := res.Scenario
	for _, f := range res.Faults {
		r.Faults = append(r.Faults, reports.Fault{At: f.At, Kind: string(f.Fault.Kind), What: readableFault(f.Fault), Origin: f.Origin,
			Nodes: f.Nodes, Undo: f.Undo, Skipped: f.Skipped})
	}
	r.Phases = reports.Phases{FaultsEnd: s.Duration, SettleEnd: s.Duration + s.Settle}
	if res.Timeline != nil {
		r.Timeline = res.Timeline.Samples
	}
	r.Final = res.Final
	if r.Final == nil && res.Cluster != nil { // a crashed run
		r.Final = FinalState(res.Cluster)
	}
	if res.History != nil {
		r.History = reports.RecorderHistory(res.History)
	}
	r.Config = configList(res)
}

// readableFault describes a fault for the report with its durations to the
// millisecond: a nemesis draws them to the nanosecond ("for
// 4.986015136s"), which reads as noise.
func readableFault(f sim.Fault) string {
	round := func(d time.Duration) time.Duration {
		if d >= time.Millisecond || d <= -time.Millisecond {
			return d.Round(time.Millisecond)
		}
		return d
	}
	f.For, f.Latency, f.ClockJump = round(f.For), round(f.Latency), round(f.ClockJump)
	return f.String()
}

func configList(res *Result) []reports.KeyValue {
	s := res.Scenario
	kv := func(k, v string) reports.KeyValue { return reports.KeyValue{Key: k, Value: v} }
	out := []reports.KeyValue{
		kv("duration", s.Duration.String()), kv("settle", s.Settle.String()),
		kv("cluster.controllers", fmt.Sprint(s.Cluster.Controllers)), kv("cluster.brokers", fmt.Sprint(s.Cluster.Brokers)),
		kv("cluster.racks", fmt.Sprint(s.Cluster.Racks)),
	}
	for _, k := range s.Cluster.Broker.Keys {
		out = append(out, kv("broker "+k, s.Cluster.Broker.Get(k)))
	}
	for _, t := range s.Topics {
		out = append(out, kv("topic "+t.Name, fmt.Sprintf("partitions=%d replication.factor=%d", t.Partitions, t.ReplicationFactor)))
		for _, k := range t.Config.Keys {
			out = append(out, kv("topic "+t.Name+" "+k, t.Config.Get(k)))
		}
	}
	for _, p := range s.Producers {
		out = append(out, kv("producer "+p.Name, fmt.Sprintf("count=%d topic=%s rate=%v/s keys=%d", p.Count, p.Topic, p.Rate, p.Keys)))
		for _, k := range p.Config.Keys {
			out = append(out, kv("producer "+p.Name+" "+k, p.Config.Get(k)))
		}
	}
	for _, c := range s.Consumers {
		out = append(out, kv("consumer "+c.Name, fmt.Sprintf("count=%d topics=%v", c.Count, c.Topics)))
		for _, k := range c.Config.Keys {
			out = append(out, kv("consumer "+c.Name+" "+k, c.Config.Get(k)))
		}
	}
	if len(s.Bugs) > 0 {
		out = append(out, kv("bugs", fmt.Sprint(s.Bugs)))
	}
	return out
}
