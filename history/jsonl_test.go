package history

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestSpecExampleRoundTrips(t *testing.T) {
	// The example of the history format (docs/history.md), line for line.
	spec := `{"index":0,"time":1000000,"process":"p-0","type":"invoke","f":"send","value":{"topic":"orders","key":"k7","value":"p-0:17"}}
{"index":1,"time":3400000,"process":"p-0","type":"ok","f":"send","value":{"topic":"orders","partition":2,"key":"k7","value":"p-0:17","offset":41}}
{"index":2,"time":3500000,"process":"c-1","type":"invoke","f":"poll","value":{}}
{"index":3,"time":3600000,"process":"c-1","type":"ok","f":"poll","value":{"records":[{"topic":"orders","partition":2,"offset":41,"key":"k7","value":"p-0:17"}]}}
{"index":4,"time":3700000,"process":"c-1","type":"invoke","f":"commit","value":{"group":"billing","offsets":{"orders-2":42}}}
{"index":5,"time":3900000,"process":"c-1","type":"ok","f":"commit","value":{"group":"billing","offsets":{"orders-2":42}}}
`
	ops, err := ReadAll(strings.NewReader(spec))
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 6 || ops[1].Value.Offset != 41 || ops[1].Value.Partition != 2 || ops[1].Value.Key != "k7" || !ops[1].Value.HasKey {
		t.Fatalf("parsed %+v", ops[1])
	}
	if len(ops[3].Value.Records) != 1 || ops[3].Value.Records[0].Value != "p-0:17" || ops[5].Value.Ext.Offsets["orders-2"] != 42 {
		t.Fatalf("parsed %+v", ops[3])
	}
	var buf bytes.Buffer
	if err := Write(&buf, ops); err != nil {
		t.Fatal(err)
	}
	if buf.String() != spec {
		t.Fatalf("round trip differs:\n%s\nwant\n%s", buf.String(), spec)
	}
}

// A final poll says how far it read (positions) and the end it reads to
// (end_offsets), as docs/history.md's example does; both round-trip, and
// a final poll without them (an older history) reads as before.
func TestFinalPollPositionsRoundTrip(t *testing.T) {
	line := `{"index":13,"time":50001000000,"process":"kafkasim-final-0","type":"ok","f":"poll","value":{"isolation":"read_uncommitted","final":true,"records":[{"topic":"orders","partition":0,"offset":0,"key":"k19","value":"p-0:1"},{"topic":"orders","partition":0,"offset":1,"value":"p-0:3"}],"log_start_offsets":{"orders-0":0},"positions":{"orders-0":2},"end_offsets":{"orders-0":2}}}
`
	ops, err := ReadAll(strings.NewReader(line))
	if err != nil {
		t.Fatal(err)
	}
	if x := ops[0].Value.Ext; x == nil || x.Positions["orders-0"] != 2 || x.EndOffsets["orders-0"] != 2 || x.LogStartOffsets["orders-0"] != 0 {
		t.Fatalf("parsed %+v", ops[0].Value.Ext)
	}
	var buf bytes.Buffer
	if err := Write(&buf, ops); err != nil {
		t.Fatal(err)
	}
	if buf.String() != line {
		t.Fatalf("round trip differs:\n%s\nwant\n%s", buf.String(), line)
	}
	old := `{"index":1,"process":"f","type":"ok","f":"poll","value":{"final":true,"records":[],"log_start_offsets":{"orders-0":0}}}`
	ops, err = ReadAll(strings.NewReader(old))
	if err != nil {
		t.Fatal(err)
	}
	if x := ops[0].Value.Ext; x == nil || x.Positions != nil || x.EndOffsets != nil {
		t.Fatalf("an older final poll parsed %+v", ops[0].Value.Ext)
	}
}

