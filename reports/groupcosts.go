package reports

// What a run's consumer groups cost, from its history alone: rebalances,
// the time partitions had no owner, records processed again. Sweeps plot
// them; a scenario's expect block can assert them.

// GroupCostNames are GroupCosts' figures.
var GroupCostNames = []string{"rebalances", "unowned-seconds", "unowned-seconds-per-rebalance",
	"max-unowned-seconds", "reprocessed-fraction"}

// GroupCosts measures the consumer groups of a history, summed over
// groups (the names are GroupCostNames):
//
//   - rebalances: the generations (KIP-848: member epochs) first assigned
//     after a group's first one;
//   - unowned-seconds: partition-seconds without an owner, over the gaps
//     that ended before the history did (an open gap at its end is cut
//     short by the end of the run, not by the group);
//   - unowned-seconds-per-rebalance: the seconds of the gaps a rebalance
//     closed (the generation that ended the gap was first assigned after
//     the gap began) over rebalances, 0 with no rebalance. A static member
//     restarted within its session gets its partitions back in the
//     generation it left: that gap counts in unowned-seconds, not here;
//   - max-unowned-seconds: the longest of those closed gaps;
//   - reprocessed-fraction: processed records the group had processed
//     before, over processed records (0 with none processed).
func GroupCosts(h History) map[string]float64 {
	var rebalances, processed, reprocessed int
	var unowned, byRebalance, longest float64
	for _, a := range GroupActivities(h) {
		rebalances += max(len(a.Rebalances)-1, 0)
		processed += a.Processed
		reprocessed += a.Reprocessed
		firstAt := map[int32]int64{}
		for _, r := range a.Rebalances {
			firstAt[r.Generation] = int64(r.At)
		}
		for _, g := range a.Gaps {
			if g.Open {
				continue
			}
			s := (g.To - g.From).Seconds()
			unowned += s
			longest = max(longest, s)
			if at, ok := firstAt[g.Generation]; ok && at > int64(g.From) {
				byRebalance += s
			}
		}
	}
	m := map[string]float64{
		"rebalances":                    float64(rebalances),
		"unowned-seconds":               unowned,
		"unowned-seconds-per-rebalance": 0,
		"max-unowned-seconds":           longest,
		"reprocessed-fraction":          0,
	}
	if rebalances > 0 {
		m["unowned-seconds-per-rebalance"] = byRebalance / float64(rebalances)
	}
	if processed > 0 {
		m["reprocessed-fraction"] = float64(reprocessed) / float64(processed)
	}
	return m
}
