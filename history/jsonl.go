package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"kafkasim/internal/jsonstr"
)

// AppendJSON writes op as one JSON line (without the newline), with exactly
// the fields the history format names for its f, in a fixed order: histories of one
// seed are byte-identical.
func AppendJSON(buf []byte, o *Op) []byte {
	buf = append(buf, `{"index":`...)
	buf = strconv.AppendInt(buf, o.Index, 10)
	buf = append(buf, `,"time":`...)
	buf = strconv.AppendInt(buf, o.Time, 10)
	buf = append(buf, `,"process":`...)
	buf = jsonstr.Append(buf, o.Process)
	buf = append(buf, `,"type":"`...)
	buf = append(buf, o.Type.String()...)
	buf = append(buf, `","f":`...)
	buf = jsonstr.Append(buf, o.F)
	buf = append(buf, `,"value":`...)
	buf = appendValue(buf, &o.Value)
	return append(buf, '}')
}

type fieldWriter struct {
	buf   []byte
	first bool
}

func (w *fieldWriter) name(n string) {
	if !w.first {
		w.buf = append(w.buf, ',')
	}
	w.first = false
	w.buf = jsonstr.Append(w.buf, n)
	w.buf = append(w.buf, ':')
}

func (w *fieldWriter) str(n, v string) {
	w.name(n)
	w.buf = jsonstr.Append(w.buf, v)
}

func (w *fieldWriter) int(n string, v int64) {
	w.name(n)
	w.buf = strconv.AppendInt(w.buf, v, 10)
}

// offsetMap writes a {"topic-partition": offset} field, keys sorted; nil
// writes nothing.
func (w *fieldWriter) offsetMap(n string, m map[string]int64) {
	if m == nil {
		return
	}
	w.name(n)
	keys := make([]string, 0, len(m))
	for k := range m { // kafkasim:orderless: sorted below
		keys = append(keys, k)
	}
	sort.Strings(keys)
	ow := fieldWriter{buf: append(w.buf, '{'), first: true}
	for _, k := range keys {
		ow.int(k, m[k])
	}
	w.buf = append(ow.buf, '}')
}