func TestMalformedLinesNameTheLineAndField(t *testing.T) {
	cases := []struct {
		in, want string
	}{
		{`{"index":0,"process":"p","type":"invoke","f":"send","value":{"value":"x"}}` + "\n" + `{not json`, "line 2"},
		{`{"index":0,"process":"p","type":"sometimes","f":"send","value":{"value":"x"}}`, "line 1: type"},
		{`{"process":"p","type":"ok","f":"send"}`, "line 1: index: missing"},
		{`{"index":"zero","process":"p","type":"ok","f":"send"}`, "line 1: index"},
		{"\n\n" + `{"index":0,"process":"p","type":"ok","f":"poll","value":{"records":[{"topic":"t","offset":1,"value":"v"}]}}`, "line 3: value.records[0].partition: missing"},
		{`{"index":0,"process":"p","type":"invoke","f":"send","value":{"topic":"t"}}`, "line 1: value.value"},
	}
	for _, c := range cases {
		_, err := ReadAll(strings.NewReader(c.in))
		var pe *ParseError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want an error containing %q", c.in, err, c.want)
		}
	}
}

// A line the checker cannot judge is bad input, never skipped: an operation
// the format does not name (a "produce" skipped would let a history of
// nothing but writes pass), or a line that is not an operation at all.
func TestLinesThatAreNotOperationsAreRejected(t *testing.T) {
	inv := `{"index":0,"process":"p-0","type":"invoke","f":"send","value":{"topic":"t","value":"v"}}` + "\n"
	cases := []struct {
		in, want string
	}{
		{`{"index":0,"process":"p-0","type":"invoke","f":"produce","value":{"topic":"t","value":"v"}}`, `line 1: f: "produce" is not an operation of the history format (send, poll,`},
		{inv + `{"index":1,"process":"p-0","type":"ok","f":"Send","value":{"topic":"t","value":"v"}}`, `line 2: f: "Send" is not an operation`},
		{`{"index":0,"process":"p-0","type":"invoke","f":"","value":{}}`, `line 1: f: "" is not an operation`},
		// The slow path (an escape) says the same.
		{`{"index":0,"process":"p-0","type":"invoke","f":"pro\u0064uce","value":{}}`, `line 1: f: "produce" is not an operation`},
		{`{"index":0,"process":"p-0","type":"invoke","value":{}}`, "line 1: f: missing"},
		{`{"index":0,"process":"p-0","f":"poll","value":{}}`, "line 1: type: missing"},
		{`{"index":0,"type":"invoke","f":"poll","value":{}}`, "line 1: process: missing"},
		{`{"index":0,"process":"p-0","type":"done","f":"poll"}`, `line 1: type: "done" is not invoke, ok, fail or info`},
		{`{"index":0,"process":"p-0","type":"invoke","f":7}`, "line 1: f: expected a string"},
		{`null`, "line 1: not an operation: a line holds one JSON object, not null"},
		{inv + `"send"`, "line 2: not an operation: a line holds one JSON object, not a string"},
		{`42`, "line 1: not an operation: a line holds one JSON object, not a number"},
		{`true`, "line 1: not an operation: a line holds one JSON object, not true or false"},
		{`[{"index":0,"process":"p-0","type":"invoke","f":"poll"}]`, "line 1: not an operation: a line holds one JSON object, not a list"},
		{`nul`, "line 1: invalid JSON"},
	}
	for _, c := range cases {
		_, err := ReadAll(strings.NewReader(c.in))
		var pe *ParseError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want an error containing %q", c.in, err, c.want)
		}
	}
	// Every operation of the format reads, fast path or not.
	var in strings.Builder
	for i, f := range Operations {
		v := `{}`
		if f == FSend {
			v = `{"topic":"t","value":"v"}`
		}
		fmt.Fprintf(&in, `{"index":%d,"process":"p-0","type":"invoke","f":%q,"value":%s}`+"\n", 2*i, f, v)
		fmt.Fprintf(&in, `{"index":%d,"process":"p-0","type":"ok","f":"%s","value":%s,"recorder's own":{"x":[1]}}`+"\n", 2*i+1, strings.ReplaceAll(f, "e", `\u0065`), v)
	}
	ops, err := ReadAll(strings.NewReader(in.String()))
	if err != nil || len(ops) != 2*len(Operations) {
		t.Fatalf("%d operations, %v", len(ops), err)
	}
	for i, op := range ops {
		if op.F != Operations[i/2] {
			t.Fatalf("line %d: f %q, want %q", i+1, op.F, Operations[i/2])
		}
	}
}

