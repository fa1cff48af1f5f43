package history

import (
	"strconv"
	"unicode/utf8"
)

// A fast path for decoding history lines: a scanner for the history format's schema (docs/history.md)
// that decodes a well-formed line without encoding/json's reflection and
// allocations, and gives up (ok false) on anything it does not handle
// exactly as parseLine would — an escape sequence, a null where an object
// belongs, a malformed or missing field. parseLine then decodes the line and
// words the error. Both produce identical operations (TestFastPathAgrees).

type scanner struct {
	b      []byte
	i      int
	intern *interner
	depth  int // objects and arrays open around the scanner
}

// depthMax bounds the nesting the fast path follows (recursively); deeper
// lines go to encoding/json, which rejects nesting beyond its own bound.
const depthMax = 1000

// interner shares the strings a history repeats (processes, topics, keys,
// and the values every reader reads again), up to a bound.
type interner struct {
	m map[string]string
}

const internMax = 1 << 20

func (in *interner) str(b []byte) string {
	if in == nil {
		return string(b)
	}
	if s, ok := in.m[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(in.m) < internMax {
		in.m[s] = s
	}
	return s
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *scanner) eat(c byte) bool {
	if s.peek() == c {
		s.i++
		return true
	}
	return false
}

// rawString returns a string's bytes without escapes; ok is false for an
// escape, a control character or invalid UTF-8 (the slow path handles them).
func (s *scanner) rawString() ([]byte, bool) {
	if !s.eat('"') {
		return nil, false
	}
	start := s.i
	ascii := true
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			out := s.b[start:s.i]
			s.i++
			if !ascii && !utf8.Valid(out) {
				return nil, false
			}
			return out, true
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= 0x80:
			ascii = false
		}
		s.i++
	}
	return nil, false
}

func (s *scanner) str() (string, bool) {
	b, ok := s.rawString()
	if !ok {
		return "", false
	}
	return s.intern.str(b), true
}

// number returns a JSON number's literal.
func (s *scanner) number() ([]byte, bool) {
	s.ws()
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	digits := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	if s.i == digits || (s.b[digits] == '0' && s.i-digits > 1) {
		return nil, false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		d := s.i
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
		}
		if s.i == d {
			return nil, false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		d := s.i
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
		}
		if s.i == d {
			return nil, false
		}
	}
	return s.b[start:s.i], true
}

func (s *scanner) int64() (int64, bool) {
	lit, ok := s.number()
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(string(lit), 10, 64)
	return n, err == nil
}

func (s *scanner) int32() (int32, bool) {
	lit, ok := s.number()
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(string(lit), 10, 32)
	return int32(n), err == nil
}

// strOrNumber reads a string, or a number as its literal (valueString).
func (s *scanner) strOrNumber() (string, bool) {
	if s.peek() == '"' {
		return s.str()
	}
	lit, ok := s.number()
	if !ok {
		return "", false
	}
	return s.intern.str(lit), true
}

func (s *scanner) literal(word string) bool {
	s.ws()
	if len(s.b)-s.i >= len(word) && string(s.b[s.i:s.i+len(word)]) == word {
		s.i += len(word)
		return true
	}
	return false
}

// skip passes over any JSON value (an unknown field).
func (s *scanner) skip() bool {
	switch s.peek() {
	case '"':
		_, ok := s.rawString()
		return ok
	case '{':
		return s.object()
	case '[':
		return s.array()
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	default:
		_, ok := s.number()
		return ok
	}
}

// key steps through an object's members (after its '{'): it returns the
// next key with the scanner at its value, or done at the closing '}'.
func (s *scanner) key(first bool) (k []byte, done, ok bool) {
	if s.eat('}') {
		return nil, true, true
	}
	if !first && !s.eat(',') {
		return nil, false, false
	}
	k, ok = s.rawString()
	if !ok || !s.eat(':') {
		return nil, false, false
	}
	return k, false, true
}

// elem steps through an array's elements (after its '['): done at the
// closing ']'.
func (s *scanner) elem(first bool) (done, ok bool) {
	if s.eat(']') {
		return true, true
	}
	if !first && !s.eat(',') {
		return false, false
	}
	return false, true
}

// object skips an object.
func (s *scanner) object() bool {
	if s.depth >= depthMax || !s.eat('{') {
		return false
	}
	s.depth++
	for first := true; ; first = false {
		_, done, ok := s.key(first)
		if !ok || (!done && !s.skip()) {
			return false
		}
		if done {
			s.depth--
			return true
		}
	}
}

// array skips an array.
func (s *scanner) array() bool {
	if s.depth >= depthMax || !s.eat('[') {
		return false
	}
	s.depth++
	for first := true; ; first = false {
		done, ok := s.elem(first)
		if !ok || (!done && !s.skip()) {
			return false
		}
		if done {
			s.depth--
			return true
		}
	}
}

