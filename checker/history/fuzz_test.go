package history

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzDecoder: any input gives operations or a *ParseError naming a line,
// never a panic or a hang; and what decodes writes back to JSON that decodes
// to the same operations. `go test -fuzz FuzzDecoder ./checker/history/`
// explores further; the seed corpus runs with every `go test`.
func FuzzDecoder(f *testing.F) {
	for _, s := range []string{
		`{"index":0,"time":1000000,"process":"p-0","type":"invoke","f":"send","value":{"topic":"orders","key":"k7","value":"p-0:17"}}`,
		`{"index":1,"time":3400000,"process":"p-0","type":"ok","f":"send","value":{"topic":"orders","partition":2,"key":"k7","value":"p-0:17","offset":41}}`,
		`{"index":3,"time":3600000,"process":"c-1","type":"ok","f":"poll","value":{"records":[{"topic":"orders","partition":2,"offset":41,"key":"k7","value":"p-0:17"}]}}`,
		`{"index":4,"process":"c-1","type":"invoke","f":"commit","value":{"group":"billing","offsets":{"orders-2":42}}}`,
		`{"index":5,"process":"t","type":"ok","f":"txn-commit","value":{"transactional_id":"t1","sends":[{"topic":"o","partition":0,"value":"v","offset":3}]}}`,
		`{"index":6,"process":7,"type":"info","f":"send","value":{"topic":"o","value":12}}`,
		`{"index":`, `[]`, `{}`, "\n\n", `{"index":0,"type":"ok","f":"poll","process":"c","value":{"records":[{"topic":"t"}]}}`,
	} {
		f.Add([]byte(s + "\n"))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ops, err := ReadAll(bytes.NewReader(data))
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("an error that names no line: %T %v", err, err)
			}
			if pe != nil && pe.Line < 1 {
				t.Fatalf("a parse error at line %d", pe.Line)
			}
			return
		}
		var buf bytes.Buffer
		if err := Write(&buf, ops); err != nil {
			t.Fatal(err)
		}
		again, err := ReadAll(&buf)
		if err != nil {
			t.Fatalf("what decoded does not decode after writing: %v\n%s", err, buf.Bytes())
		}
		if len(again) != len(ops) {
			t.Fatalf("%d operations, %d after a round trip", len(ops), len(again))
		}
	})
}
