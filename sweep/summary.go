package sweep

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"kafkasim/runner"
)

// Summary is a sweep's outcome, written as OUT/<sweep>/summary.json and
// printed by "kafkasim sweep --json": what ran, what failed and how to
// replay it, the cells that could not run, the plots, the notes, and every
// cell's figures.
type Summary struct {
	Sweep   string `json:"sweep"`
	File    string `json:"file"`
	Base    string `json:"base"`
	Version string `json:"version"`
	// Dir is the sweep's folder; every other path is relative to it.
	Dir          string        `json:"dir"`
	Axes         []SummaryAxis `json:"axes"`
	SeedsPerCell int           `json:"seeds_per_cell"`
	Cells        SummaryCells  `json:"cells"`
	Runs         SummaryRuns   `json:"runs"`
	// Interrupted is true when the sweep was stopped before every run
	// finished; the same command resumes it.
	Interrupted bool `json:"interrupted"`
	// ExitCode is the command's exit code: 0 when every run passed, 1 when
	// a run's expectations failed (verdict fail or liveness), 3 when the
	// simulator failed in a run (crash) or a plot could not be drawn.
	ExitCode     int              `json:"exit_code"`
	FailedRuns   []FailedRun      `json:"failed_runs"`
	InvalidCells []SummaryInvalid `json:"invalid_cells"`
	Plots        []SummaryPlot    `json:"plots"`
	Notes        []string         `json:"notes"`
	Files        SummaryFiles     `json:"files"`
	CellResults  []SummaryCell    `json:"cell_results"`
	// Shard is the shard of the sweep this folder holds: "K/N" for
	// "kafkasim sweep --shard K/N", the shards merged ("0..2/3") for
	// "kafkasim sweep merge"; omitted for a whole sweep.
	Shard string `json:"shard,omitempty"`
	// Shards lists, in a merged sweep, each shard merged.
	Shards []SummaryShard `json:"shards,omitempty"`
	// SweepDigest identifies what the sweep runs (its name, seeds per cell,
	// every cell's resolved scenario or why it cannot run, its plots):
	// "kafkasim sweep merge" refuses shards whose differ.
	SweepDigest string `json:"sweep_digest"`
	// PlotSpecs are the sweep file's plots, as "kafkasim sweep merge"
	// draws them again.
	PlotSpecs []SummaryPlotSpec `json:"plot_specs"`
	// WallNs is the wall time the runs took; CPUNs the CPU time (user and
	// system) the process used meanwhile, 0 when not measured. A merged
	// sweep's are the longest shard's wall time and the shards' CPU time
	// summed.
	WallNs int64 `json:"wall_ns"`
	CPUNs  int64 `json:"cpu_ns"`
}

// SummaryShard is one shard of a merged sweep: the folder it was merged
// from, as given, its shard, its finished runs and wall time.
type SummaryShard struct {
	Dir    string `json:"dir"`
	Shard  string `json:"shard"`
	Runs   int    `json:"runs"`
	WallNs int64  `json:"wall_ns"`
}

// SummaryPlotSpec is one plot of the sweep file, as written there.
type SummaryPlotSpec struct {
	Kind   string         `json:"kind"`
	X      string         `json:"x"`
	Y      string         `json:"y"`
	Z      string         `json:"z,omitempty"`
	Label  []string       `json:"label,omitempty"`
	Series []string       `json:"series,omitempty"`
	Facets []string       `json:"facets,omitempty"`
	Where  []SummaryFixed `json:"where,omitempty"`
	Title  string         `json:"title,omitempty"`
}

// SummaryFixed is one axis a plot fixes to one value.
type SummaryFixed struct {
	Axis  string `json:"axis"`
	Value string `json:"value"`
}

