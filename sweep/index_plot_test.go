package sweep

import (
	"bytes"
	"encoding/base64"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// plotIndexFixture writes the test grid's plots, plus an invalid cell and
// one with no run, and returns the page.
func plotIndexFixture(t *testing.T) (string, []Plot, string) {
	t.Helper()
	dir := t.TempDir()
	cells := append(plotTestCells(),
		Cell{ID: "acks=all,min.insync.replicas=3,nemesis-intensity=1",
			Values:  map[string]string{"acks": "all", "min.insync.replicas": "3", "nemesis-intensity": "1"},
			Invalid: "min.insync.replicas 3 above replication.factor 2"},
		Cell{ID: "acks=1,min.insync.replicas=3,nemesis-intensity=1",
			Values: map[string]string{"acks": "1", "min.insync.replicas": "3", "nemesis-intensity": "1"}})
	ps, err := WritePlots(dir, plotTestAxes, cells, plotTestSpecs)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	notes := []string{"seeds 1..20 per cell", "the duplicate anomaly is permitted under acks=1"}
	if err := WriteIndex(&b, "durability-vs-availability", plotTestAxes, cells, ps, dir, notes, nil); err != nil {
		t.Fatal(err)
	}
	return dir, ps, b.String()
}

func TestPlotIndexShowsEverything(t *testing.T) {
	dir, ps, page := plotIndexFixture(t)
	if err := plotCheckXML([]byte(page), "html"); err != nil {
		t.Fatalf("index.html is not well-formed: %v\n%s", err, page)
	}
	for _, w := range []string{
		"<!DOCTYPE html>",
		`<meta charset="utf-8"/>`,
		"<h1>Sweep durability-vs-availability</h1>",
		"10 cells: 8 ran (160 runs in all), 2 could not run",
		// The axes.
		"<td>min.insync.replicas</td><td>1, 2</td><td>numeric</td>",
		"<td>acks</td><td>1, all</td><td>categorical</td>",
		// The cells: axis values, runs, metrics as mean [lo, hi].
		"<th>acks</th><th>min.insync.replicas</th><th>nemesis-intensity</th><th>runs</th><th>availability</th>",
		"<td>all</td><td>2</td><td>0.5</td><td class=\"num\">20</td><td class=\"num\">0.93 [0.92, 0.94]</td>",
		"<td class=\"num\">0.02 [0.01, 0.03]</td>",
		// Invalid cells with their reason.
		"<td>min.insync.replicas 3 above replication.factor 2</td>",
		"<td>no run finished</td>",
		// The notes.
		"<li>seeds 1..20 per cell</li>",
	} {
		if !strings.Contains(page, w) {
			t.Errorf("index lacks %q", w)
		}
	}
	// Every plot is embedded, as its SVG, and the embedded bytes are the file's.
	for _, p := range ps {
		re := regexp.MustCompile(`<figure id="plot-` + regexp.QuoteMeta(p.Name) + `">\s*<img src="data:image/svg&#43;xml;base64,([A-Za-z0-9/+=&#;]+)"`)
		m := re.FindStringSubmatch(page)
		if m == nil {
			t.Errorf("plot %s is not embedded", p.Name)
			continue
		}
		got, err := base64.StdEncoding.DecodeString(html.UnescapeString(m[1]))
		if err != nil {
			t.Fatal(err)
		}
		want, _ := os.ReadFile(filepath.Join(dir, p.SVG))
		if !bytes.Equal(got, want) {
			t.Errorf("plot %s: the embedded SVG is not the file", p.Name)
		}
		if !strings.Contains(page, `<figcaption>`+strings.ReplaceAll(p.Title, "'", "&#39;")) {
			t.Errorf("plot %s: no caption with its title %q", p.Name, p.Title)
		}
	}
	// No script, no external resource but the plot files' own links.
	for _, bad := range []string{"<script", "http://", "https://", "<link"} {
		if strings.Contains(strings.ToLower(page), bad) {
			t.Errorf("index contains %q", bad)
		}
	}
	// The invalid cells are not in the cells table.
	cellsTable := page[strings.Index(page, `<section id="cells">`):strings.Index(page, `<section id="invalid">`)]
	if strings.Contains(cellsTable, "<td>3</td>") {
		t.Error("the cells table lists a cell that did not run")
	}
}

func TestPlotIndexDeterministic(t *testing.T) {
	_, _, a := plotIndexFixture(t)
	_, _, b := plotIndexFixture(t)
	if a != b {
		t.Error("two indexes of the same sweep differ")
	}
}

func TestPlotIndexEscapesHostileValues(t *testing.T) {
	const evil = `<script>alert(1)</script>`
	const evilMetric = `<img src=x onerror=alert(3)>`
	axes := []Axis{
		{Name: evil, Values: []string{`"><script>alert(2)</script>`, "x&y"}},
		{Name: "acks", Values: []string{"1", "all"}},
	}
	var cells []Cell
	for _, v := range axes[0].Values {
		for _, acks := range axes[1].Values {
			cells = append(cells, Cell{
				ID:      evil + "=" + v,
				Values:  map[string]string{evil: v, "acks": acks},
				Runs:    3,
				Metrics: map[string]Stat{"availability": {Mean: 0.9, Lo: 0.8, Hi: 1}, evilMetric: {Mean: 1, Lo: 0, Hi: 2}},
			})
		}
	}
	cells = append(cells, Cell{ID: evil, Values: map[string]string{evil: "x&y"}, Invalid: evil})
	specs := []PlotSpec{
		{Kind: "pareto", X: "availability", Y: evilMetric, Label: []string{evil}, Title: evil},
		{Kind: "heatmap", X: evil, Y: "acks", Z: evilMetric},
		{Kind: "lines", X: evil, Y: "availability", Series: []string{"acks"}},
	}
	dir := t.TempDir()
	ps, err := WritePlots(dir, axes, cells, specs)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 3 {
		t.Fatalf("plots = %v", ps)
	}
	// The SVGs stay well-formed: their text is escaped too.
	plotCheckFiles(t, dir, ps)
	for _, p := range ps {
		if strings.ContainsAny(p.Name, "<>\"&/ ") {
			t.Errorf("plot name %q is not a slug", p.Name)
		}
	}
	var b bytes.Buffer
	if err := WriteIndex(&b, evil, axes, cells, ps, dir, []string{evil}, nil); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if low := strings.ToLower(page); strings.Contains(low, "<script") || strings.Contains(low, "<img src=x") {
		t.Fatalf("index has a raw <script>:\n%s", page)
	}
	if err := plotCheckXML([]byte(page), "html"); err != nil {
		t.Fatalf("index.html is not well-formed: %v", err)
	}
	for _, w := range []string{"<h1>Sweep &lt;script&gt;alert(1)&lt;/script&gt;</h1>", "<td>x&amp;y</td>",
		"<li>&lt;script&gt;alert(1)&lt;/script&gt;</li>", "&#34;&gt;&lt;script&gt;alert(2)&lt;/script&gt;", "<th>&lt;img src=x onerror=alert(3)&gt;</th>"} {
		if !strings.Contains(page, w) {
			t.Errorf("index lacks the escaped %q", w)
		}
	}
}

func TestPlotIndexMissingPlotAndEmptySweep(t *testing.T) {
	var b bytes.Buffer
	missing := []Plot{{Name: "gone", Title: "Gone", PNG: "gone.png", SVG: "gone.svg"}}
	if err := WriteIndex(&b, "empty", nil, nil, missing, t.TempDir(), nil, nil); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if err := plotCheckXML([]byte(page), "html"); err != nil {
		t.Fatalf("index.html is not well-formed: %v", err)
	}
	for _, w := range []string{"Plot gone is missing", "No cell ran.", "0 cells: 0 ran (0 runs in all), 0 could not run", "No axes"} {
		if !strings.Contains(page, w) {
			t.Errorf("index lacks %q", w)
		}
	}

	// A plot with only its PNG embeds the PNG.
	dir := t.TempDir()
	ps, err := WritePlots(dir, plotTestAxes, plotTestCells(), plotTestSpecs[:1])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, ps[0].SVG)); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := WriteIndex(&b, "png", plotTestAxes, plotTestCells(), ps, dir, nil, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `<img src="data:image/png;base64,iVBORw0KGgo`) {
		t.Error("the PNG is not embedded when the SVG is missing")
	}
}
