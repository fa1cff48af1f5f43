package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress reports a long command's advance: a bar when stderr is a
// terminal, a plain line every few seconds otherwise (CI logs), nothing
// with --quiet or for runs that end quickly.
type progress struct {
	w        io.Writer
	bar      *progressbar.ProgressBar
	label    string
	unit     string
	started  time.Time
	lastLine time.Time
	quiet    bool
}

// plainEvery is how often plain progress lines are printed.
const plainEvery = 5 * time.Second

func newProgress(stderr io.Writer, quiet bool, label, unit string, total int64) *progress {
	p := &progress{w: stderr, label: label, unit: unit, started: time.Now(), quiet: quiet}
	p.lastLine = p.started
	if quiet {
		return p
	}
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		opts := []progressbar.Option{
			progressbar.OptionSetWriter(stderr),
			progressbar.OptionSetDescription(label),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(200 * time.Millisecond),
			progressbar.OptionClearOnFinish(),
		}
		if !p.wallClock() {
			opts = append(opts, progressbar.OptionSetItsString(unit), progressbar.OptionShowIts())
		}
		p.bar = progressbar.NewOptions64(total, opts...)
	}
	return p
}

// set reports done out of total, with an extra note (failures so far).
func (p *progress) set(done, total int64, note string) {
	if p.quiet {
		return
	}
	if p.bar != nil {
		if note != "" {
			p.bar.Describe(p.label + " " + note)
		}
		p.bar.Set64(done)
		return
	}
	now := time.Now()
	if now.Sub(p.lastLine) < plainEvery {
		return
	}
	p.lastLine = now
	elapsed := now.Sub(p.started)
	line := fmt.Sprintf("%s: %d/%d %s", p.label, done, total, p.unit)
	switch {
	case p.wallClock():
		line += fmt.Sprintf(", about %v left", time.Duration(total-done)*time.Second)
	case done > 0 && total > done:
		eta := time.Duration(float64(elapsed) / float64(done) * float64(total-done))
		line += fmt.Sprintf(", %.1f %s/s, about %v left", float64(done)/elapsed.Seconds(), p.unit, eta.Round(time.Second))
	}
	if note != "" {
		line += ", " + note
	}
	fmt.Fprintln(p.w, line)
}

// wallClock: the progress counts seconds of wall time (a campaign bounded
// by --time), whose rate says nothing.
func (p *progress) wallClock() bool { return p.unit == "s" }

func (p *progress) finish() {
	if p.bar != nil {
		p.bar.Finish()
	}
}