func appendValue(buf []byte, v *Value) []byte {
	w := fieldWriter{buf: append(buf, '{'), first: true}
	x := v.Ext
	if x != nil && x.Group != "" {
		w.str("group", x.Group)
	}
	if x != nil && x.TransactionalID != "" {
		w.str("transactional_id", x.TransactionalID)
	}
	if v.Topic != "" {
		w.str("topic", v.Topic)
	}
	if v.Partition >= 0 {
		w.int("partition", int64(v.Partition))
	}
	if v.HasKey {
		w.str("key", v.Key)
	}
	if v.Value != "" {
		w.str("value", v.Value)
	}
	if v.Offset >= 0 {
		w.int("offset", v.Offset)
	}
	if v.Isolation != "" {
		w.str("isolation", v.Isolation)
	}
	if v.Final {
		w.name("final")
		w.buf = append(w.buf, "true"...)
	}
	if v.HasRecords || len(v.Records) > 0 {
		w.name("records")
		w.buf = append(w.buf, '[')
		for i, r := range v.Records {
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			rw := fieldWriter{buf: append(w.buf, '{'), first: true}
			rw.str("topic", r.Topic)
			rw.int("partition", int64(r.Partition))
			rw.int("offset", r.Offset)
			if r.HasKey {
				rw.str("key", r.Key)
			}
			rw.str("value", r.Value)
			w.buf = append(rw.buf, '}')
		}
		w.buf = append(w.buf, ']')
	}
	if x != nil {
		if x.Offsets != nil {
			w.name("offsets")
			keys := make([]string, 0, len(x.Offsets))
			for k := range x.Offsets {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			ow := fieldWriter{buf: append(w.buf, '{'), first: true}
			for _, k := range keys {
				ow.int(k, x.Offsets[k])
			}
			w.buf = append(ow.buf, '}')
		}
		w.offsetMap("log_start_offsets", x.LogStartOffsets)
		w.offsetMap("positions", x.Positions)
		w.offsetMap("end_offsets", x.EndOffsets)
		if x.Partitions != nil {
			w.name("partitions")
			w.buf = append(w.buf, '[')
			for i, p := range x.Partitions {
				if i > 0 {
					w.buf = append(w.buf, ',')
				}
				w.buf = jsonstr.Append(w.buf, p)
			}
			w.buf = append(w.buf, ']')
		}
		if x.Generation >= 0 {
			w.int("generation", int64(x.Generation))
		}
		if x.MemberID != "" {
			w.str("member_id", x.MemberID)
		}
		if x.HasApplied {
			w.name("applied")
			if x.Applied {
				w.buf = append(w.buf, "true"...)
			} else {
				w.buf = append(w.buf, "false"...)
			}
		}
		if x.Source != nil {
			w.name("source")
			sw := fieldWriter{buf: append(w.buf, '{'), first: true}
			sw.str("topic", x.Source.Topic)
			sw.int("partition", int64(x.Source.Partition))
			sw.int("offset", x.Source.Offset)
			w.buf = append(sw.buf, '}')
		}
		if x.Producer != nil {
			if x.Producer.ID >= 0 {
				w.int("producer_id", x.Producer.ID)
			}
			if x.Producer.Epoch >= 0 {
				w.int("producer_epoch", int64(x.Producer.Epoch))
			}
		}
		if x.Sends != nil {
			w.name("sends")
			w.buf = append(w.buf, '[')
			for i, s := range x.Sends {
				if i > 0 {
					w.buf = append(w.buf, ',')
				}
				sw := fieldWriter{buf: append(w.buf, '{'), first: true}
				sw.str("topic", s.Topic)
				if s.Partition >= 0 {
					sw.int("partition", int64(s.Partition))
				}
				if s.HasKey {
					sw.str("key", s.Key)
				}
				sw.str("value", s.Value)
				if s.Offset >= 0 {
					sw.int("offset", s.Offset)
				}
				w.buf = append(sw.buf, '}')
			}
			w.buf = append(w.buf, ']')
		}
	}
	if v.Error != "" {
		w.str("error", v.Error)
	}
	return append(w.buf, '}')
}

// Write writes ops as JSON Lines.
func Write(w io.Writer, ops []Op) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	var line []byte
	for i := range ops {
		line = AppendJSON(line[:0], &ops[i])
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// LinesMaxBytes bounds one line of a history (a poll of many records).
const LinesMaxBytes = 64 << 20

// ParseError is a malformed line: where, and what is wrong.
type ParseError struct {
	Line  int
	Field string
	Msg   string
}

func (e *ParseError) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("line %d: %s: %s", e.Line, e.Field, e.Msg)
	}
	return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
}

type wireRecord struct {
	Topic     *string          `json:"topic"`
	Partition *int32           `json:"partition"`
	Offset    *int64           `json:"offset"`
	Key       *string          `json:"key"`
	Value     *json.RawMessage `json:"value"`
}

type wireValue struct {
	Topic           string           `json:"topic"`
	Partition       *int32           `json:"partition"`
	Key             *string          `json:"key"`
	Value           *json.RawMessage `json:"value"`
	Offset          *int64           `json:"offset"`
	TransactionalID string           `json:"transactional_id"`
	Isolation       string           `json:"isolation"`
	Group           string           `json:"group"`
	Final           bool             `json:"final"`
	Records         *[]wireRecord    `json:"records"`
	Offsets         map[string]int64 `json:"offsets"`
	LogStartOffsets map[string]int64 `json:"log_start_offsets"`
	Positions       map[string]int64 `json:"positions"`
	EndOffsets      map[string]int64 `json:"end_offsets"`
	Generation      *int32           `json:"generation"`
	MemberEpoch     *int32           `json:"member_epoch"`
	MemberID        string           `json:"member_id"`
	Applied         *bool            `json:"applied"`
	Partitions      []string         `json:"partitions"`
	Sends           []wireRecord     `json:"sends"`
	Source          *wireSource      `json:"source"`
	ProducerID      *int64           `json:"producer_id"`
	ProducerEpoch   *int32           `json:"producer_epoch"`
	Error           string           `json:"error"`
}

type wireSource struct {
	Topic     *string `json:"topic"`
	Partition *int32  `json:"partition"`
	Offset    *int64  `json:"offset"`
}

type wireOp struct {
	Index   *int64          `json:"index"`
	Time    *int64          `json:"time"`
	Process json.RawMessage `json:"process"`
	Type    *string         `json:"type"`
	F       *string         `json:"f"`
	Value   *wireValue      `json:"value"`
}

// jsonKind names what a Go type decodes from, in JSON's words.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer of " + strconv.Itoa(t.Bits()) + " bits"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return t.String()
}