func (s *scanner) offsets() (map[string]int64, bool) {
	if !s.eat('{') {
		return nil, false
	}
	m := map[string]int64{}
	for first := true; ; first = false {
		k, done, ok := s.key(first)
		if !ok {
			return nil, false
		}
		if done {
			return m, true
		}
		n, ok := s.int64()
		if !ok {
			return nil, false
		}
		m[s.intern.str(k)] = n
	}
}

// record reads a record of records (full) or sends; ok is false for anything
// parseLine would reject or decode differently.
func (s *scanner) record(full bool) (Record, bool) {
	rec := Record{Partition: -1, Offset: -1}
	var hasTopic, hasValue, hasPart, hasOff bool
	if !s.eat('{') {
		return rec, false
	}
	for first := true; ; first = false {
		k, done, ok := s.key(first)
		if !ok {
			return rec, false
		}
		if done {
			break
		}
		switch string(k) {
		case "topic":
			rec.Topic, ok = s.str()
			hasTopic = true
		case "partition":
			rec.Partition, ok = s.int32()
			hasPart = true
		case "offset":
			rec.Offset, ok = s.int64()
			hasOff = true
		case "key":
			rec.Key, ok = s.str()
			rec.HasKey = true
		case "value":
			rec.Value, ok = s.strOrNumber()
			hasValue = true
		default:
			ok = s.skip()
		}
		if !ok {
			return rec, false
		}
	}
	if !hasTopic || !hasValue || (full && (!hasPart || !hasOff)) {
		return rec, false
	}
	return rec, true
}

// source reads a send's source: topic, partition and offset, all present,
// none negative; ok is false otherwise (parseLine words the error).
func (s *scanner) source() (Record, bool) {
	rec := Record{Partition: -1, Offset: -1}
	var hasTopic bool
	if !s.eat('{') {
		return rec, false
	}
	for first := true; ; first = false {
		k, done, ok := s.key(first)
		if !ok {
			return rec, false
		}
		if done {
			break
		}
		switch string(k) {
		case "topic":
			rec.Topic, ok = s.str()
			hasTopic = true
		case "partition":
			rec.Partition, ok = s.int32()
		case "offset":
			rec.Offset, ok = s.int64()
		default:
			ok = s.skip()
		}
		if !ok {
			return rec, false
		}
	}
	return rec, hasTopic && rec.Partition >= 0 && rec.Offset >= 0
}

