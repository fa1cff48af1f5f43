package reports

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
)

//go:embed report.tmpl
var reportTemplate string

// reportPage is parsed once; html/template escapes every value by context
// (text, attribute, URL, srcdoc), which matters because record values,
// process names and porcupine's HTML all come from the run.
var reportPage = template.Must(template.New("report").Parse(reportTemplate))

// WriteHTML writes report.html: one self-contained page (inline CSS, plots
// embedded as data: URIs read from dir, no scripts of its own) with the
// verdict, expectations, figures, anomalies and their evidence, invariants,
// the fault and leadership timeline, the plots, the final partition state,
// porcupine's visualisations and the effective configuration.
func WriteHTML(w io.Writer, r *Run, plots []Plot, dir string) error {
	if r == nil {
		r = &Run{}
	}
	if err := reportPage.Execute(w, newPage(r, plots, dir)); err != nil {
		return fmt.Errorf("report.html: %w", err)
	}
	return nil
}
