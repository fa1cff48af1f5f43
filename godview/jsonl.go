package godview

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// StoreFile is the run store's file of a run's facts (docs/run-store.md),
// so that `kafkasim check RUN_DIR` judges the history as the run did.
const StoreFile = "godview.jsonl"

// Kinds are the kinds of fact a facts file may hold: a kind left out would
// make a file the simulator wrote unreadable (a test holds the list to the
// constants).
var Kinds = []Kind{Loss, HeldBack, ForgottenBatch, ForgottenProducer, UnknownProducerAppend, MistakenDuplicate,
	Resurrected, PowerLoss, UncleanElection, PartitionsAdded, UncleanElectionRequested, StaleLeaderRead, OutOfRangeReset, OutOfRangeRewind,
	ConfigAltered, HangingTransaction}

// header is a facts file's first line: whether a god view recorded the list
// and how many facts follow (a file cut short says so).
type header struct {
	GodView *bool `json:"god_view"`
	Facts   *int  `json:"facts"`
}

// factLine is a fact as a line of the file. A field a kind does not fill is
// left out and reads as its zero value; from and to are written with a
// partition (offset 0 is an offset), and producer is left out for
// NoProducer.
type factLine struct {
	Kind      Kind   `json:"kind"`
	At        int64  `json:"at_ns"`
	Partition string `json:"partition,omitempty"`
	From      *int64 `json:"from,omitempty"`
	To        *int64 `json:"to,omitempty"`
	Records   int    `json:"records,omitempty"`
	Producer  *int64 `json:"producer,omitempty"`
	Cause     string `json:"cause,omitempty"`
	ExposedBy string `json:"exposed_by,omitempty"`
	LeaderEnd int64  `json:"leader_end,omitempty"`
	Topic     string `json:"topic,omitempty"`
	Process   string `json:"process,omitempty"`
	Config    string `json:"config,omitempty"`
	Value     string `json:"value,omitempty"`
	// TransactionalID is HangingTransaction's.
	TransactionalID string `json:"transactional_id,omitempty"`
}

// WriteJSONL writes l as JSON Lines: a header line, then every fact in the
// list's order. ReadJSONL reads back the same list.
func WriteJSONL(w io.Writer, l List) error {
	bw := bufio.NewWriter(w)
	n := len(l.all)
	line, err := json.Marshal(header{GodView: &l.godView, Facts: &n})
	if err != nil {
		return err
	}
	bw.Write(append(line, '\n'))
	for i := range l.all {
		f := &l.all[i]
		fl := factLine{Kind: f.Kind, At: f.At, Partition: f.Partition, Records: f.Records,
			Cause: f.Cause, ExposedBy: f.ExposedBy, LeaderEnd: f.LeaderEnd, Topic: f.Topic, Process: f.Process,
			Config: f.Config, Value: f.Value, TransactionalID: f.TransactionalID}
		if f.Partition != "" || f.From != 0 || f.To != 0 {
			fl.From, fl.To = &f.From, &f.To
		}
		if f.Producer != NoProducer {
			fl.Producer = &f.Producer
		}
		line, err := json.Marshal(fl)
		if err != nil {
			return err
		}
		bw.Write(append(line, '\n'))
	}
	return bw.Flush()
}

// ParseError is a facts file that is not one: the line (from 1) and the key
// at fault ("" when the line is not JSON at all).
type ParseError struct {
	Line int
	Key  string
	Msg  string
}

func (e *ParseError) Error() string {
	if e.Key != "" {
		return fmt.Sprintf("line %d: %s: %s", e.Line, e.Key, e.Msg)
	}
	return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
}

// ReadJSONL reads a list WriteJSONL wrote. Keys it does not know are
// ignored; a kind it does not know is an error (the checker would not
// honour it, and a verdict would differ from the run's), as is a file
// holding fewer or more facts than its header says.
func ReadJSONL(r io.Reader) (List, error) {
	br := bufio.NewReader(r)
	var (
		h     header
		facts []Fact
		n     int // the line
	)
	for {
		b, err := br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return List{}, err
		}
		if len(b) > 0 {
			n++
		}
		if line := bytes.TrimSpace(b); len(line) > 0 {
			if h.GodView == nil {
				if n != 1 {
					return List{}, &ParseError{Line: n, Msg: "the header holds god_view and facts, on the first line"}
				}
				if h, err = readHeader(line); err != nil {
					return List{}, err
				}
			} else {
				f, err := readFact(line, n)
				if err != nil {
					return List{}, err
				}
				facts = append(facts, f)
			}
		}
		if err == io.EOF {
			break
		}
	}
	if h.GodView == nil {
		return List{}, &ParseError{Line: 1, Msg: "empty: the first line holds god_view and facts"}
	}
	if len(facts) != *h.Facts {
		return List{}, &ParseError{Line: 1, Key: "facts", Msg: fmt.Sprintf("%d announced, %d found", *h.Facts, len(facts))}
	}
	return newList(*h.GodView, facts), nil
}