// valueString accepts a JSON string, or a number (recorders that write
// integer values), as the record's value.
func valueString(raw *json.RawMessage) (string, bool) {
	if raw == nil {
		return "", false
	}
	var s string
	if json.Unmarshal(*raw, &s) == nil {
		return s, true
	}
	var n json.Number
	if json.Unmarshal(*raw, &n) == nil {
		return n.String(), true
	}
	return "", false
}

// Decoder reads a history line by line, validating each. Lines of the
// usual shape take a fast path (fastjson.go); others, and every malformed
// line, go through encoding/json.
type Decoder struct {
	r       io.Reader
	sc      *bufio.Scanner // once started
	readErr error          // reading r failed
	line    int
	intern  interner
	// What the lines so far imply for the next: indexes increase, and a
	// send completes once, in the process that invoked it.
	lastIndex int64
	sends     map[string]sendPair // held in the map, not pointed to: one a send of a long history
}

// sendPair is where a send stands: invoked by process, completed or not;
// shared when more than one process sent the value (the checker reports
// that: values must be unique), and then not paired here.
type sendPair struct {
	process string
	done    bool
	shared  bool
}

// NewDecoder reads from r, a history in JSON Lines or a gzip stream of one.
func NewDecoder(r io.Reader) *Decoder {
	return &Decoder{r: r, intern: interner{m: map[string]string{}}, lastIndex: -1 << 63, sends: map[string]sendPair{}}
}

// start looks at the input's first bytes (a gzip stream or not), which
// reading from a pipe waits for: the first Next does.
func (d *Decoder) start() error {
	r, err := uncompressed(d.r)
	if err != nil {
		return d.readError(err)
	}
	d.sc = bufio.NewScanner(&failed{r: r, err: &d.readErr})
	d.sc.Buffer(make([]byte, 1<<16), LinesMaxBytes)
	return nil
}

// failed keeps the first error reading failed with: the scanner hands out
// the text before it as a last line, which a stream cut short ends in the
// middle of, and the cut, not the half line, is what to report.
type failed struct {
	r   io.Reader
	err *error
}

func (f *failed) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err != nil && err != io.EOF && *f.err == nil {
		*f.err = err
	}
	return n, err
}

// readError words an error reading the line after the last one read: a
// malformed compressed stream is malformed input, like a malformed line.
func (d *Decoder) readError(err error) error {
	var ge *gzipError
	switch {
	case err == bufio.ErrTooLong:
		return &ParseError{Line: d.line + 1, Msg: fmt.Sprintf("line longer than %d bytes", LinesMaxBytes)}
	case errors.As(err, &ge):
		return &ParseError{Line: d.line + 1, Msg: ge.Error()}
	}
	return err
}