func TestNumericValuesAndProcessesAreAccepted(t *testing.T) {
	// Jepsen's histories use integers for processes and values.
	in := `{"index":0,"time":1,"process":3,"type":"invoke","f":"send","value":{"topic":"t","value":17}}`
	ops, err := ReadAll(strings.NewReader(in))
	if err != nil || ops[0].Process != "3" || ops[0].Value.Value != "17" {
		t.Fatalf("got %+v, %v", ops, err)
	}
}

// docs/history.md: unknown fields are ignored. A key is the format's only as spelled:
// "OFFSET" or "Partition" is a recorder's own, not "offset" or "partition";
// an error that is not a string (Jepsen writes objects) is kept as its text.
func TestUnknownFieldsAreIgnoredExactly(t *testing.T) {
	in := `{"index":0,"process":"p-0","type":"invoke","f":"send","value":{"topic":"t","value":"v"}}
{"index":1,"process":"p-0","type":"ok","f":"send","value":{"topic":"t","partition":0,"value":"v","offset":0,"OFFSET":7,"Partition":"t-0","error":{"class":"TimeoutException"}},"Index":9}
{"index":2,"process":"p-0","type":"invoke","f":"send","value":{"topic":"t","value":"w"}}
{"index":3,"process":"p-0","type":"info","f":"send","value":{"topic":"t","value":"w","error":["not-enough-replicas"]}}
{"index":4,"process":"c","type":"ok","f":"poll","value":{"records":[{"topic":"t","partition":0,"offset":0,"value":"v","Offset":5,"VALUE":"x"}]}}
`
	ops, err := ReadAll(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if v := ops[1].Value; v.Offset != 0 || v.Partition != 0 || v.Error != `{"class":"TimeoutException"}` || ops[1].Index != 1 {
		t.Fatalf("ack decoded as %+v (index %d)", v, ops[1].Index)
	}
	if e := ops[3].Value.Error; e != `["not-enough-replicas"]` {
		t.Fatalf("error %q", e)
	}
	if r := ops[4].Value.Records[0]; r.Offset != 0 || r.Value != "v" {
		t.Fatalf("record %+v", r)
	}
}

// Lines that take the slow path (an escape, here) decode as the fast path
// would: of a key given twice the last counts, whole (encoding/json would
// merge two objects), and keys are the format's only as spelled.
func TestSlowPathKeepsTheLastOfARepeatedKey(t *testing.T) {
	in := `{"index":0,"process":"p-0","type":"invoke","f":"send","value":{"topic":"a","key":"k","value":"x"},"value":{"topic":"t","value":"\u0076","Key":"K"}}
{"index":1,"process":"c","type":"ok","f":"poll","value":{"records":[{"topic":"t","partition":0,"offset":1,"value":"v","offset":2,"x":{"offset":[3]}}],"error":{"a":[1, 2]}}}
`
	ops, err := ReadAll(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if v := ops[0].Value; v.Topic != "t" || v.Value != "v" || v.HasKey {
		t.Fatalf("decoded %+v", v)
	}
	if r := ops[1].Value.Records; len(r) != 1 || r[0].Offset != 2 || ops[1].Value.Error != `{"a":[1,2]}` {
		t.Fatalf("decoded %+v", ops[1].Value)
	}
}

// What a line must be given the lines before it, and the ranges of its
// numbers: each a one-line error naming the line and field.
func TestLinesFollowTheirHistory(t *testing.T) {
	inv := `{"index":0,"process":"p-0","type":"invoke","f":"send","value":{"topic":"t","value":"v"}}` + "\n"
	cases := []struct {
		in, want string
	}{
		{`{"index":0,"process":"p-0","type":"ok","f":"send","value":{"topic":"t","partition":0,"value":"v","offset":0}}`, "line 1: type: ok of a send of \"v\" that was never invoked"},
		{inv + `{"index":1,"process":"p-1","type":"ok","f":"send","value":{"topic":"t","partition":0,"value":"v","offset":0}}`, "line 2: process: p-1 completes a send of \"v\" that process p-0 invoked"},
		{inv + `{"index":1,"process":"p-0","type":"fail","f":"send","value":{"topic":"t","value":"v"}}` + "\n" +
			`{"index":2,"process":"p-0","type":"ok","f":"send","value":{"topic":"t","partition":0,"value":"v","offset":0}}`, "line 3: type: ok of a send of \"v\" that already completed"},
		{inv + `{"index":0,"process":"c","type":"invoke","f":"poll","value":{}}`, "line 2: index: 0 does not follow the previous line's 0"},
		{`{"index":0,"process":"c","type":"ok","f":"poll","value":{"records":[{"topic":"t","partition":-3,"offset":-7,"value":"v"}]}}`, "line 1: value.records[0]: partition -3, offset -7"},
		{`{"index":0,"process":null,"type":"ok","f":"crash"}`, "line 1: process: missing"},
		{`{"index":0,"process":"","type":"ok","f":"crash"}`, "line 1: process: empty"},
		{`[1,2]`, "line 1: not an operation: a line holds one JSON object, not a list"},
		{`{"index":0,"process":"c","type":"ok","f":"poll","value":{},"x":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`, "line 1"},
	}
	for _, c := range cases {
		_, err := ReadAll(strings.NewReader(c.in))
		var pe *ParseError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.120q: got %v, want an error containing %q", c.in, err, c.want)
		}
	}
	// Deep nesting within encoding/json's bound is an unknown field like any
	// other.
	deep := `{"index":0,"process":"c","type":"ok","f":"poll","value":{},"x":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}`
	if _, err := ReadAll(strings.NewReader(deep)); err != nil {
		t.Fatalf("5,000 nested lists: %v", err)
	}
}

// A value two processes sent is the checker's to report (values must be
// unique), not a malformed line: its completions are not paired.
func TestAValueSentByTwoProcessesIsNotMalformed(t *testing.T) {
	in := `{"index":0,"process":"p-0","type":"invoke","f":"send","value":{"topic":"t","value":"v"}}
{"index":1,"process":"p-1","type":"invoke","f":"send","value":{"topic":"t","value":"v"}}
{"index":2,"process":"p-0","type":"ok","f":"send","value":{"topic":"t","partition":0,"value":"v","offset":0}}
{"index":3,"process":"p-1","type":"ok","f":"send","value":{"topic":"t","partition":0,"value":"v","offset":1}}
`
	if ops, err := ReadAll(strings.NewReader(in)); err != nil || len(ops) != 4 {
		t.Fatalf("%d ops, %v", len(ops), err)
	}
}

// Keys, values and process names may hold any bytes: what is written must
// read back (Go's quoting wrote \x01, which JSON readers refuse).
func TestAnyTextRoundTripsThroughTheJSONLines(t *testing.T) {
	odd := "tab\tbell\x07 nul\x00 quote\" slash\\ brøker ✓ line\nend"
	ops := []Op{
		{Index: 0, Time: 1, Process: "p\x01", Type: Invoke, F: "send", Value: Value{Topic: "t\x7f", Partition: -1, Offset: -1, Key: odd, HasKey: true, Value: odd}},
		{Index: 1, Time: 2, Process: "c", Type: OK, F: "poll", Value: Value{Partition: -1, Offset: -1, Records: []Record{{Topic: "t", Partition: 0, Offset: 3, Key: odd, HasKey: true, Value: odd}}}},
	}
	var buf bytes.Buffer
	if err := Write(&buf, ops); err != nil {
		t.Fatal(err)
	}
	got, err := ReadAll(&buf)
	if err != nil {
		t.Fatalf("reading back: %v", err)
	}
	if got[0].Process != "p\x01" || got[0].Value.Topic != "t\x7f" || got[0].Value.Key != odd || got[0].Value.Value != odd {
		t.Fatalf("read back %+v", got[0])
	}
	if r := got[1].Value.Records; len(r) != 1 || r[0].Key != odd || r[0].Value != odd {
		t.Fatalf("read back %+v", got[1])
	}
}

// A side effect's ok says whether the store applied it; a line without
// the field leaves it unknown, which is not the same as false.
func TestSideEffectAppliedRoundTrips(t *testing.T) {
	for _, tc := range []struct {
		line         string
		has, applied bool
	}{
		{`{"index":0,"time":0,"process":"c","type":"ok","f":"side-effect","value":{"group":"g","topic":"t","partition":0,"key":"t-0-3","offset":3,"applied":false}}`, true, false},
		{`{"index":0,"time":0,"process":"c","type":"ok","f":"side-effect","value":{"group":"g","topic":"t","partition":0,"key":"t-0-3","offset":3,"applied":true}}`, true, true},
		{`{"index":0,"time":0,"process":"c","type":"ok","f":"side-effect","value":{"group":"g","topic":"t","partition":0,"key":"t-0-3","offset":3}}`, false, false},
	} {
		ops, err := ReadAll(strings.NewReader(tc.line + "\n"))
		if err != nil || len(ops) != 1 {
			t.Fatalf("%s: %v", tc.line, err)
		}
		x := ops[0].Value.Ext
		if x == nil || x.HasApplied != tc.has || x.Applied != tc.applied {
			t.Fatalf("%s: decoded %+v", tc.line, x)
		}
		if got := string(AppendJSON(nil, &ops[0])); got != tc.line {
			t.Fatalf("written back as\n%s\nnot\n%s", got, tc.line)
		}
	}
	if _, err := ReadAll(strings.NewReader(`{"index":0,"process":"c","type":"ok","f":"side-effect","value":{"applied":"yes"}}` + "\n")); err == nil || !strings.Contains(err.Error(), "applied") {
		t.Fatalf("a non-boolean applied: %v", err)
	}
}

func TestProcessorSendFieldsRoundTrip(t *testing.T) {
	line := `{"index":0,"time":0,"process":"etl-0","type":"invoke","f":"send","value":{"transactional_id":"etl-0","topic":"invoices","partition":1,"key":"k","value":"etl-0:1","offset":9,"source":{"topic":"orders","partition":2,"offset":41},"producer_id":4000,"producer_epoch":3}}`
	ops, err := ReadAll(strings.NewReader(line + "\n"))
	if err != nil || len(ops) != 1 {
		t.Fatalf("%v", err)
	}
	x := ops[0].Value.Ext
	if x == nil || x.Source == nil || *x.Source != (Source{Topic: "orders", Partition: 2, Offset: 41}) || x.Producer == nil || *x.Producer != (ProducerEpoch{ID: 4000, Epoch: 3}) {
		t.Fatalf("decoded %+v", x)
	}
	if got := string(AppendJSON(nil, &ops[0])); got != line {
		t.Fatalf("written back as\n%s\nnot\n%s", got, line)
	}
	bad := `{"index":0,"process":"e","type":"invoke","f":"send","value":{"topic":"o","value":"v","source":{"topic":"orders","partition":2}}}`
	if _, err := ReadAll(strings.NewReader(bad + "\n")); err == nil || !strings.Contains(err.Error(), "source.offset") {
		t.Fatalf("a source without an offset: %v", err)
	}
}