func readHeader(line []byte) (header, error) {
	var h header
	if err := decodeObject(line, 1, "the header", &h); err != nil {
		return header{}, err
	}
	switch {
	case h.GodView == nil:
		return header{}, &ParseError{Line: 1, Key: "god_view", Msg: "missing"}
	case h.Facts == nil:
		return header{}, &ParseError{Line: 1, Key: "facts", Msg: "missing"}
	case *h.Facts < 0:
		return header{}, &ParseError{Line: 1, Key: "facts", Msg: fmt.Sprintf("%d: a count, not below 0", *h.Facts)}
	}
	return h, nil
}

func readFact(line []byte, n int) (Fact, error) {
	var fl factLine
	if err := decodeObject(line, n, "a fact", &fl); err != nil {
		return Fact{}, err
	}
	if fl.Kind == "" {
		return Fact{}, &ParseError{Line: n, Key: "kind", Msg: "missing"}
	}
	if !knownKind(fl.Kind) {
		names := make([]string, len(Kinds))
		for i, k := range Kinds {
			names[i] = string(k)
		}
		return Fact{}, &ParseError{Line: n, Key: "kind", Msg: fmt.Sprintf("%q is not a kind of fact (%s)", fl.Kind, strings.Join(names, ", "))}
	}
	f := Fact{Kind: fl.Kind, At: fl.At, Partition: fl.Partition, Records: fl.Records, Producer: NoProducer,
		Cause: fl.Cause, ExposedBy: fl.ExposedBy, LeaderEnd: fl.LeaderEnd, Topic: fl.Topic, Process: fl.Process,
		Config: fl.Config, Value: fl.Value, TransactionalID: fl.TransactionalID}
	if fl.From != nil {
		f.From = *fl.From
	}
	if fl.To != nil {
		f.To = *fl.To
	}
	if fl.Producer != nil {
		f.Producer = *fl.Producer
	}
	if err := checkFact(&f, fl.Producer != nil, n); err != nil {
		return Fact{}, err
	}
	return f, nil
}

// checkFact rejects a fact no god view could have seen: a checker given it
// would quietly honour nothing (a loss of no partition) or a nonsense
// range, and check's verdicts would differ from the run's without a word.
func checkFact(f *Fact, producerGiven bool, n int) error {
	bad := func(key, msg string, args ...any) error {
		return &ParseError{Line: n, Key: key, Msg: fmt.Sprintf(msg, args...)}
	}
	switch {
	case f.At < 0:
		return bad("at_ns", "%d: a time in the run, not below 0", f.At)
	case f.From < 0:
		return bad("from", "%d: an offset, not below 0", f.From)
	case f.To < f.From:
		return bad("to", "%d is below from (%d): offsets [from, to)", f.To, f.From)
	case f.Records < 0:
		return bad("records", "%d: a count, not below 0", f.Records)
	case f.LeaderEnd < 0:
		return bad("leader_end", "%d: an offset, not below 0", f.LeaderEnd)
	case producerGiven && f.Producer < 0:
		return bad("producer", "%d: a producer id, not below 0 (left out for none)", f.Producer)
	case f.Partition != "" && !partitionName(f.Partition):
		return bad("partition", "%q: a partition is topic-N", f.Partition)
	}
	switch f.Kind {
	case PowerLoss, UncleanElectionRequested: // the latter: "" is every partition
	case PartitionsAdded:
		if f.Topic == "" {
			return bad("topic", "missing: %s names the topic that grew", f.Kind)
		}
	case ConfigAltered: // Topic "" is cluster-wide
		if f.Config == "" {
			return bad("config", "missing: %s names the config set", f.Kind)
		}
	case StaleLeaderRead, OutOfRangeReset, OutOfRangeRewind:
		if f.Partition == "" {
			return bad("partition", "missing: %s names a partition", f.Kind)
		}
		if f.Process == "" {
			return bad("process", "missing: %s names the reader", f.Kind)
		}
	default:
		if f.Partition == "" {
			return bad("partition", "missing: %s names a partition", f.Kind)
		}
	}
	return nil
}

// partitionName reports whether s is a partition as the god view names
// one: a topic, a dash, the partition's index.
func partitionName(s string) bool {
	i := strings.LastIndexByte(s, '-')
	if i < 1 || i == len(s)-1 {
		return false
	}
	for _, c := range s[i+1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func knownKind(k Kind) bool {
	for _, known := range Kinds {
		if k == known {
			return true
		}
	}
	return false
}

// decodeObject decodes a line that must be one JSON object, naming the key
// whose value has the wrong type.
func decodeObject(line []byte, n int, what string, v any) error {
	if line[0] != '{' {
		return &ParseError{Line: n, Msg: "not " + what + ": a line holds one JSON object"}
	}
	err := json.Unmarshal(line, v)
	if te, ok := err.(*json.UnmarshalTypeError); ok {
		return &ParseError{Line: n, Key: te.Field, Msg: fmt.Sprintf("want %s, got %s", typeWord(te.Type), te.Value)}
	}
	if err != nil {
		return &ParseError{Line: n, Msg: fmt.Sprintf("not %s: %v", what, err)}
	}
	return nil
}

func typeWord(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int64:
		return "an integer"
	}
	return t.String()
}
