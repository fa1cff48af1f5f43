package runner

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/klauspost/compress/gzip"

	"kafkasim/godview"
	"kafkasim/history"
	"kafkasim/internal/jsonstr"
	"kafkasim/reports"
	"kafkasim/sim"
)

// The run store (docs/run-store.md): OUT/<scenario>/seed-<N>/ holds scenario.yaml,
// history.jsonl.gz, trace.jsonl.gz, summary.json, final-state.json, report.html and the plots,
// and for a run that was checked godview.jsonl, the facts its checker was given.
// A run writes into a hidden staging folder beside its final place and
// renames it at the end, so that an interrupted run leaves no half-written
// store where a finished one is expected.

// Store is a run folder being written.
type Store struct {
	Dir string // the final folder
	// Replaced: Finish replaced an earlier run's store at Dir (the same
	// scenario and seed run before).
	Replaced bool
	staging  string
	trace    *TraceFile
	// history and plots are the files being written on goroutines of
	// their own (Recorded), nil until started: their outcome arrives when
	// they are complete.
	history chan error
	plots   chan plotsDone
}

// RunDir is where a run of a scenario with a seed is stored.
func RunDir(out, scenario string, seed uint64) string {
	return filepath.Join(out, scenario, "seed-"+strconv.FormatUint(seed, 10))
}

// CreateStore prepares the staging folder and the trace file in it.
func CreateStore(out, scenario string, seed uint64) (*Store, error) {
	dir := RunDir(out, scenario, seed)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, err
	}
	staging, err := os.MkdirTemp(filepath.Dir(dir), ".seed-"+strconv.FormatUint(seed, 10)+"-*")
	if err != nil {
		return nil, err
	}
	tf, err := CreateTrace(filepath.Join(staging, "trace.jsonl.gz"))
	if err != nil {
		os.RemoveAll(staging)
		return nil, err
	}
	return &Store{Dir: dir, staging: staging, trace: tf}, nil
}

// SpillDir is where the run's history may spill (Options.HistorySpill):
// beside the run store, on the disk it is written to.
func (s *Store) SpillDir() string { return s.staging }

// Trace is the sink the run writes its trace to.
func (s *Store) Trace() *TraceFile { return s.trace }

// Recorded starts writing what the run recorded into the store, each file
// on a goroutine of its own, as soon as it is complete
// (Options.BeforeChecks): the history and the plots then share the
// checks' wait rather than adding theirs after it. Finish (or Abort) waits
// for them. The files are the same as Finish alone would write.
func (s *Store) Recorded(rec Recorded) {
	s.writeHistory(rec.History)
	s.writePlots(rec.Plots)
}

// writeHistory starts writing the history, unless it was started already.
func (s *Store) writeHistory(h *history.Recorder) {
	if s.history != nil {
		return
	}
	s.history = make(chan error, 1)
	go func() { s.history <- writeHistory(filepath.Join(s.staging, history.StoreFile), h) }()
}

// plotsDone is what writing the plots gave.
type plotsDone struct {
	plots []reports.Plot
	err   error
}

// writePlots starts drawing the plots of rd, unless it was started
// already.
func (s *Store) writePlots(rd *reports.Run) {
	if s.plots != nil {
		return
	}
	s.plots = make(chan plotsDone, 1)
	go func() {
		plots, err := reports.WritePlots(s.staging, rd)
		s.plots <- plotsDone{plots, err}
	}()
}

// written waits for the files Recorded (or write) started and returns the
// history's error and the plots.
func (s *Store) written() (historyErr error, plots plotsDone) {
	if s.history != nil {
		historyErr = <-s.history
		s.history <- historyErr // a second wait gets the same answer
	}
	return historyErr, s.plotted()
}

// plotted waits for the plots, when started.
func (s *Store) plotted() plotsDone {
	if s.plots == nil {
		return plotsDone{}
	}
	p := <-s.plots
	s.plots <- p
	return p
}

// Abort removes the staging folder, and the scenario's folder too when the
// run was its first and left it empty.
func (s *Store) Abort() {
	s.written()
	s.trace.Close(0, 0)
	os.RemoveAll(s.staging)
	os.Remove(filepath.Dir(s.Dir)) // fails, as it should, unless empty
}

// Finish writes the rest of the store and moves it into place.
func (s *Store) Finish(res *Result, version string) error {
	if err := s.trace.Close(res.TraceHash, res.Events); err != nil {
		return err
	}
	if err := s.write(res, version); err != nil {
		os.RemoveAll(s.staging)
		return err
	}
	if _, err := os.Lstat(s.Dir); err == nil {
		s.Replaced = true
	}
	if err := os.RemoveAll(s.Dir); err != nil {
		return err
	}
	return os.Rename(s.staging, s.Dir)
}

