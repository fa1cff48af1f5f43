package history

import (
	"bytes"
	"encoding/json"
)

// exact rewrites a valid JSON line so that encoding/json, which matches keys
// without regard to case, sees the format's fields only as spelled: any
// other key is a recorder's own and is dropped (an "OFFSET" must not stand
// in for "offset"); of a key given twice the last counts; and an "error"
// that is not a string (a Jepsen-style error object) becomes its JSON text.
// A line that is not an object is returned as is, for Unmarshal to word the
// error.
//
// It copies spans of the line in one pass, so that its work is linear in the
// line's length: decoding into maps and marshalling them again, level by
// level, cost some 30 µs a record, and a line of a few hundred kilobytes
// took a second.
func exact(b []byte) []byte {
	e := exacter{b: b}
	out, ok := e.object(nil, topFields, e.top)
	if !ok {
		return b
	}
	return out
}

// exacter walks a line known to be valid JSON (json.Valid), which is what
// lets it skip strings and values by their delimiters alone.
type exacter struct {
	b []byte
	i int
}

// member is a kept field: its name as the format spells it, and its value
// as written (or rewritten).
type member struct {
	name  string
	value []byte
}

func (e *exacter) ws() {
	for e.i < len(e.b) {
		switch e.b[e.i] {
		case ' ', '\t', '\n', '\r':
			e.i++
		default:
			return
		}
	}
}

// str passes a string and returns its text, unescaped only when it holds
// an escape.
func (e *exacter) str() string {
	start := e.i
	e.i++
	escaped := false
	for e.b[e.i] != '"' {
		if e.b[e.i] == '\\' {
			escaped = true
			e.i++
		}
		e.i++
	}
	e.i++
	if !escaped {
		return string(e.b[start+1 : e.i-1])
	}
	var s string
	json.Unmarshal(e.b[start:e.i], &s)
	return s
}

// skip passes any value and returns its bytes.
func (e *exacter) skip() []byte {
	e.ws()
	start := e.i
	switch e.b[e.i] {
	case '"':
		e.str()
	case '{', '[':
		// Valid JSON: count brackets outside strings.
		depth := 0
		for {
			switch e.b[e.i] {
			case '"':
				e.str()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			e.i++
			if depth == 0 {
				break
			}
		}
	default:
		// A number, true, false or null: up to the next delimiter.
		for e.i < len(e.b) {
			switch e.b[e.i] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				return e.b[start:e.i]
			}
			e.i++
		}
	}
	return e.b[start:e.i]
}

// object filters the object at the scanner to the fields named, rewriting
// the value of each kept field with inner; ok is false when the value is
// not an object (the scanner then is past the value).
func (e *exacter) object(out []byte, fields []string, inner func(name string, v []byte) []byte) ([]byte, bool) {
	e.ws()
	if e.b[e.i] != '{' {
		e.skip()
		return out, false
	}
	e.i++
	var kept []member
	for {
		e.ws()
		if e.b[e.i] == '}' {
			e.i++
			break
		}
		if e.b[e.i] == ',' {
			e.i++
			e.ws()
		}
		name := e.str()
		e.ws()
		e.i++ // ':'
		v := e.skip()
		k := 0
		for k < len(fields) && fields[k] != name {
			k++
		}
		if k == len(fields) {
			continue
		}
		if inner != nil {
			v = inner(name, v)
		}
		m := member{name: fields[k], value: v}
		if j := indexOf(kept, m.name); j >= 0 {
			kept[j] = m
		} else {
			kept = append(kept, m)
		}
	}
	out = append(out, '{')
	for i, m := range kept {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, '"')
		out = append(out, m.name...)
		out = append(out, '"', ':')
		out = append(out, m.value...)
	}
	return append(out, '}'), true
}

func indexOf(kept []member, name string) int {
	for j, m := range kept {
		if m.name == name {
			return j
		}
	}
	return -1
}

// top rewrites an operation's value.
func (e *exacter) top(name string, v []byte) []byte {
	if name != "value" {
		return v
	}
	sub := exacter{b: v}
	if out, ok := sub.object(nil, valueFields, sub.value); ok {
		return out
	}
	return v
}

// value rewrites the fields of a value: records and sends, and an error
// that is not a string.
func (e *exacter) value(name string, v []byte) []byte {
	switch name {
	case "records", "sends":
		sub := exacter{b: v}
		if out, ok := sub.list(); ok {
			return out
		}
	case "source":
		sub := exacter{b: v}
		if out, ok := sub.object(nil, sourceFields, nil); ok {
			return out
		}
	case "error":
		if v[0] != '"' && string(v) != "null" {
			var buf bytes.Buffer
			if json.Compact(&buf, v) == nil {
				out, _ := json.Marshal(buf.String())
				return out
			}
		}
	}
	return v
}

// list filters each object of a list to a record's fields.
func (e *exacter) list() ([]byte, bool) {
	e.ws()
	if e.b[e.i] != '[' {
		return nil, false
	}
	e.i++
	out := []byte{'['}
	for first := true; ; first = false {
		e.ws()
		if e.b[e.i] == ']' {
			break
		}
		if e.b[e.i] == ',' {
			e.i++
		}
		if !first {
			out = append(out, ',')
		}
		e.ws()
		start := e.i
		var ok bool
		if out, ok = e.object(out, recordFields, nil); !ok {
			out = append(out, e.b[start:e.i]...)
		}
	}
	return append(out, ']'), true
}