// follows checks what a line must be given the lines before it (docs/history.md:
// one history, in order, in invocation/completion pairs) and the ranges of
// its numbers.
func (d *Decoder) follows(op *Op) error {
	fail := func(field, format string, args ...any) error {
		return &ParseError{Line: d.line, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	if !IsOperation(op.F) {
		return fail("f", "%q is not an operation of the history format (%s)", op.F, strings.Join(Operations, ", "))
	}
	if op.Index <= d.lastIndex {
		return fail("index", "%d does not follow the previous line's %d: a history's lines are in increasing index order", op.Index, d.lastIndex)
	}
	d.lastIndex = op.Index
	v := &op.Value
	if v.Partition < -1 {
		return fail("value.partition", "%d is negative", v.Partition)
	}
	if v.Offset < -1 {
		return fail("value.offset", "%d is negative", v.Offset)
	}
	for i, r := range v.Records {
		if r.Partition < 0 || r.Offset < 0 {
			return fail(fmt.Sprintf("value.records[%d]", i), "partition %d, offset %d: neither may be negative", r.Partition, r.Offset)
		}
	}
	if op.F != FSend {
		return nil
	}
	p, known := d.sends[v.Value]
	switch {
	case op.Type == Invoke:
		// A value sent again is the checker's to report (values must be
		// unique), not a malformed line: the new send is the one to pair,
		// unless another process sent it too.
		shared := known && (p.shared || p.process != op.Process)
		d.sends[v.Value] = sendPair{process: op.Process, shared: shared}
	case known && p.shared:
	case !known:
		return fail("type", "%s of a send of %q that was never invoked: operations come in invocation/completion pairs", op.Type, v.Value)
	case p.process != op.Process:
		return fail("process", "%s completes a send of %q that process %s invoked", op.Process, v.Value, p.process)
	case p.done:
		return fail("type", "%s of a send of %q that already completed", op.Type, v.Value)
	default:
		p.done = true
		d.sends[v.Value] = p
	}
	return nil
}

// Next returns the next operation, io.EOF at the end, or a *ParseError.
// Blank lines are skipped.
func (d *Decoder) Next() (Op, error) {
	if d.sc == nil {
		if err := d.start(); err != nil {
			return Op{}, err
		}
	}
	for d.sc.Scan() {
		d.line++
		b := bytes.TrimSpace(d.sc.Bytes())
		if len(b) == 0 {
			continue
		}
		op, ok := parseFast(b, &d.intern)
		if !ok {
			var err error
			if op, err = parseLine(b, d.line); err != nil {
				if d.readErr != nil && !d.sc.Scan() {
					d.line-- // the last line, cut short by the error
					return Op{}, d.readError(d.readErr)
				}
				return Op{}, err
			}
		}
		if err := d.follows(&op); err != nil {
			return Op{}, err
		}
		return op, nil
	}
	if err := d.sc.Err(); err != nil {
		return Op{}, d.readError(err)
	}
	return Op{}, io.EOF
}

// notAnObject names what a valid JSON line holds when it is not an object
// ("" when it is one).
func notAnObject(b []byte) string {
	switch b[0] {
	case '{':
		return ""
	case '[':
		return "a list"
	case '"':
		return "a string"
	case 'n':
		return "null"
	case 't', 'f':
		return "true or false"
	}
	return "a number"
}

func parseLine(b []byte, line int) (Op, error) {
	in := b // invalid JSON goes to Unmarshal as is, to be worded
	if json.Valid(b) {
		if what := notAnObject(b); what != "" {
			return Op{}, &ParseError{Line: line, Msg: "not an operation: a line holds one JSON object, not " + what}
		}
		in = exact(b)
	}
	var w wireOp
	if err := json.Unmarshal(in, &w); err != nil {
		msg := err.Error()
		if se, ok := err.(*json.SyntaxError); ok {
			msg = fmt.Sprintf("invalid JSON at column %d: %v", se.Offset, err)
		}
		if te, ok := err.(*json.UnmarshalTypeError); ok {
			return Op{}, &ParseError{Line: line, Field: te.Field, Msg: fmt.Sprintf("expected %s, got %s", jsonKind(te.Type), te.Value)}
		}
		return Op{}, &ParseError{Line: line, Msg: msg}
	}
	missing := func(f string) error { return &ParseError{Line: line, Field: f, Msg: "missing"} }
	switch {
	case w.Index == nil:
		return Op{}, missing("index")
	case w.Type == nil:
		return Op{}, missing("type")
	case w.F == nil:
		return Op{}, missing("f")
	case len(w.Process) == 0 || string(w.Process) == "null":
		return Op{}, missing("process")
	}
	op := Op{Index: *w.Index, F: *w.F}
	if w.Time != nil {
		op.Time = *w.Time
	}
	var proc string
	if json.Unmarshal(w.Process, &proc) != nil {
		var n json.Number
		if json.Unmarshal(w.Process, &n) != nil {
			return Op{}, &ParseError{Line: line, Field: "process", Msg: "must be a string or a number"}
		}
		proc = n.String()
	}
	if proc == "" {
		return Op{}, &ParseError{Line: line, Field: "process", Msg: "empty"}
	}
	op.Process = proc
	t, ok := ParseType(*w.Type)
	if !ok {
		return Op{}, &ParseError{Line: line, Field: "type", Msg: fmt.Sprintf("%q is not invoke, ok, fail or info", *w.Type)}
	}
	op.Type = t
	op.Value = NoValue()
	if w.Value == nil {
		if op.F == FSend {
			return Op{}, &ParseError{Line: line, Field: "value", Msg: "a send needs a value"}
		}
		return op, nil
	}
	v := w.Value
	op.Value.Topic = v.Topic
	if v.Key != nil {
		op.Value.Key, op.Value.HasKey = *v.Key, true
	}
	if v.Partition != nil {
		op.Value.Partition = *v.Partition
	}
	if v.Offset != nil {
		op.Value.Offset = *v.Offset
	}
	if v.Value != nil {
		s, ok := valueString(v.Value)
		if !ok {
			return Op{}, &ParseError{Line: line, Field: "value.value", Msg: "must be a string or a number"}
		}
		op.Value.Value = s
	}
	op.Value.Isolation, op.Value.Final, op.Value.Error = v.Isolation, v.Final, v.Error
	if v.TransactionalID != "" || v.Group != "" || v.Offsets != nil || v.MemberID != "" || v.Partitions != nil ||
		v.Generation != nil || v.MemberEpoch != nil || v.Sends != nil || v.LogStartOffsets != nil || v.Positions != nil || v.EndOffsets != nil || v.Applied != nil ||
		v.Source != nil || v.ProducerID != nil || v.ProducerEpoch != nil {
		x := op.Value.X()
		x.TransactionalID, x.Group, x.Offsets, x.MemberID, x.Partitions = v.TransactionalID, v.Group, v.Offsets, v.MemberID, v.Partitions
		x.LogStartOffsets, x.Positions, x.EndOffsets = v.LogStartOffsets, v.Positions, v.EndOffsets
		if v.Applied != nil {
			x.HasApplied, x.Applied = true, *v.Applied
		}
		if v.Generation != nil {
			x.Generation = *v.Generation
		} else if v.MemberEpoch != nil {
			x.Generation = *v.MemberEpoch
		}
		if v.Source != nil {
			src := v.Source
			switch {
			case src.Topic == nil:
				return Op{}, &ParseError{Line: line, Field: "value.source.topic", Msg: "missing"}
			case src.Partition == nil || *src.Partition < 0:
				return Op{}, &ParseError{Line: line, Field: "value.source.partition", Msg: "missing or negative"}
			case src.Offset == nil || *src.Offset < 0:
				return Op{}, &ParseError{Line: line, Field: "value.source.offset", Msg: "missing or negative"}
			}
			x.Source = &Source{Topic: *src.Topic, Partition: *src.Partition, Offset: *src.Offset}
		}
		if v.ProducerID != nil || v.ProducerEpoch != nil {
			x.Producer = &ProducerEpoch{ID: -1, Epoch: -1}
			if v.ProducerID != nil {
				x.Producer.ID = *v.ProducerID
			}
			if v.ProducerEpoch != nil {
				x.Producer.Epoch = *v.ProducerEpoch
			}
		}
		if v.Sends != nil {
			x.Sends = []Send{}
			for i, r := range v.Sends {
				rec, err := r.record(line, fmt.Sprintf("value.sends[%d]", i), false)
				if err != nil {
					return Op{}, err
				}
				x.Sends = append(x.Sends, Send{Topic: rec.Topic, Partition: rec.Partition, Key: rec.Key, HasKey: rec.HasKey, Value: rec.Value, Offset: rec.Offset})
			}
		}
	}
	if v.Records != nil {
		op.Value.HasRecords = true
		for i, r := range *v.Records {
			rec, err := r.record(line, fmt.Sprintf("value.records[%d]", i), true)
			if err != nil {
				return Op{}, err
			}
			op.Value.Records = append(op.Value.Records, rec)
		}
	}
	if op.F == FSend && op.Value.Value == "" {
		return Op{}, &ParseError{Line: line, Field: "value.value", Msg: "a send needs a value"}
	}
	return op, nil
}

func (r wireRecord) record(line int, field string, full bool) (Record, error) {
	rec := Record{Partition: -1, Offset: -1}
	if r.Key != nil {
		rec.Key, rec.HasKey = *r.Key, true
	}
	if r.Topic == nil {
		return rec, &ParseError{Line: line, Field: field + ".topic", Msg: "missing"}
	}
	rec.Topic = *r.Topic
	if r.Partition != nil {
		rec.Partition = *r.Partition
	} else if full {
		return rec, &ParseError{Line: line, Field: field + ".partition", Msg: "missing"}
	}
	if r.Offset != nil {
		rec.Offset = *r.Offset
	} else if full {
		return rec, &ParseError{Line: line, Field: field + ".offset", Msg: "missing"}
	}
	s, ok := valueString(r.Value)
	if !ok {
		return rec, &ParseError{Line: line, Field: field + ".value", Msg: "missing or not a string"}
	}
	rec.Value = s
	return rec, nil
}

// ReadAll decodes a whole history.
func ReadAll(r io.Reader) ([]Op, error) {
	d := NewDecoder(r)
	var ops []Op
	for {
		op, err := d.Next()
		if err == io.EOF {
			return ops, nil
		}
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
	}
}
