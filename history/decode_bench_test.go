package history

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// A line that leaves the fast path (an escape in one value) costs time
// linear in its length: a poll of 2,000 records, some 100 kB.
func BenchmarkSlowPathPoll(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"index":0,"process":"c","type":"ok","f":"poll","value":{"records":[`)
	for i := range 2000 {
		fmt.Fprintf(&sb, `{"topic":"t","partition":0,"offset":%d,"key":"k","value":"v%d","x":[1]},`, i, i)
	}
	sb.WriteString(`{"topic":"t","partition":0,"offset":0,"value":"\u0076"}]}}`)
	line := []byte(sb.String())
	if _, ok := parseFast(line, nil); ok {
		b.Fatal("the fast path took the line")
	}
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if _, err := ReadAll(bytes.NewReader(line)); err != nil {
			b.Fatal(err)
		}
	}
}