func summarySpecs(specs []PlotSpec) []SummaryPlotSpec {
	out := []SummaryPlotSpec{}
	for _, p := range specs {
		sp := SummaryPlotSpec{Kind: p.Kind, X: p.X, Y: p.Y, Z: p.Z, Label: p.Label, Series: p.Series, Facets: p.Facets, Title: p.Title}
		for _, w := range p.Where {
			sp.Where = append(sp.Where, SummaryFixed{Axis: w.Axis, Value: w.Value})
		}
		out = append(out, sp)
	}
	return out
}

// plotSpecs reads back what summarySpecs wrote.
func plotSpecs(specs []SummaryPlotSpec) []PlotSpec {
	var out []PlotSpec
	for _, sp := range specs {
		p := PlotSpec{Kind: sp.Kind, X: sp.X, Y: sp.Y, Z: sp.Z, Label: sp.Label, Series: sp.Series, Facets: sp.Facets, Title: sp.Title}
		for _, w := range sp.Where {
			p.Where = append(p.Where, Fixed{Axis: w.Axis, Value: w.Value})
		}
		out = append(out, p)
	}
	return out
}

// SummaryAxis is one axis of the grid.
type SummaryAxis struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
}

// SummaryCells counts the grid's cells.
type SummaryCells struct {
	Total   int `json:"total"`
	Ran     int `json:"ran"`
	Invalid int `json:"invalid"`
}

// SummaryRuns counts the runs: Planned is every valid cell × seeds;
// Finished those with a result (Now ran in this command, Resumed were kept
// from an earlier one), by verdict.
type SummaryRuns struct {
	Planned  int `json:"planned"`
	Finished int `json:"finished"`
	Now      int `json:"now"`
	Resumed  int `json:"resumed"`
	Passed   int `json:"passed"`
	Failed   int `json:"failed"`
	Liveness int `json:"liveness"`
	Crashed  int `json:"crashed"`
}

// SummaryInvalid is a cell whose configuration cannot run.
type SummaryInvalid struct {
	Cell   string            `json:"cell"`
	Values map[string]string `json:"values"`
	Reason string            `json:"reason"`
}

// SummaryPlot is one plot's files.
type SummaryPlot struct {
	Name  string `json:"name"`
	Title string `json:"title"`
	PNG   string `json:"png"`
	SVG   string `json:"svg"`
}

// SummaryFiles names the sweep's tables and page.
type SummaryFiles struct {
	Runs  string `json:"runs_csv"`
	Cells string `json:"cells_csv"`
	Index string `json:"index_html"`
}

// SummaryCell is one cell's figures: each metric's mean and 95% interval.
type SummaryCell struct {
	Cell   string            `json:"cell"`
	Values map[string]string `json:"values"`
	// FirstSeed is the cell's first seed (the base's, moved by a
	// seed-offset axis): its runs are seeds FirstSeed ..
	// FirstSeed+seeds_per_cell-1.
	FirstSeed uint64                 `json:"first_seed"`
	Runs      int                    `json:"runs"`
	Failed    int                    `json:"failed"`
	Metrics   map[string]SummaryStat `json:"metrics,omitempty"`
}

// SummaryStat is a metric's mean and 95% interval over a cell's runs.
type SummaryStat struct {
	Mean float64 `json:"mean"`
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
}

// Info is what the caller knows of a sweep besides its result.
type Info struct {
	Name, File, Base, Version string
}

// Report writes what a sweep produced besides its tables: the plots, a
// note for each plot that draws a metric along an axis that moved it in no
// run (InertNotes), index.html and summary.json. It returns the summary.
// A plot that cannot be drawn is named in the notes and the error, and
// everything else is still written.
func Report(res *Result, specs []PlotSpec, info Info) (*Summary, error) {
	plots, plotErr := WritePlots(res.Dir, res.Axes, res.Cells, specs)
	res.Plots = plots
	res.Notes = append(res.Notes, InertNotes(res, specs)...)
	if plotErr != nil {
		res.Notes = append(res.Notes, "some plots could not be drawn: "+plotErr.Error())
	}
	sum := NewSummary(res, info)
	sum.PlotSpecs = summarySpecs(specs)
	if plotErr != nil {
		sum.ExitCode = max(sum.ExitCode, 3)
	}
	err := writeFileAtomic(filepath.Join(res.Dir, "index.html"), func(w *bufio.Writer) error {
		return WriteIndex(w, info.Name, res.Axes, res.Cells, plots, res.Dir, res.Notes, res.Failed)
	})
	err = errors.Join(plotErr, err, writeFileAtomic(filepath.Join(res.Dir, "summary.json"), func(w *bufio.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(sum)
	}))
	return sum, err
}