// write writes every file but the trace. The history and the plots are
// written on goroutines of their own (unless Recorded started them during
// the checks) while the other files are: each file is what it would be
// alone, whatever finishes first.
func (s *Store) write(res *Result, version string) (err error) {
	s.writeHistory(res.History)
	rd := res.ReportData(version)
	s.writePlots(rd)
	// Waited for on every path: nothing may still write into the staging
	// folder when the caller removes or renames it.
	defer func() {
		if herr, _ := s.written(); err == nil {
			err = herr
		}
		// A history read back wrong from its spill file (written
		// above, and checked) makes no run store.
		if err == nil && res.History != nil {
			err = res.History.Err()
		}
	}()
	resolved, err := res.Scenario.Resolved()
	if err != nil {
		return err
	}
	resolved = append([]byte("# Replay this run: kafkasim replay <this run's folder>\n"), resolved...)
	if err := os.WriteFile(filepath.Join(s.staging, "scenario.yaml"), resolved, 0o644); err != nil {
		return err
	}
	if err := writeFacts(filepath.Join(s.staging, godview.StoreFile), res); err != nil {
		return err
	}
	sum, err := json.MarshalIndent(res.Summary(version), "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(s.staging, "summary.json"), append(sum, '\n'), 0o644); err != nil {
		return err
	}
	final, err := os.Create(filepath.Join(s.staging, "final-state.json"))
	if err != nil {
		return err
	}
	enc := json.NewEncoder(final)
	enc.SetIndent("", "  ")
	if err := enc.Encode(reports.FinalState{Topics: res.FinalTopics, Partitions: rd.Final, Groups: res.FinalGroups, Transactions: res.FinalTransactions}); err != nil {
		final.Close()
		return err
	}
	if err := final.Close(); err != nil {
		return err
	}
	done := s.plotted()
	plots := done.plots
	if done.err != nil {
		return fmt.Errorf("plots: %w", done.err)
	}
	f, err := os.Create(filepath.Join(s.staging, "report.html"))
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	if err := reports.WriteHTML(w, rd, plots, s.staging); err != nil {
		f.Close()
		return fmt.Errorf("report: %w", err)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeFacts writes the god view's facts the run's checker was given, so
// that check RUN_DIR judges the history as the run did; a run that was not
// checked (the simulator failed) has none.
func writeFacts(path string, res *Result) error {
	if res.Report == nil || res.Verdict == Crash {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := godview.WriteJSONL(f, res.Happened); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeHistory writes the history gzip-compressed: a long run's JSON Lines
// take hundreds of megabytes (385 MB for 12 simulated minutes at 1,000
// records/s), eight times what they compress to.
func writeHistory(path string, h *history.Recorder) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	zw := history.NewCompressedWriter(f)
	w := bufio.NewWriterSize(zw, 1<<16)
	var buf []byte
	var werr error
	if h != nil {
		h.Each(func(op *history.Op) {
			if werr != nil {
				return
			}
			buf = history.AppendJSON(buf[:0], op)
			buf = append(buf, '\n')
			_, werr = w.Write(buf)
		})
	}
	if werr == nil {
		werr = w.Flush()
	}
	if err := zw.Close(); werr == nil {
		werr = err
	}
	if err := f.Close(); werr == nil {
		werr = err
	}
	return werr
}

// TraceFile writes trace records as gzipped JSON lines, streaming, and ends
// with a line holding the trace hash.
//
// The records are gathered in chunks that a goroutine of the file's own
// writes as JSON lines, compresses and writes out while the run goes on:
// formatting and compressing a line per event took a third of a traced
// run's time. The simulation stays on its one
// goroutine (the determinism rule, docs/architecture.md); the chunks reach the compressor in order,
// so the file's bytes are the same as compressing them in line. A few
// chunks circulate, so a compressor behind holds the run back rather than
// memory growing.
type TraceFile struct {
	f    *os.File
	out  *bufio.Writer // between gz and f: the compressor writes blocks of a few hundred bytes, a system call each
	gz   *gzip.Writer
	cur  []byte      // lines not yet handed over
	full chan []byte // chunks for the compressor, in order
	free chan []byte // chunks it is done with
	done chan struct{}
	werr error // the compressor's first error; read once done is closed
	n    uint64
	err  error
}

const (
	traceChunkBytes = 256 << 10
	traceChunks     = 4
)

// CreateTrace opens a trace file. Close must be called, which also ends the
// compressor.
func CreateTrace(path string) (*TraceFile, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	// klauspost's gzip writes the same format as the standard library's
	// (any gzip reader reads it) at a third of its cost at BestSpeed.
	out := bufio.NewWriterSize(f, 1<<20)
	gz, _ := gzip.NewWriterLevel(out, gzip.BestSpeed)
	t := &TraceFile{f: f, out: out, gz: gz, cur: make([]byte, 0, traceChunkBytes),
		full: make(chan []byte, traceChunks), free: make(chan []byte, traceChunks), done: make(chan struct{})}
	for range traceChunks - 1 {
		t.free <- make([]byte, 0, traceChunkBytes)
	}
	go t.compress()
	return t, nil
}

func (t *TraceFile) compress() {
	defer close(t.done)
	var lines []byte
	for b := range t.full {
		lines = formatTrace(lines[:0], b)
		if t.werr == nil {
			_, t.werr = t.gz.Write(lines)
		}
		t.free <- b[:0]
	}
}

// A chunk holds records as the run handed them over, each a tag and its
// fields: the run only copies them, and the compressor's goroutine writes
// them as JSON lines.
const (
	traceTagRecord = 0 // step, at, then kind, node, from and detail as texts
	traceTagLine   = 1 // a text written as it is (the hash line)
)

// appendText appends a length and s.
func appendText[S ~string | ~[]byte](b []byte, s S) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// formatTrace appends the JSON lines of a chunk's records to out.
func formatTrace(out, chunk []byte) []byte {
	k := 0
	uvarint := func() uint64 {
		v, n := binary.Uvarint(chunk[k:])
		k += n
		return v
	}
	text := func() []byte {
		n := int(uvarint())
		k += n
		return chunk[k-n : k]
	}
	for k < len(chunk) {
		tag := chunk[k]
		k++
		if tag == traceTagLine {
			out = append(out, text()...)
			continue
		}
		step := uvarint()
		at, n := binary.Varint(chunk[k:])
		k += n
		kind, node, from, detail := text(), text(), text(), text()
		out = append(out, `{"step":`...)
		out = strconv.AppendUint(out, step, 10)
		out = append(out, `,"at_ns":`...)
		out = strconv.AppendInt(out, at, 10)
		out = append(out, `,"kind":`...)
		out = jsonstr.Append(out, kind)
		if len(node) > 0 {
			out = append(out, `,"node":`...)
			out = jsonstr.Append(out, node)
		}
		if len(from) > 0 {
			out = append(out, `,"from":`...)
			out = jsonstr.Append(out, from)
		}
		if len(detail) > 0 {
			out = append(out, `,"detail":`...)
			out = jsonstr.Append(out, detail)
		}
		out = append(out, "}\n"...)
	}
	return out
}

var _ sim.DetailSink = (*TraceFile)(nil)

// Record writes one record.
func (t *TraceFile) Record(r sim.TraceRecord) { t.record(r, nil) }

// RecordDetail writes one record whose detail comes as bytes
// (sim.DetailSink).
func (t *TraceFile) RecordDetail(r sim.TraceRecord, detail []byte) { t.record(r, detail) }

func (t *TraceFile) record(r sim.TraceRecord, detail []byte) {
	if t.f == nil {
		return
	}
	b := append(t.cur, traceTagRecord)
	b = binary.AppendUvarint(b, r.Step)
	b = binary.AppendVarint(b, int64(r.At))
	b = appendText(b, r.Kind)
	b = appendText(b, r.Node)
	b = appendText(b, r.From)
	if len(detail) > 0 {
		b = appendText(b, detail)
	} else {
		b = appendText(b, r.Detail)
	}
	t.n++
	if len(b) >= traceChunkBytes {
		t.full <- b
		b = <-t.free
	}
	t.cur = b
}

// Close ends the trace with its hash, waits for the compressor and closes
// the file.
func (t *TraceFile) Close(hash, events uint64) error {
	if t.f == nil {
		return t.err
	}
	t.cur = append(t.cur, traceTagLine)
	t.cur = appendText(t.cur, fmt.Sprintf("{\"trace_hash\":\"%016x\",\"events\":%d,\"records\":%d}\n", hash, events, t.n))
	t.full <- t.cur
	close(t.full)
	<-t.done
	t.cur = nil
	t.err = t.werr
	for _, step := range []func() error{t.gz.Close, t.out.Flush, t.f.Close} {
		if err := step(); err != nil && t.err == nil {
			t.err = err
		}
	}
	t.f = nil
	return t.err
}
