package sweep

import (
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"kafkasim/internal/plural"
)

// WriteIndex writes a sweep's index.html to w: one self-contained page
// (inline CSS, no script, every plot embedded as a data: URI read from
// dir, the SVG when it can be read and the PNG otherwise) showing the
// sweep's name, its axes, the plots, a table of the cells that ran (each
// axis's value, the runs, and every metric as mean [lo, hi]), the cells
// that could not run with their reason, the runs that failed (cell, seed,
// verdict, headline and the scenario file that replays each) and the
// notes. Every string is escaped: an axis value of "<script>" shows as
// text.
//
// A plot whose files cannot be read is named on the page as missing, not
// an error: the page is still worth having.
func WriteIndex(w io.Writer, name string, axes []Axis, cells []Cell, plots []Plot, dir string, notes []string, failed []FailedRun) error {
	v := indexView{Name: name, Notes: notes}
	for _, f := range failed {
		vals := make([]string, len(axes))
		for i, a := range axes {
			vals[i] = f.Values[a.Name]
		}
		v.Failed = append(v.Failed, indexFailed{ID: f.Cell, Values: vals, Seed: f.Seed, Verdict: f.Verdict,
			Headline: f.Headline, Scenario: f.Scenario})
	}
	for _, a := range axes {
		pa, _ := plotFindAxis(axes, a.Name)
		kind := "categorical"
		if pa.numeric {
			kind = "numeric"
		}
		v.Axes = append(v.Axes, indexAxis{Name: a.Name, Values: strings.Join(a.Values, ", "), Kind: kind})
		v.AxisNames = append(v.AxisNames, a.Name)
	}
	for _, p := range plots {
		v.Plots = append(v.Plots, indexEmbed(dir, p))
	}
	valid := plotValidCells(cells)
	v.Metrics = indexMetricNames(valid)
	runs := 0
	for _, c := range cells {
		vals := make([]string, len(axes))
		for i, a := range axes {
			vals[i] = c.Values[a.Name]
		}
		if c.Invalid != "" || c.Runs == 0 {
			reason := c.Invalid
			if reason == "" {
				reason = "no run finished"
			}
			v.Invalid = append(v.Invalid, indexInvalid{ID: c.ID, Values: vals, Reason: reason})
			continue
		}
		runs += c.Runs
		row := indexRow{ID: c.ID, Values: vals, Runs: c.Runs}
		for _, m := range v.Metrics {
			st, ok := c.Metrics[m]
			switch {
			case !ok:
				row.Stats = append(row.Stats, "–")
			case st.Lo == st.Mean && st.Hi == st.Mean:
				row.Stats = append(row.Stats, plotFormat(st.Mean))
			default:
				row.Stats = append(row.Stats, fmt.Sprintf("%s [%s, %s]", plotFormat(st.Mean), plotFormat(st.Lo), plotFormat(st.Hi)))
			}
		}
		v.Rows = append(v.Rows, row)
	}
	v.Summary = fmt.Sprintf("%s: %d ran (%s in all), %d could not run", plural.Count(len(cells), "cell"), len(v.Rows), plural.Count(runs, "run"), len(v.Invalid))
	if len(failed) > 0 {
		v.Summary += fmt.Sprintf("; %s of %d did not pass (see Failed runs)", plural.Count(len(failed), "run"), runs)
	}
	return indexTemplate.Execute(w, v)
}

type indexView struct {
	Name      string
	Summary   string
	Axes      []indexAxis
	AxisNames []string
	Metrics   []string
	Plots     []indexPlot
	Rows      []indexRow
	Invalid   []indexInvalid
	Failed    []indexFailed
	Notes     []string
}

type indexFailed struct {
	ID                string
	Values            []string
	Seed              uint64
	Verdict, Headline string
	Scenario          string
}

type indexAxis struct{ Name, Values, Kind string }

type indexPlot struct {
	Name, Title, PNG, SVG string
	Src                   template.URL
	Missing               string
}

type indexRow struct {
	ID     string
	Values []string
	Runs   int
	Stats  []string // one per metric, "mean [lo, hi]"
}

type indexInvalid struct {
	ID     string
	Values []string
	Reason string
}

// indexMetricNames lists the metrics the cells report: those of Metrics
// GroupMetrics and ProcessorMetrics in their order, then the others (anomaly counts) by name.
func indexMetricNames(cells []Cell) []string {
	set := map[string]bool{}
	for _, c := range cells {
		for m := range c.Metrics { // kafkasim:orderless: a set, sorted below
			set[m] = true
		}
	}
	var out, extra []string
	for _, m := range append(append(append([]string{}, Metrics...), GroupMetrics...), ProcessorMetrics...) {
		if set[m] {
			out = append(out, m)
		}
	}
	for m := range set { // kafkasim:orderless: sorted below
		if !slices.Contains(Metrics, m) && !slices.Contains(GroupMetrics, m) && !slices.Contains(ProcessorMetrics, m) {
			extra = append(extra, m)
		}
	}
	sort.Strings(extra)
	return append(out, extra...)
}