// NewSummary summarises a sweep's result.
func NewSummary(res *Result, info Info) *Summary {
	s := &Summary{Sweep: info.Name, File: info.File, Base: info.Base, Version: info.Version, Dir: res.Dir,
		SeedsPerCell: res.Seeds, Interrupted: res.Interrupted,
		FailedRuns: append([]FailedRun{}, res.Failed...), InvalidCells: []SummaryInvalid{},
		Plots: []SummaryPlot{}, Notes: append([]string{}, res.Notes...),
		Files: SummaryFiles{Runs: "runs.csv", Cells: "cells.csv", Index: "index.html"},
		Shard: res.Shard, Shards: res.Shards, SweepDigest: res.Digest, PlotSpecs: []SummaryPlotSpec{}, WallNs: res.WallNs, CPUNs: res.CPUNs}
	for _, a := range res.Axes {
		s.Axes = append(s.Axes, SummaryAxis{Name: a.Name, Values: a.Values})
	}
	s.Cells.Total = len(res.Cells)
	for _, c := range res.Cells {
		if c.Invalid != "" {
			s.Cells.Invalid++
			s.InvalidCells = append(s.InvalidCells, SummaryInvalid{Cell: c.ID, Values: c.Values, Reason: c.Invalid})
			continue
		}
		s.Runs.Planned += res.Seeds
		if c.Runs > 0 {
			s.Cells.Ran++
		}
		sc := SummaryCell{Cell: c.ID, Values: c.Values, FirstSeed: c.Seed, Runs: c.Runs, Failed: c.Failed}
		if c.Runs > 0 {
			sc.Metrics = map[string]SummaryStat{}
			names := make([]string, 0, len(c.Metrics))
			for m := range c.Metrics { // kafkasim:orderless: sorted below
				names = append(names, m)
			}
			sort.Strings(names)
			for _, m := range names {
				st := c.Metrics[m]
				if plotFinite(st.Mean) && plotFinite(st.Lo) && plotFinite(st.Hi) { // JSON has no NaN
					sc.Metrics[m] = SummaryStat{Mean: st.Mean, Lo: st.Lo, Hi: st.Hi}
				}
			}
		}
		s.CellResults = append(s.CellResults, sc)
		for _, r := range res.Records[c.ID] {
			s.Runs.Finished++
			switch r.Verdict {
			case runner.Pass:
				s.Runs.Passed++
			case runner.Liveness:
				s.Runs.Liveness++
			case runner.Crash:
				s.Runs.Crashed++
			default:
				s.Runs.Failed++
			}
		}
	}
	s.Runs.Now, s.Runs.Resumed = res.Runs, res.Resumed
	if res.Planned > 0 { // a shard plans its share of the runs
		s.Runs.Planned = res.Planned
	}
	for _, p := range res.Plots {
		s.Plots = append(s.Plots, SummaryPlot{Name: p.Name, Title: p.Title, PNG: p.PNG, SVG: p.SVG})
	}
	switch {
	case s.Runs.Crashed > 0:
		s.ExitCode = 3
	case s.Runs.Failed+s.Runs.Liveness > 0:
		s.ExitCode = 1
	}
	return s
}

// writeFileAtomic writes a file through a temporary one, so that a reader
// never sees half of it.
func writeFileAtomic(path string, write func(*bufio.Writer) error) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	err = write(w)
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return os.Rename(tmp, path)
}
