// Package reports writes the run store: summary.json, the trace, plots and the
// self-contained report.html.
package reports
