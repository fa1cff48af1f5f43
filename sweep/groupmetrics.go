package sweep

import (
	"kafkasim/reports"
	"kafkasim/scenarios"
)

// What a run's consumer groups cost, measured from its history alone
// (reports.GroupActivities: who owned each partition when, the gaps, the
// generations).

// GroupMetrics are the metrics a run with a consumer group reports,
// besides Metrics: a sweep whose base has no group has none of them (its
// runs.csv and cells.csv stay as they were before groups existed).
var GroupMetrics = reports.GroupCostNames

// hasGroup reports whether a scenario has a consumer with a group.
func hasGroup(s *scenarios.Scenario) bool {
	for _, c := range s.Consumers {
		if c.Group != "" {
			return true
		}
	}
	return false
}

// measuresGroups reports whether a stored run record has the group
// metrics its scenario calls for: one written before they existed is run
// again rather than read as zeros.
func measuresGroups(rec RunRecord, s *scenarios.Scenario) bool {
	if !hasGroup(s) {
		return true
	}
	for _, m := range GroupMetrics {
		if _, ok := rec.Metrics[m]; !ok {
			return false
		}
	}
	return true
}

// groupMetrics measures the groups of a history (reports.GroupCosts).
func groupMetrics(h reports.History) map[string]float64 { return reports.GroupCosts(h) }
