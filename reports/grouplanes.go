package reports

import (
	"fmt"
	"html/template"
	"sort"
	"strings"
	"time"
)

// The report's consumer groups: per group, a lane chart of who owned each
// partition when, and a table of its rebalances, time without owner,
// commits and records processed.

// noOwnerColour fills the time a partition had no owner: light red, the
// cost of a rebalance, apart from every member's colour.
const noOwnerColour = "#f4b6b6"

// generationColours alternate on the generation lane, dark enough for
// the lane's white labels.
var generationColours = [2]string{"#5c7a99", "#86a0bb"}

// groupView is one group of the report.
type groupView struct {
	Group      string
	Lanes      template.HTML
	Note       string // partitions left out of the chart
	Members    []swatch
	Rebalances int
	CommitsOK  int
	// CommitsFailed and CommitsIndeterminate: commits that did not take
	// effect, and commits whose outcome is unknown.
	CommitsFailed, CommitsIndeterminate int
	Processed, Reprocessed              int
	Partitions                          []groupPartitionRow
}

// groupPartitionRow is one partition of a group's table.
type groupPartitionRow struct {
	Partition string
	Owners    int // tenures
	Gaps      int // stretches without owner, the open one included
	Unowned   string
	Longest   string
	OpenGap   bool // no owner when the history ended
}

// groupViews builds the report's groups from the history.
func groupViews(r *Run) []groupView {
	acts := GroupActivities(r.history())
	if len(acts) == 0 {
		return nil
	}
	samples := sortedSamples(r.Timeline)
	end := laneEnd(r, samples)
	for _, a := range acts {
		end = max(end, a.End)
	}
	final, _ := finalReadsStart(r.history())
	out := make([]groupView, 0, len(acts))
	for i := range acts {
		a := &acts[i]
		marks := newRunMarks(r, end, final)
		v := groupView{Group: a.Group, Rebalances: len(a.Rebalances), CommitsOK: a.CommitsOK, CommitsFailed: a.CommitsFailed,
			CommitsIndeterminate: a.CommitsIndeterminate, Processed: a.Processed, Reprocessed: a.Reprocessed}
		v.Lanes, v.Members, v.Note = groupLanes(a, end, &marks)
		unowned := a.Unowned()
		for _, p := range a.Partitions {
			row := groupPartitionRow{Partition: p, Unowned: fmtTime(unowned[p])}
			var longest time.Duration
			for _, o := range a.Owners {
				if o.Partition == p {
					row.Owners++
				}
			}
			for _, g := range a.Gaps {
				if g.Partition == p {
					row.Gaps++
					longest = max(longest, g.To-g.From)
					row.OpenGap = row.OpenGap || g.Open
				}
			}
			row.Longest = fmtTime(longest)
			v.Partitions = append(v.Partitions, row)
		}
		out = append(out, v)
	}
	return out
}

// genLabel names a generation on the chart: "g7" (a classic generation
// or a member epoch: the history does not say which).
func genLabel(g int32) string {
	if g < 0 {
		return "g?"
	}
	return fmt.Sprintf("g%d", g)
}

// groupLanes draws a group's ownership as the timeline's lanes: the
// phases and faults on top, then a lane of the generations (each from the
// first assign that carried it), then one lane per partition coloured by
// the owning process, light red where nobody owned it; a dashed line
// marks each rebalance across the lanes.
func groupLanes(a *GroupActivity, end time.Duration, marks *runMarks) (template.HTML, []swatch, string) {
	names := a.Partitions
	note := ""
	if len(names) > maxLanes {
		note = fmt.Sprintf("Showing the first %d of %d partitions.", maxLanes, len(names))
		names = names[:maxLanes]
	}
	x := func(t time.Duration) float64 {
		t = max(0, min(t, end))
		return laneLabelW + laneChartW*float64(t)/float64(end)
	}
	markRows := stripRows(marks)
	lanesTop := laneAxisH + markRowH*float64(len(markRows))
	if len(markRows) > 0 {
		lanesTop += laneGap
	}
	height := lanesTop + laneH*float64(1+len(names)) + 4
	width := laneLabelW + laneChartW + 12
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="lanes" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" width="%.0f" height="%.0f" role="img" aria-label="%s">`,
		width, height, width, height, esc("owners of each partition of group "+a.Group+" over simulated time"))
	b.WriteString(`<style>.lanes text{font:10px sans-serif}.lanes .in{fill:#fff;font-weight:bold}</style>`)
	drawAxis(&b, end, x, height)
	drawMarkRows(&b, markRows, x)

	var gens []segment
	for i, rb := range a.Rebalances {
		to := end
		if i+1 < len(a.Rebalances) {
			to = a.Rebalances[i+1].At
		}
		gens = append(gens, segment{from: rb.At, to: to, key: genLabel(rb.Generation), fill: generationColours[i%2], text: genLabel(rb.Generation),
			title: fmt.Sprintf("generation (or member epoch) %d: first assigned at %s, %d members assigned", rb.Generation, fmtTime(rb.At), rb.Members)})
	}
	drawLane(&b, lanesTop, 0, "generation", gens, x, false)

	// Each process of the group gets a colour of its own (up to ten),
	// in name order, so that two members never share one.
	colour := map[string]string{}
	var procs []string
	for _, o := range a.Owners {
		if _, ok := colour[o.Process]; !ok {
			colour[o.Process] = ""
			procs = append(procs, o.Process)
		}
	}
	sort.Strings(procs)
	members := make([]swatch, len(procs))
	for i, p := range procs {
		colour[p] = brokerPalette[i%len(brokerPalette)]
		members[i] = swatch{p, colour[p]}
	}
	lane := make(map[string]int, len(names))
	segs := make([][]segment, len(names))
	for i, n := range names {
		lane[n] = i
	}
	for _, o := range a.Owners {
		i, ok := lane[o.Partition]
		if !ok {
			continue
		}
		how := "until it was revoked or its process died"
		if o.Open {
			how = "still owned at the end"
		}
		segs[i] = append(segs[i], segment{from: o.From, to: o.To, fill: colour[o.Process], text: o.Process + " " + genLabel(o.Generation),
			title: fmt.Sprintf("%s owned by %s (member %s), generation %d, %s", o.Partition, o.Process, o.MemberID, o.Generation, how)})
	}
	for _, g := range a.Gaps {
		i, ok := lane[g.Partition]
		if !ok {
			continue
		}
		title := fmt.Sprintf("%s had no owner for %s, until generation %d assigned it", g.Partition, fmtTime(g.To-g.From), g.Generation)
		if g.Open {
			title = fmt.Sprintf("%s had no owner from here to the end (%s)", g.Partition, fmtTime(g.To-g.From))
		}
		segs[i] = append(segs[i], segment{from: g.From, to: g.To, fill: noOwnerColour, title: title})
	}
	for i, n := range names {
		sort.SliceStable(segs[i], func(p, q int) bool { return segs[i][p].from < segs[i][q].from })
		drawLane(&b, lanesTop, i+1, n, segs[i], x, false)
	}

	drawMarks(&b, marks, x, lanesTop, height)
	for _, rb := range a.Rebalances {
		px := x(rb.At)
		fmt.Fprintf(&b, `<line x1="%.2f" y1="%.1f" x2="%.2f" y2="%.1f" stroke="#2456a6" stroke-width="1.2" stroke-dasharray="2,2"><title>%s</title></line>`,
			px, lanesTop, px, height, esc(fmt.Sprintf("rebalance: generation %d first assigned at %s", rb.Generation, fmtTime(rb.At))))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()), members, note // every dynamic string above went through esc
}
