package history

import (
	"bufio"
	"bytes"
	stdgzip "compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// FuzzDecoder: any input gives operations or a *ParseError naming a line,
// never a panic or a hang; every line it accepts is one JSON object naming
// an operation of the format, a type and a process; and what decodes writes
// back to JSON that decodes to the same operations. `go test -run '^$'
// -fuzz FuzzDecoder ./history/` explores further; the seed corpus
// and testdata/fuzz/FuzzDecoder run with every `go test`.
func FuzzDecoder(f *testing.F) {
	for _, s := range []string{
		`{"index":0,"time":1000000,"process":"p-0","type":"invoke","f":"send","value":{"topic":"orders","key":"k7","value":"p-0:17"}}`,
		`{"index":1,"time":3400000,"process":"p-0","type":"ok","f":"send","value":{"topic":"orders","partition":2,"key":"k7","value":"p-0:17","offset":41}}`,
		`{"index":3,"time":3600000,"process":"c-1","type":"ok","f":"poll","value":{"records":[{"topic":"orders","partition":2,"offset":41,"key":"k7","value":"p-0:17"}]}}`,
		`{"index":4,"process":"c-1","type":"invoke","f":"commit","value":{"group":"billing","offsets":{"orders-2":42}}}`,
		`{"index":5,"process":"t","type":"ok","f":"txn-commit","value":{"transactional_id":"t1","sends":[{"topic":"o","partition":0,"value":"v","offset":3}]}}`,
		`{"index":6,"process":7,"type":"info","f":"send","value":{"topic":"o","value":12}}`,
		`{"index":7,"process":"c","type":"ok","f":"assign","value":{"group":"g","partitions":["o-0"],"member_epoch":3,"member_id":"m"}}`,
		`{"index":8,"process":"c","type":"ok","f":"poll","value":{"final":true,"log_start_offsets":{"o-0":4},"records":[]}}`,
		`{"index":9,"process":"c","type":"ok","f":"poll","value":{"final":true,"positions":{"o-0":6},"end_offsets":{"o-0":9},"records":[]}}`,
		`{"index":10,"process":"c","type":"ok","f":"side-effect","value":{"group":"g","topic":"o","partition":0,"offset":3,"key":"o-0-3","member_id":"m","applied":false}}`,
		`{"index":9,"process":"c","type":"fail","f":"fetch-committed","value":{"group":"g","partitions":["o-0"],"error":{"code":27}}}`,
		`{"index":0,"process":"p","type":"invoke","f":"produce","value":{}}`,
		`{"index":0,"process":"p","type":"invoke","f":"s\u0065nd","value":{"topic":"o","value":"v","x":[{"y":null}]}}`,
		`{"index":`, `[]`, `{}`, `null`, `"send"`, "\n\n", `{"index":0,"type":"ok","f":"poll","process":"c","value":{"records":[{"topic":"t"}]}}`,
	} {
		f.Add([]byte(s + "\n"))
	}
	// Compressed histories, whole and cut short.
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write([]byte(`{"index":0,"time":1,"process":"p-0","type":"invoke","f":"send","value":{"topic":"orders","value":"p-0:0"}}` + "\n" +
		`{"index":1,"time":2,"process":"p-0","type":"ok","f":"send","value":{"topic":"orders","partition":0,"value":"p-0:0","offset":0}}` + "\n"))
	zw.Close()
	f.Add(z.Bytes())
	f.Add(z.Bytes()[:z.Len()-5])
	f.Fuzz(checkDecoding)
}

// checkDecoding is FuzzDecoder's property, for one input.
func checkDecoding(t *testing.T, data []byte) {
	ops, err := ReadAll(bytes.NewReader(data))
	// The text, as the standard library's gzip (not the decoder's) reads it.
	text := data
	if bytes.HasPrefix(data, gzipMagic) {
		text = nil
		if zr, zerr := stdgzip.NewReader(bytes.NewReader(data)); zerr == nil {
			if text, zerr = io.ReadAll(zr); zerr != nil {
				text = nil
			}
		}
	}
	if err != nil {
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Fatalf("an error that names no line: %T %v", err, err)
		}
		if lines := bytes.Count(text, []byte("\n")) + 1; pe.Line < 1 || (text != nil && pe.Line > lines) {
			t.Fatalf("a parse error at line %d of %d", pe.Line, lines)
		}
		return
	}
	if text == nil {
		t.Fatal("a gzip stream the standard library cannot read decoded")
	}
	// Every line the decoder took is an operation, judged by encoding/json
	// alone: the fast path must not accept what the format does not, and
	// decodes what it accepts as the slow path does.
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(nil, LinesMaxBytes)
	n := 0
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if n >= len(ops) {
			t.Fatalf("more lines than the %d operations decoded", len(ops))
		}
		var fields struct {
			F       *string         `json:"f"`
			Type    *string         `json:"type"`
			Process json.RawMessage `json:"process"`
		}
		if !json.Valid(line) || line[0] != '{' || json.Unmarshal(line, &fields) != nil {
			t.Fatalf("line %d is not a JSON object, yet decoded: %q", n+1, line)
		}
		op := ops[n]
		if fields.F == nil || *fields.F != op.F || !IsOperation(op.F) {
			t.Fatalf("decoded f %q, not an operation (the line says %v)", op.F, fields.F)
		}
		if _, known := ParseType(op.Type.String()); fields.Type == nil || !known || *fields.Type != op.Type.String() {
			t.Fatalf("decoded type %v (the line says %v)", op.Type, fields.Type)
		}
		if op.Process == "" || len(fields.Process) == 0 {
			t.Fatal("an operation of no process")
		}
		if fast, ok := parseFast(line, nil); ok {
			slow, err := parseLine(line, n+1)
			if err != nil || !reflect.DeepEqual(fast, slow) {
				t.Fatalf("the fast path decodes %q as\n%+v\nthe slow path as\n%+v (%v)", line, fast, slow, err)
			}
		}
		n++
	}
	if n != len(ops) {
		t.Fatalf("%d lines, %d operations", n, len(ops))
	}
	var buf bytes.Buffer
	if err := Write(&buf, ops); err != nil {
		t.Fatal(err)
	}
	again, err := ReadAll(&buf)
	if err != nil {
		t.Fatalf("what decoded does not decode after writing: %v\n%s", err, buf.Bytes())
	}
	if !reflect.DeepEqual(normalized(again), normalized(ops)) {
		t.Fatalf("a round trip changed the operations:\n%+v\n%+v", ops, again)
	}
}

// normalized drops what the JSON form does not tell apart: an empty list
// from none.
func normalized(ops []Op) []Op {
	out := make([]Op, len(ops))
	for i, op := range ops {
		if len(op.Value.Records) == 0 {
			op.Value.Records = nil
		}
		out[i] = op
	}
	return out
}
