package reports

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"kafkasim/history"
)

// maxExcerptRows caps the history excerpt: a history can hold millions of
// operations, and the report shows only the evidence.
const maxExcerptRows = 500

// partnerScan bounds how far the excerpt looks for an operation's
// invoke/complete partner, so that a missing partner costs a bounded scan,
// not a pass over millions of operations.
const partnerScan = 50000

// excerptRow is one history operation as the report's excerpt shows it.
type excerptRow struct {
	Index     int64
	Time      string
	Process   string
	Type      string
	F         string
	Partition string
	Key       string
	Value     string
	Offset    string
	Records   string
	Error     string
	Cited     bool // named by an anomaly example, not just its partner
}

// partner finds the other half of the operation at position p: the
// completion of an invocation or the invocation of a completion, by the
// same process, for the same function and, when the operation carries a
// record value, for the same value (a producer has many sends in flight).
func partner(h History, p int) (int, bool) {
	op := h.Head(p)
	matches := func(o *history.Op) bool {
		if o.Process != op.Process || o.F != op.F || (o.Type == history.Invoke) == (op.Type == history.Invoke) {
			return false
		}
		return op.Value.Value == "" || o.Value.Value == "" || o.Value.Value == op.Value.Value
	}
	if op.Type == history.Invoke {
		for q := p + 1; q < h.Len() && q <= p+partnerScan; q++ {
			if matches(h.Head(q)) {
				return q, true
			}
		}
		return 0, false
	}
	for q := p - 1; q >= 0 && q >= p-partnerScan; q-- {
		if matches(h.Head(q)) {
			return q, true
		}
	}
	return 0, false
}

// historyExcerpt selects the cited operations and their partners, in
// citation order until maxExcerptRows, and returns them sorted by index
// with the set of indexes it shows (for links) and how many cited
// operations did not fit or are not in the history.
func historyExcerpt(h History, cited []int64) (rows []excerptRow, shown map[int64]bool, missing int) {
	shown = map[int64]bool{}
	isCited := map[int64]bool{}
	var picked []*history.Op
	add := func(p int) {
		if op := h.At(p); len(picked) < maxExcerptRows && !shown[op.Index] {
			shown[op.Index] = true
			picked = append(picked, op)
		}
	}
	for _, idx := range cited {
		if isCited[idx] {
			continue
		}
		isCited[idx] = true
		p, ok := h.Find(idx)
		if !ok || len(picked) >= maxExcerptRows {
			missing++
			continue
		}
		add(p)
		if q, ok := partner(h, p); ok {
			add(q)
		}
	}
	sort.Slice(picked, func(i, j int) bool { return picked[i].Index < picked[j].Index })
	for _, op := range picked {
		rows = append(rows, newExcerptRow(op, isCited[op.Index]))
	}
	return rows, shown, missing
}

// maxRecordsShown is how many of a poll's records the excerpt spells out.
const maxRecordsShown = 5

func newExcerptRow(op *history.Op, cited bool) excerptRow {
	v := &op.Value
	row := excerptRow{
		Index:   op.Index,
		Time:    fmtTime(time.Duration(op.Time)),
		Process: op.Process,
		Type:    typeName(op.Type),
		F:       op.F,
		Key:     v.Key,
		Value:   v.Value,
		Error:   v.Error,
		Cited:   cited,
	}
	if v.Topic != "" {
		row.Partition = v.Topic
		if v.Partition >= 0 {
			row.Partition += "-" + strconv.Itoa(int(v.Partition))
		}
	}
	if v.Offset >= 0 {
		row.Offset = strconv.FormatInt(v.Offset, 10)
	}
	if len(v.Records) > 0 {
		var parts []string
		for i, rec := range v.Records {
			if i == maxRecordsShown {
				parts = append(parts, fmt.Sprintf("… %d more", len(v.Records)-maxRecordsShown))
				break
			}
			parts = append(parts, fmt.Sprintf("%s@%d=%s", rec.TopicPartition(), rec.Offset, rec.Value))
		}
		row.Records = strings.Join(parts, " ")
	} else if v.HasRecords {
		row.Records = "(none)"
	}
	return row
}

// typeName spells an op type without trusting it to be in range: a report
// reads histories from outside too.
func typeName(t history.Type) string {
	if t <= history.Info {
		return t.String()
	}
	return "type-" + strconv.Itoa(int(t))
}