// value reads an operation's value; hasValue reports its "value" field.
func (s *scanner) value(op *Op) (bool, bool) {
	v := &op.Value
	var (
		tid, group, member       string
		offsets, logStarts       map[string]int64
		positions, ends          map[string]int64
		gen, epoch               int32
		hasGen, hasEpoch         bool
		hasApplied, applied      bool
		parts                    []string
		sends                    []Send
		hasSends, hasExt, hasVal bool
		source                   *Source
		prodID                   int64 = -1
		prodEpoch                int32 = -1
		hasProducer              bool
	)
	if !s.eat('{') {
		return false, false
	}
	for first := true; ; first = false {
		k, done, ok := s.key(first)
		if !ok {
			return false, false
		}
		if done {
			break
		}
		switch string(k) {
		case "topic":
			v.Topic, ok = s.str()
		case "partition":
			v.Partition, ok = s.int32()
		case "key":
			v.Key, ok = s.str()
			v.HasKey = true
		case "value":
			v.Value, ok = s.strOrNumber()
			hasVal = true
		case "offset":
			v.Offset, ok = s.int64()
		case "transactional_id":
			tid, ok = s.str()
		case "isolation":
			v.Isolation, ok = s.str()
		case "group":
			group, ok = s.str()
		case "final":
			switch {
			case s.literal("true"):
				v.Final, ok = true, true
			case s.literal("false"):
				v.Final, ok = false, true
			}
		case "records":
			v.HasRecords, v.Records = true, v.Records[:0]
			if ok = s.eat('['); !ok {
				break
			}
			for first := true; ; first = false {
				var done bool
				if done, ok = s.elem(first); !ok || done {
					break
				}
				var r Record
				if r, ok = s.record(true); !ok {
					break
				}
				v.Records = append(v.Records, r)
			}
		case "offsets":
			offsets, ok = s.offsets()
			hasExt = true
		case "log_start_offsets":
			logStarts, ok = s.offsets()
			hasExt = true
		case "positions":
			positions, ok = s.offsets()
			hasExt = true
		case "end_offsets":
			ends, ok = s.offsets()
			hasExt = true
		case "generation":
			gen, ok = s.int32()
			hasGen, hasExt = true, true
		case "member_epoch":
			epoch, ok = s.int32()
			hasEpoch, hasExt = true, true
		case "member_id":
			member, ok = s.str()
		case "applied":
			ok = false // neither literal: parseLine words the error
			switch {
			case s.literal("true"):
				applied, ok = true, true
			case s.literal("false"):
				applied, ok = false, true
			}
			hasApplied, hasExt = true, true
		case "partitions":
			parts, hasExt = []string{}, true
			if ok = s.eat('['); !ok {
				break
			}
			for first := true; ; first = false {
				var done bool
				if done, ok = s.elem(first); !ok || done {
					break
				}
				var p string
				if p, ok = s.str(); !ok {
					break
				}
				parts = append(parts, p)
			}
		case "sends":
			sends, hasSends, hasExt = []Send{}, true, true
			if ok = s.eat('['); !ok {
				break
			}
			for first := true; ; first = false {
				var done bool
				if done, ok = s.elem(first); !ok || done {
					break
				}
				var r Record
				if r, ok = s.record(false); !ok {
					break
				}
				sends = append(sends, Send{Topic: r.Topic, Partition: r.Partition, Key: r.Key, HasKey: r.HasKey, Value: r.Value, Offset: r.Offset})
			}
		case "source":
			var r Record
			// A source is a record's position without its key or value:
			// parseLine words what is missing.
			if r, ok = s.source(); ok {
				source, hasExt = &Source{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset}, true
			}
		case "producer_id":
			prodID, ok = s.int64()
			hasProducer, hasExt = true, true
		case "producer_epoch":
			prodEpoch, ok = s.int32()
			hasProducer, hasExt = true, true
		case "error":
			v.Error, ok = s.str()
		default:
			ok = s.skip()
		}
		if !ok {
			return false, false
		}
	}
	if hasExt || tid != "" || group != "" || member != "" {
		x := v.X()
		x.TransactionalID, x.Group, x.Offsets, x.MemberID, x.Partitions = tid, group, offsets, member, parts
		x.LogStartOffsets, x.Positions, x.EndOffsets = logStarts, positions, ends
		x.HasApplied, x.Applied = hasApplied, applied
		if hasGen {
			x.Generation = gen
		} else if hasEpoch {
			x.Generation = epoch
		}
		if hasSends {
			x.Sends = sends
		}
		x.Source = source
		if hasProducer {
			x.Producer = &ProducerEpoch{ID: prodID, Epoch: prodEpoch}
		}
	}
	return hasVal, true
}

// parseFast decodes a line of the usual shape; ok is false when parseLine
// must decide.
func parseFast(b []byte, in *interner) (Op, bool) {
	s := scanner{b: b, intern: in}
	op := Op{Value: NoValue()}
	var hasIndex, hasType, hasF, hasProc, hasValue, sendValue bool
	var typ []byte
	if !s.eat('{') {
		return Op{}, false
	}
	for first := true; ; first = false {
		k, done, ok := s.key(first)
		if !ok {
			return Op{}, false
		}
		if done {
			break
		}
		switch string(k) {
		case "index":
			op.Index, ok = s.int64()
			hasIndex = true
		case "time":
			op.Time, ok = s.int64()
		case "process":
			op.Process, ok = s.strOrNumber()
			hasProc = true
		case "type":
			typ, ok = s.rawString()
			hasType = true
		case "f":
			op.F, ok = s.str()
			hasF = true
		case "value":
			if hasValue {
				return Op{}, false // a repeated value: encoding/json merges them
			}
			hasValue = true
			sendValue, ok = s.value(&op)
		default:
			ok = s.skip()
		}
		if !ok {
			return Op{}, false
		}
	}
	if !hasIndex || !hasType || !hasF || !hasProc || op.Process == "" {
		return Op{}, false
	}
	s.ws()
	if s.i != len(s.b) {
		return Op{}, false
	}
	t, known := ParseType(string(typ))
	if !known {
		return Op{}, false
	}
	op.Type = t
	if op.F == FSend && (!sendValue || op.Value.Value == "") {
		return Op{}, false // parseLine words the error
	}
	return op, true
}

// The fields the history format names, exactly as spelled: any other key (another
// case included) is a recorder's own and is ignored.
var (
	topFields    = []string{"index", "time", "process", "type", "f", "value"}
	valueFields  = []string{"topic", "partition", "key", "value", "offset", "transactional_id", "isolation", "group", "final", "records", "offsets", "log_start_offsets", "positions", "end_offsets", "generation", "member_epoch", "member_id", "applied", "partitions", "sends", "source", "producer_id", "producer_epoch", "error"}
	recordFields = []string{"topic", "partition", "offset", "key", "value"}
	sourceFields = []string{"topic", "partition", "offset"}
)
