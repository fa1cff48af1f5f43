package record

import (
	"encoding/binary"
	"testing"

	"pgregory.net/rapid"
)

// refDecodeRecord is decodeRecord as it was written with closures: the
// reference the written-out version is held to.
func refDecodeRecord(data []byte) (rawRecord, int, error) {
	length, n := varint(data)
	if n <= 0 || length < 0 || int(length) > len(data)-n {
		return rawRecord{}, 0, ErrCorrupt
	}
	end := n + int(length)
	pos := n + 1
	next := func() (int64, bool) {
		v, k := varint(data[min(pos, end):end])
		if k <= 0 {
			return 0, false
		}
		pos += k
		return v, true
	}
	field := func() (at, fieldEnd int, present, ok bool) {
		l, ok := next()
		if !ok {
			return 0, 0, false, false
		}
		if l < 0 {
			return pos, pos, false, true
		}
		if pos+int(l) > end {
			return 0, 0, false, false
		}
		at = pos
		pos += int(l)
		return at, pos, true, true
	}
	var r rawRecord
	var ok1, ok2, ok3, ok4 bool
	r.timestampDelta, ok1 = next()
	r.offsetDelta, ok2 = next()
	r.keyAt, r.keyEnd, r.hasKey, ok3 = field()
	r.valueAt, r.valueEnd, r.hasValue, ok4 = field()
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return rawRecord{}, 0, ErrCorrupt
	}
	return r, end, nil
}

// Whatever the bytes — records encoded whole, cut short, or noise — the
// decoder gives what the reference gives, and never panics.
func TestDecodeRecordIsTheReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var data []byte
		if rapid.Bool().Draw(t, "encoded") {
			r := Record{Key: rapid.String().Draw(t, "key"), HasKey: rapid.Bool().Draw(t, "hasKey"),
				Value: rapid.String().Draw(t, "value"), Tombstone: rapid.Bool().Draw(t, "tombstone")}
			data = appendRecord(nil, r, rapid.Int64Range(0, 1000).Draw(t, "offset delta"), rapid.Int64Range(-1<<40, 1<<40).Draw(t, "ts delta"))
			data = data[:rapid.IntRange(0, len(data)).Draw(t, "cut")]
		} else {
			data = rapid.SliceOfN(rapid.Byte(), 0, 40).Draw(t, "noise")
		}
		got, gotN, gotErr := decodeRecord(data)
		want, wantN, wantErr := refDecodeRecord(data)
		if got != want || gotN != wantN || (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("decodeRecord(%x) = %+v, %d, %v; the reference %+v, %d, %v", data, got, gotN, gotErr, want, wantN, wantErr)
		}
	})
}

// Small records (decodeSmallRecord's: shorter than 64 bytes, deltas of
// one or two bytes, and a few of three) decode as the
// reference decodes them: whole, cut short or with a byte changed.
func TestDecodeSmallRecordIsTheReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := Record{Key: rapid.StringN(0, 30, 30).Draw(t, "key"), HasKey: rapid.Bool().Draw(t, "hasKey"),
			Value: rapid.StringN(0, 30, 30).Draw(t, "value"), Tombstone: rapid.Bool().Draw(t, "tombstone")}
		ts := rapid.Int64Range(-9000, 9000).Draw(t, "ts delta")
		data := appendRecord(nil, r, rapid.Int64Range(0, 200).Draw(t, "offset delta"), ts)
		if _, _, ok := decodeSmallRecord(data); !ok && len(data) <= 64 && len(binary.AppendVarint(nil, ts)) <= 2 {
			t.Fatalf("decodeSmallRecord(%x) does not take a small record", data)
		}
		if rapid.Bool().Draw(t, "change a byte") {
			data[rapid.IntRange(0, len(data)-1).Draw(t, "at")] = rapid.Byte().Draw(t, "byte")
		}
		data = data[:rapid.IntRange(0, len(data)).Draw(t, "cut")]
		got, gotN, gotErr := decodeRecord(data)
		want, wantN, wantErr := refDecodeRecord(data)
		if got != want || gotN != wantN || (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("decodeRecord(%x) = %+v, %d, %v; the reference %+v, %d, %v", data, got, gotN, gotErr, want, wantN, wantErr)
		}
	})
}
