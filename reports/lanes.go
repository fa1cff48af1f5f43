package reports

import (
	"fmt"
	"hash/fnv"
	"html"
	"html/template"
	"image/color"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// maxLanes is how many partitions the lane chart draws; beyond ~50 lanes a
// chart stops being readable, and the report says what it left out.
const maxLanes = 50

// Lane chart geometry, in SVG user units (pixels at 100%).
const (
	laneLabelW = 120.0
	laneChartW = 880.0
	laneAxisH  = 28.0
	laneLeadH  = 12.0 // leader band
	laneISRH   = 8.0  // ISR size band
	laneELRH   = 3.0  // ELR band
	laneGap    = 5.0
	laneH      = laneLeadH + laneISRH + laneELRH + laneGap
)

// brokerPalette colours leaders by broker id (Tableau 10 without its grey,
// which means "no leader" here).
var brokerPalette = []string{
	"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
	"#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#17becf",
}

// The ISR and ELR bands are drawn so that they cannot be mistaken for a
// broker's colour: the ISR as a bar whose height is the ISR size over the
// replication factor, dark grey when full and dark red when shrunk; the
// ELR as a dotted black line.
const (
	noLeaderColour = "#cfcfcf"
	isrBackground  = "#e6e6e6"
	isrFullColour  = "#4a4a4a"
	isrShrunk      = "#a31515"
	elrColour      = "#000"
)

func brokerColour(id int32) string {
	if id < 0 {
		return noLeaderColour
	}
	return brokerPalette[int(id)%len(brokerPalette)]
}

// nodeColour colours a controller by name, stably across runs.
func nodeColour(name string) string {
	if name == "" {
		return noLeaderColour
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	return brokerPalette[h.Sum32()%uint32(len(brokerPalette))]
}

// swatch is a legend entry.
type swatch struct{ Label, Colour string }

// laneChart is the timeline's picture: one lane per partition (leader,
// ISR size, ELR) under the active controller's lane, fault markers across.
type laneChart struct {
	SVG         template.HTML
	Note        string // what was left out
	Brokers     []swatch
	Controllers []swatch
}

// segment is a stretch of time over which a lane did not change.
type segment struct {
	from, to time.Duration
	key      string // equal keys merge
	fill     string
	text     string  // drawn inside when it fits
	title    string  // tooltip
	isr      float64 // ISR size over replication factor
	elr      bool
}

// merge appends s to segs, extending the last segment when nothing changed.
func merge(segs []segment, s segment) []segment {
	if n := len(segs); n > 0 && segs[n-1].key == s.key && segs[n-1].to == s.from {
		segs[n-1].to = s.to
		return segs
	}
	return append(segs, s)
}

// newLaneChart draws the god-view timeline as inline SVG.
func newLaneChart(r *Run) laneChart {
	samples := sortedSamples(r.Timeline)
	names := timelinePartitions(r.Timeline)
	var lc laneChart
	if len(samples) == 0 && len(r.Faults) == 0 {
		return lc
	}
	if len(names) > maxLanes {
		lc.Note = fmt.Sprintf("Showing the first %d of %d partitions.", maxLanes, len(names))
		names = names[:maxLanes]
	}

	end := laneEnd(r, samples)
	x := func(t time.Duration) float64 {
		t = max(0, min(t, end))
		return laneLabelW + laneChartW*float64(t)/float64(end)
	}
	until := func(i int) time.Duration {
		if i+1 < len(samples) {
			return samples[i+1].At
		}
		return end
	}

	// The phases and faults, as every plot of the report marks them.
	final, _ := finalReadsStart(r.history())
	marks := newRunMarks(r, end, final)
	markRows := stripRows(&marks)
	lanesTop := laneAxisH + markRowH*float64(len(markRows))
	if len(markRows) > 0 {
		lanesTop += laneGap
	}

	rf := replicaCounts(r)
	height := lanesTop + laneH*float64(1+len(names)) + 4
	width := laneLabelW + laneChartW + 12
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="lanes" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" width="%.0f" height="%.0f" role="img" aria-label="phases, faults, and leaders, ISR and ELR per partition over simulated time">`,
		width, height, width, height)
	b.WriteString(`<style>.lanes text{font:10px sans-serif}.lanes .in{fill:#fff;font-weight:bold}</style>`)
	drawAxis(&b, end, x, height)
	drawMarkRows(&b, markRows, x)

	// The active controller's lane.
	var ctrl []segment
	seenCtrl := map[string]bool{}
	for i, s := range samples {
		c := s.ActiveController
		if c != "" && !seenCtrl[c] {
			seenCtrl[c] = true
			lc.Controllers = append(lc.Controllers, swatch{c, nodeColour(c)})
		}
		title := "no active controller"
		if c != "" {
			title = fmt.Sprintf("active controller %s, epoch %d", c, s.ControllerEpoch)
		}
		ctrl = merge(ctrl, segment{from: s.At, to: until(i), key: c + "/" + strconv.Itoa(int(s.ControllerEpoch)),
			fill: nodeColour(c), text: c, title: title})
	}
	drawLane(&b, lanesTop, 0, "controller", ctrl, x, false)

	// states[lane][i] is the lane's partition at samples[i], nil when absent.
	lane := make(map[string]int, len(names))
	states := make([][]*PartitionSample, len(names))
	for i, n := range names {
		lane[n] = i
		states[i] = make([]*PartitionSample, len(samples))
	}
	for i, s := range samples {
		for k := range s.Partitions {
			if l, ok := lane[s.Partitions[k].Name]; ok {
				states[l][i] = &s.Partitions[k]
			}
		}
	}

	seenBroker := map[int32]bool{}
	for li, name := range names {
		var segs []segment
		for i, s := range samples {
			ps := states[li][i]
			if ps == nil { // the partition does not exist yet
				segs = merge(segs, segment{from: s.At, to: until(i), key: "absent", title: name + " not in metadata"})
				continue
			}
			if ps.Leader >= 0 {
				seenBroker[ps.Leader] = true
			}
			leader := "none"
			if ps.Leader >= 0 {
				leader = strconv.Itoa(int(ps.Leader))
			}
			segs = merge(segs, segment{
				from: s.At, to: until(i),
				key:  fmt.Sprintf("%d/%d/%s/%s", ps.Leader, ps.LeaderEpoch, joinIDs(ps.ISR), joinIDs(ps.ELR)),
				fill: brokerColour(ps.Leader),
				text: leader,
				title: fmt.Sprintf("%s leader %s epoch %d, ISR [%s], ELR [%s]; HW %d, LEO %d at the start",
					name, leader, ps.LeaderEpoch, joinIDs(ps.ISR), joinIDs(ps.ELR), ps.HW, ps.LEO),
				isr: isrFraction(len(ps.ISR), max(rf[name], len(ps.ISR))),
				elr: len(ps.ELR) > 0,
			})
		}
		drawLane(&b, lanesTop, li+1, name, segs, x, true)
	}

	drawMarks(&b, &marks, x, lanesTop, height)
	b.WriteString(`</svg>`)
	lc.SVG = template.HTML(b.String()) // every dynamic string above went through html.EscapeString
	ids := make([]int, 0, len(seenBroker))
	for id := range seenBroker {
		ids = append(ids, int(id))
	}
	sort.Ints(ids)
	for _, id := range ids {
		lc.Brokers = append(lc.Brokers, swatch{"broker " + strconv.Itoa(id), brokerColour(int32(id))})
	}
	return lc
}

// laneEnd is where the lane charts' time axis ends: the end of the run,
// or of the last sample or fault.
func laneEnd(r *Run, samples []*Sample) time.Duration {
	end := r.SimTime
	for _, s := range samples {
		end = max(end, s.At)
	}
	for _, f := range r.Faults {
		end = max(end, f.At)
	}
	if end <= 0 {
		end = time.Second
	}
	return end
}

// replicaCounts is each partition's replication factor from the final
// state, to tell a shrunk ISR from a full one.
func replicaCounts(r *Run) map[string]int {
	rf := map[string]int{}
	for _, p := range r.Final {
		rf[p.Topic+"-"+strconv.Itoa(int(p.Partition))] = len(p.Replicas)
	}
	return rf
}

// isrFraction is how much of the replica set is in the ISR, 0..1.
func isrFraction(size, replicas int) float64 {
	if replicas <= 0 {
		return 0
	}
	return float64(size) / float64(replicas)
}

func esc(s string) string { return html.EscapeString(s) }

// drawAxis draws time ticks across the top, with faint grid lines down.
func drawAxis(b *strings.Builder, end time.Duration, x func(time.Duration) float64, height float64) {
	// The plots' ticks, so that the timeline and the plots read alike.
	for _, tk := range timeAxis(end).ticks {
		px := x(time.Duration(tk.v * float64(time.Second)))
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e5e5e5"/>`, px, laneAxisH-4, px, height)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, px, laneAxisH-16, esc(tk.label))
	}
}

// drawLane draws one lane: its label, then each segment's leader band and,
// for partitions, the ISR and ELR bands under it.
func drawLane(b *strings.Builder, top float64, row int, label string, segs []segment, x func(time.Duration) float64, partition bool) {
	y := top + laneH*float64(row)
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`, laneLabelW-6, y+laneLeadH-2, esc(label))
	for _, s := range segs {
		if s.fill == "" { // absent
			continue
		}
		x0, x1 := x(s.from), x(s.to)
		w := math.Max(x1-x0, 0.5)
		fmt.Fprintf(b, `<g><title>%s (%s–%s)</title>`, esc(s.title), esc(fmtTime(s.from)), esc(fmtTime(s.to)))
		fmt.Fprintf(b, `<rect x="%.2f" y="%.1f" width="%.2f" height="%.1f" fill="%s"/>`, x0, y, w, laneLeadH, s.fill)
		if s.text != "" && w >= float64(7*len(s.text)+4) {
			fmt.Fprintf(b, `<text class="in" x="%.1f" y="%.1f">%s</text>`, x0+2, y+laneLeadH-2, esc(s.text))
		}
		if partition {
			top := y + laneLeadH
			fmt.Fprintf(b, `<rect x="%.2f" y="%.1f" width="%.2f" height="%.1f" fill="%s"/>`, x0, top, w, laneISRH, isrBackground)
			if h := laneISRH * s.isr; h > 0 {
				fill := isrFullColour
				if s.isr < 1 {
					fill = isrShrunk
				}
				fmt.Fprintf(b, `<rect x="%.2f" y="%.2f" width="%.2f" height="%.2f" fill="%s"/>`, x0, top+laneISRH-h, w, h, fill)
			}
			if s.elr {
				ly := top + laneISRH + laneELRH/2 + 0.5
				fmt.Fprintf(b, `<line x1="%.2f" y1="%.2f" x2="%.2f" y2="%.2f" stroke="%s" stroke-width="%.1f" stroke-dasharray="2,2"/>`, x0, ly, x0+w, ly, elrColour, laneELRH-1)
			}
		}
		b.WriteString(`</g>`)
	}
}

// markRowH is the height of a phase or fault row above the lanes.
const markRowH = 14.0

// svgColour writes c as #rrggbb and its opacity.
func svgColour(c color.Color) (string, float64) {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	return fmt.Sprintf("#%02x%02x%02x", n.R, n.G, n.B), float64(n.A) / 255
}

func svgFill(c color.Color) string {
	hex, a := svgColour(c)
	if a >= 1 {
		return fmt.Sprintf(`fill="%s"`, hex)
	}
	return fmt.Sprintf(`fill="%s" fill-opacity="%.3f"`, hex, a)
}

func svgStroke(c color.Color) string {
	hex, a := svgColour(c)
	if a >= 1 {
		return fmt.Sprintf(`stroke="%s"`, hex)
	}
	return fmt.Sprintf(`stroke="%s" stroke-opacity="%.3f"`, hex, a)
}

// drawMarkRows draws the phase row and the fault rows under the time axis,
// as the plots' strip does: tinted phases, fault bars from strike to end,
// instants as ticks, skipped faults dashed; a label where it fits; every
// piece with its tooltip.
func drawMarkRows(b *strings.Builder, rows []stripRow, x func(time.Duration) float64) {
	for r, row := range rows {
		y := laneAxisH + markRowH*float64(r)
		y0, y1 := y+1, y+markRowH-1
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`, laneLabelW-6, y1-2, esc(row.label))
		labelEnd := laneLabelW // where the row's last label ends
		for i, s := range row.spans {
			a, e := x(s.from), x(s.to)
			fmt.Fprintf(b, `<g><title>%s</title>`, esc(s.title))
			switch {
			case row.phase:
				fill := phaseFill[s.label]
				if fill == nil {
					fill = phaseFill[phaseConverge]
				}
				fmt.Fprintf(b, `<rect x="%.2f" y="%.1f" width="%.2f" height="%.1f" %s/>`, a, y0, math.Max(e-a, 1), y1-y0, svgFill(fill))
			case s.skipped:
				fmt.Fprintf(b, `<line x1="%.2f" y1="%.1f" x2="%.2f" y2="%.1f" %s stroke-width="1.5" stroke-dasharray="3,2"/>`, a, y0, a, y1, svgStroke(skippedLine))
			case s.instant():
				fmt.Fprintf(b, `<line x1="%.2f" y1="%.1f" x2="%.2f" y2="%.1f" %s stroke-width="2"/>`, a, y0, a, y1, svgStroke(faultLine))
			default:
				e = math.Max(e, a+2)
				fmt.Fprintf(b, `<rect x="%.2f" y="%.1f" width="%.2f" height="%.1f" %s/>`, a, y0, e-a, y1-y0, svgFill(faultBar))
				fmt.Fprintf(b, `<line x1="%.2f" y1="%.1f" x2="%.2f" y2="%.1f" %s stroke-width="1.5"/>`, a, y0, a, y1, svgStroke(faultLine))
				if s.undone {
					fmt.Fprintf(b, `<line x1="%.2f" y1="%.1f" x2="%.2f" y2="%.1f" %s stroke-width="1.5"/>`, e, y0, e, y1, svgStroke(undoLine))
				}
			}
			// The label: inside a span wide enough, else after it when
			// the row is free up to the next span.
			w := 6.0*float64(len([]rune(s.label))) + 6
			next := laneLabelW + laneChartW
			if i+1 < len(row.spans) {
				next = x(row.spans[i+1].from)
			}
			switch {
			case s.label == "":
			case e-a >= w:
				fmt.Fprintf(b, `<text x="%.1f" y="%.1f">%s</text>`, a+3, y1-2, esc(s.label))
				labelEnd = a + w
			case !row.phase && e+w <= next:
				fmt.Fprintf(b, `<text x="%.1f" y="%.1f">%s</text>`, e+3, y1-2, esc(s.label))
				labelEnd = e + w
			case row.phase && i == len(row.spans)-1 && a-w >= labelEnd:
				// The final reads, too short for their name: it goes
				// before them.
				fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`, a-3, y1-2, esc(s.label))
			}
			b.WriteString(`</g>`)
		}
	}
}

// drawMarks draws the marks across the lanes, as the plots do under their
// data: the final reads shaded grey, each fault shaded from when it struck
// to when it ended, with a red line at its start and a green one at its
// undoing (an instant a red line, a skipped fault a dashed grey one), and
// the phase boundaries dashed.
func drawMarks(b *strings.Builder, m *runMarks, x func(time.Duration) float64, top, bottom float64) {
	band := func(from, to time.Duration, c color.Color, title string) {
		if a, e := x(from), x(to); e > a {
			fmt.Fprintf(b, `<rect x="%.2f" y="%.1f" width="%.2f" height="%.1f" %s pointer-events="none"><title>%s</title></rect>`,
				a, top, e-a, bottom-top, svgFill(c), esc(title))
		}
	}
	line := func(at time.Duration, c color.Color, dash, title string) {
		px := x(at)
		fmt.Fprintf(b, `<line x1="%.2f" y1="%.1f" x2="%.2f" y2="%.1f" %s stroke-width="1.2"%s><title>%s</title></line>`,
			px, top, px, bottom, svgStroke(c), dash, esc(title))
	}
	if fr := m.finalReads; fr.to > fr.from {
		band(fr.from, fr.to, finalShade, fr.title)
	}
	for _, r := range m.rows {
		for _, s := range r.spans {
			switch {
			case s.skipped:
				line(s.from, skippedLine, ` stroke-dasharray="3,3"`, s.title)
			case s.instant():
				line(s.from, faultLine, "", s.title)
			default:
				band(s.from, s.to, faultShade, s.title)
				line(s.from, faultLine, "", s.title)
				if s.undone {
					line(s.to, undoLine, "", s.title)
				}
			}
		}
	}
	for _, bd := range m.bounds {
		line(bd.at, boundaryLine, ` stroke-dasharray="4,3"`, bd.label+" at "+fmtTime(bd.at))
	}
}
