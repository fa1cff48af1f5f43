package fuzz

import (
	"sort"
	"strings"
	"time"

	"kafkasim/runner"
	"kafkasim/scenarios"
)

// Failure is how a run broke the property: its kind ("violation",
// "liveness" or "crash") and, for violations, which guarantees broke.
type Failure struct {
	Kind string   `json:"kind"`
	What []string `json:"what"` // anomaly types with verdict violation, and broken invariants
	// Detail is the first line a user reads.
	Detail string `json:"detail"`
}

// Judge applies the property: with the configuration as given, no guarantee
// breaks and the cluster heals. Permitted anomalies are not failures.
func Judge(res *runner.Result) *Failure {
	switch {
	case res.Verdict == runner.Crash:
		return &Failure{Kind: "crash", Detail: firstLine(res.CrashDetail)}
	case res.ViolationCount() > 0:
		f := &Failure{Kind: "violation"}
		for _, a := range res.Report.Anomalies {
			if a.Verdict == "violation" {
				f.What = append(f.What, a.Type)
				if f.Detail == "" {
					f.Detail = a.Type + ": " + a.Because + " (e.g. " + a.Example.String() + ")"
				}
			}
		}
		for _, inv := range res.Invariants {
			if inv.Count > 0 {
				f.What = append(f.What, inv.Name)
				if f.Detail == "" {
					// An invariant's detail starts with its name ("x at
					// 5s ... on broker-3: ..."): not said twice.
					f.Detail = inv.Detail
					if !strings.HasPrefix(inv.Detail, inv.Name) {
						f.Detail = inv.Name + ": " + inv.Detail
					}
				}
			}
		}
		sort.Strings(f.What)
		return f
	case !res.Converged:
		return &Failure{Kind: "liveness", Detail: res.ConvergeDetail}
	}
	return nil
}

// same reports whether a candidate fails the same way as the original: the
// same kind and, for violations, at least one guarantee in common.
func (f *Failure) same(g *Failure) bool {
	if g == nil || f.Kind != g.Kind {
		return false
	}
	if f.Kind != "violation" {
		return true
	}
	for _, w := range f.What {
		for _, x := range g.What {
			if w == x {
				return true
			}
		}
	}
	return false
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// Shrink reduces a failing scenario while it fails the same way: fewer
// faults, clients and brokers, a smaller workload, a shorter run. Every
// candidate is a real run; budget bounds how many. The result is
// 1-minimal in its faults: removing any one of them makes it pass (or fail
// differently).
func Shrink(s *scenarios.Scenario, want *Failure, budget int, stop func() bool, run func(*scenarios.Scenario) *Failure) (*scenarios.Scenario, int) {
	runs := 0
	try := func(c *scenarios.Scenario) bool {
		if runs >= budget || (stop != nil && stop()) {
			return false
		}
		n, err := scenarios.Normalize(c)
		if err != nil {
			return false
		}
		runs++
		return want.same(run(n))
	}
	cur := clone(s)
	for progress := true; progress && runs < budget && (stop == nil || !stop()); {
		progress = false
		// Faults: halves first, then one at a time, until none can go.
		for chunk := max(len(cur.Faults)/2, 1); chunk >= 1 && len(cur.Faults) > 0; chunk /= 2 {
			for i := 0; i+chunk <= len(cur.Faults); {
				c := clone(cur)
				c.Faults = append(append([]scenarios.ScheduledFault{}, cur.Faults[:i]...), cur.Faults[i+chunk:]...)
				if try(c) {
					cur, progress = c, true
				} else {
					i += chunk
				}
			}
		}
		if len(cur.Nemesis) > 0 {
			c := clone(cur)
			c.Nemesis = nil
			if try(c) {
				cur, progress = c, true
			}
		}
		// The workload: fewer instances, lower rates, fewer readers.
		for i := range cur.Producers {
			if cur.Producers[i].Count > 1 {
				c := clone(cur)
				c.Producers[i].Count = 1
				if try(c) {
					cur, progress = c, true
				}
			}
			if cur.Producers[i].Rate > 20 {
				c := clone(cur)
				c.Producers[i].Rate = cur.Producers[i].Rate / 2
				if try(c) {
					cur, progress = c, true
				}
			}
		}
		if len(cur.Producers) > 1 {
			for i := range cur.Producers {
				c := clone(cur)
				c.Producers = append(append([]scenarios.Producer{}, cur.Producers[:i]...), cur.Producers[i+1:]...)
				if try(c) {
					cur, progress = c, true
					break
				}
			}
		}
		for i := range cur.Consumers {
			if cur.Consumers[i].Count > 1 {
				c := clone(cur)
				c.Consumers[i].Count = 1
				if try(c) {
					cur, progress = c, true
				}
			}
		}
		if c, ok := shrinkGroups(cur, want, try); ok {
			cur, progress = c, true
		}
		// A shorter run: end the fault phase just after the last fault.
		last := time.Duration(0)
		for _, f := range cur.Faults {
			last = max(last, f.At+f.Fault.For)
		}
		if end := (last/time.Second + 2) * time.Second; end < cur.Duration {
			c := clone(cur)
			c.Duration = end
			for i := range c.Producers {
				c.Producers[i].Stop = min(c.Producers[i].Stop, end)
				c.Producers[i].Start = min(c.Producers[i].Start, end)
			}
			if try(c) {
				cur, progress = c, true
			}
		}
		// Fewer controllers, then fewer brokers (when nothing names the
		// last one and replication still fits).
		if cur.Cluster.Controllers > 1 {
			c := clone(cur)
			c.Cluster.Controllers = map[int]int{3: 1, 5: 3, 7: 5}[cur.Cluster.Controllers]
			if c.Cluster.Controllers == 0 {
				c.Cluster.Controllers = 1
			}
			if try(c) {
				cur, progress = c, true
			}
		}
		if cur.Cluster.Brokers > 1 {
			c := clone(cur)
			c.Cluster.Brokers--
			if try(c) {
				cur, progress = c, true
			}
		}
	}
	return cur, runs
}

// clone copies what shrinking changes.
func clone(s *scenarios.Scenario) *scenarios.Scenario {
	c := *s
	c.Faults = append([]scenarios.ScheduledFault{}, s.Faults...)
	c.Nemesis = append([]scenarios.NemesisRule{}, s.Nemesis...)
	c.Producers = append([]scenarios.Producer{}, s.Producers...)
	c.Consumers = append([]scenarios.Consumer{}, s.Consumers...)
	c.Topics = append([]scenarios.Topic{}, s.Topics...)
	return &c
}