// indexEmbed inlines a plot as a data: URI, the SVG when it can be read
// (sharp at any zoom) and the PNG otherwise. An <img> keeps each SVG's ids
// and anything else in it to itself.
func indexEmbed(dir string, p Plot) indexPlot {
	v := indexPlot{Name: p.Name, Title: p.Title, PNG: p.PNG, SVG: p.SVG}
	for _, f := range []struct{ file, mime string }{{p.SVG, "image/svg+xml"}, {p.PNG, "image/png"}} {
		if f.file == "" {
			continue
		}
		if b, err := os.ReadFile(filepath.Join(dir, f.file)); err == nil && len(b) > 0 {
			v.Src = template.URL("data:" + f.mime + ";base64," + base64.StdEncoding.EncodeToString(b))
			return v
		}
	}
	v.Missing = fmt.Sprintf("neither %q nor %q could be read from %s", p.SVG, p.PNG, dir)
	return v
}

// indexTemplate is well-formed XML as well as HTML (every element closed,
// no bare ampersand or angle bracket in the CSS), so that a test can parse
// it strictly.
var indexTemplate = template.Must(template.New("index").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8"/>
<title>{{.Name}} · kafkasim sweep</title>
<style>
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 90em; padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; margin-top: 1.6em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
.scroll { overflow-x: auto; }
figure { margin: 1em 0 2em 0; }
figure img { max-width: 100%; height: auto; background: #fff; border: 1px solid #eee; }
figcaption { font-size: 0.9em; color: #444; }
.missing { color: #a00; }
.bad { color: #a00; font-weight: bold; }
.summary { color: #555; }
</style>
</head>
<body>
<h1>Sweep {{.Name}}</h1>
<p class="summary">{{.Summary}}</p>
{{- if .Failed}}

<section id="failed">
<h2>Failed runs</h2>
<p>These runs did not pass: an expectation of the base scenario failed (fail), the cluster did not converge after healing (liveness) or the simulator failed (crash). Each scenario file is the cell's resolved scenario at that seed: <code>kafkasim run FILE</code> replays it with a full run store and report.</p>
<div class="scroll">
<table>
<tr>{{range .AxisNames}}<th>{{.}}</th>{{end}}<th>seed</th><th>verdict</th><th>what happened</th><th>scenario</th></tr>
{{- range .Failed}}
<tr title="{{.ID}}">{{range .Values}}<td>{{.}}</td>{{end}}<td class="num">{{.Seed}}</td><td class="bad">{{.Verdict}}</td><td>{{.Headline}}</td><td><a href="{{.Scenario}}">{{.Scenario}}</a></td></tr>
{{- end}}
</table>
</div>
</section>
{{- end}}

<section id="axes">
<h2>Axes</h2>
{{- if .Axes}}
<table>
<tr><th>axis</th><th>values</th><th>kind</th></tr>
{{- range .Axes}}
<tr><td>{{.Name}}</td><td>{{.Values}}</td><td>{{.Kind}}</td></tr>
{{- end}}
</table>
{{- else}}
<p>No axes: one cell.</p>
{{- end}}
</section>

<section id="plots">
<h2>Plots</h2>
{{- range .Plots}}
<figure id="plot-{{.Name}}">
{{- if .Src}}
<img src="{{.Src}}" alt="{{.Title}}"/>
{{- else}}
<p class="missing">Plot {{.Name}} is missing: {{.Missing}}</p>
{{- end}}
<figcaption>{{.Title}} ({{if .PNG}}<a href="{{.PNG}}">PNG</a>{{end}}{{if and .PNG .SVG}}, {{end}}{{if .SVG}}<a href="{{.SVG}}">SVG</a>{{end}})</figcaption>
</figure>
{{- else}}
<p>No plots.</p>
{{- end}}
</section>

<section id="cells">
<h2>Cells</h2>
{{- if .Rows}}
<p>Each metric is the mean over the cell's runs and its 95% interval [lo, hi].</p>
<div class="scroll">
<table>
<tr>{{range .AxisNames}}<th>{{.}}</th>{{end}}<th>runs</th>{{range .Metrics}}<th>{{.}}</th>{{end}}</tr>
{{- range .Rows}}
<tr title="{{.ID}}">{{range .Values}}<td>{{.}}</td>{{end}}<td class="num">{{.Runs}}</td>{{range .Stats}}<td class="num">{{.}}</td>{{end}}</tr>
{{- end}}
</table>
</div>
{{- else}}
<p>No cell ran.</p>
{{- end}}
</section>
{{- if .Invalid}}

<section id="invalid">
<h2>Cells that could not run</h2>
<table>
<tr>{{range .AxisNames}}<th>{{.}}</th>{{end}}<th>reason</th></tr>
{{- range .Invalid}}
<tr title="{{.ID}}">{{range .Values}}<td>{{.}}</td>{{end}}<td>{{.Reason}}</td></tr>
{{- end}}
</table>
</section>
{{- end}}
{{- if .Notes}}

<section id="notes">
<h2>Notes</h2>
<ul>
{{- range .Notes}}
<li>{{.}}</li>
{{- end}}
</ul>
</section>
{{- end}}
</body>
</html>
`))
