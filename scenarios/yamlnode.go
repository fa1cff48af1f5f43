package scenarios

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"kafkasim/sim"
)

// Error is one problem with a scenario file, at a line and column, naming
// the key: "acks1.yaml:14:5: topics[0].replication.factor: 4 is more than
// the 3 brokers".
type Error struct {
	File   string
	Line   int
	Column int
	Key    string
	Msg    string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every problem found in one file, in file order; each prints as
// one line.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// errorsMax bounds how many problems one file reports: past a few, the rest
// are usually echoes of the first. The reader keeps up to errorsKept, so that
// the ones it reports are the first in the file, whichever pass found them.
const (
	errorsMax  = 20
	errorsKept = 200
)

// Bounds on the work one file may cause. YAML aliases (*name) repeat what
// they name wherever they stand, so that a small file can stand for a huge
// one. The reader counts what it walks, each repetition included, against
// what the file could hold written out: a value (a key, an item) takes at
// least two bytes to write, so a file of n bytes without aliases never
// reaches valuesFloor + n values nor textFloor + 2n bytes of text, and the
// floors leave room for aliases used as intended (one config shared by a few
// producers).
const (
	valuesFloor = 10_000
	textFloor   = 64 << 10
)

// reader walks a YAML document, collecting errors with their positions.
type reader struct {
	file string
	errs Errors
	// failures counts every error, the ones past errorsKept too.
	failures int
	// at remembers where some keys were written, for checks that come
	// later and compare several values.
	at map[string]*yaml.Node
	// values and text are what the reader has walked so far (values, and
	// bytes of keys and scalars); past valuesMax or textMax it stops
	// walking, and exhausted says so.
	values, text       int
	valuesMax, textMax int
	exhausted          bool

	// What the cross-section checks need to know about the sections read.
	topicIndex         map[string]int // s.Topics by name
	topicPaths         []string       // where each of s.Topics was written
	topicNamesDoubtful bool
	producerPaths      []string
	consumerPaths      []string
	// grownDoubtful: an add-partitions fault had an error, so a partition
	// leader(T-P) names may be one it would have made.
	grownDoubtful bool
	// namedPartitions are the partitions admin faults name, to check
	// against the topics' partition counts once every fault is read.
	namedPartitions []namedPartition
	// offsetsTopicListed: topics had a __consumer_offsets entry.
	offsetsTopicListed bool
	// txnKeyPaths: where the __transaction_state entry gave a broker key.
	txnKeyPaths map[string]string
}

// newReader returns a reader for a file of size bytes.
func newReader(file string, size int) *reader {
	return &reader{file: file, valuesMax: valuesFloor + size, textMax: textFloor + 2*size}
}

func (r *reader) remember(path string, n *yaml.Node) {
	if r.at == nil {
		r.at = map[string]*yaml.Node{}
	}
	r.at[path] = n
}

// where is the node a key was written at, or alt.
func (r *reader) where(path string, alt *yaml.Node) *yaml.Node {
	if n, ok := r.at[path]; ok {
		return n
	}
	return alt
}

func (r *reader) fail(n *yaml.Node, key, format string, args ...any) {
	r.failures++
	if len(r.errs) >= errorsKept {
		return
	}
	e := &Error{File: r.file, Key: cutLong(key), Msg: fmt.Sprintf(format, shortQuoted(format, args)...)}
	if len(e.Msg) > messageMax {
		cut := messageMax
		for !utf8.RuneStart(e.Msg[cut]) {
			cut--
		}
		e.Msg = e.Msg[:cut] + "…"
	}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	r.errs = append(r.errs, e)
}

// failedAt reports whether an error was found at path or under it: a check
// comparing that value with others would only echo it.
func (r *reader) failedAt(path string) bool {
	if len(r.errs) < r.failures {
		return true // some errors were not kept: assume the worst
	}
	for _, e := range r.errs {
		if e.Key == path || strings.HasPrefix(e.Key, path+".") || strings.HasPrefix(e.Key, path+"[") {
			return true
		}
	}
	return false
}

// failedOn reports whether an error was found at path itself.
func (r *reader) failedOn(path string) bool {
	if len(r.errs) < r.failures {
		return true
	}
	for _, e := range r.errs {
		if e.Key == path {
			return true
		}
	}
	return false
}

// report is the errors found, in file order: the first errorsMax, and a
// last line counting the rest.
func (r *reader) report() Errors {
	if r.failures == 0 {
		return nil
	}
	out := append(Errors(nil), r.errs...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Line != out[j].Line {
			return out[i].Line < out[j].Line
		}
		return out[i].Column < out[j].Column
	})
	if r.failures > errorsMax {
		out = append(out[:min(len(out), errorsMax)], &Error{File: r.file,
			Msg: fmt.Sprintf("and %d more problems (fix these first: later ones are often echoes)", r.failures-errorsMax)})
	}
	return out
}

// spend counts what the reader is about to walk at n. Past the bounds it
// says so once and returns false: the caller walks no further.
func (r *reader) spend(n *yaml.Node, values, text int) bool {
	if r.exhausted {
		return false
	}
	if r.values+values > r.valuesMax || r.text+text > r.textMax {
		r.exhausted = true
		r.fail(n, "", "YAML aliases (*name) repeat more here than the file could hold written out (%d values or %d bytes of text): write the repeated parts out", r.valuesMax, r.textMax)
		return false
	}
	r.values += values
	r.text += text
	return true
}

// quotedMax bounds a value quoted in a message: enough to recognise it;
// messageMax bounds a whole message, whatever its parts.
const (
	quotedMax  = 60
	messageMax = 1000
)

// shortQuoted shortens the long strings a format quotes (%q), so that a
// message stays one readable line whatever the value.
func shortQuoted(format string, args []any) []any {
	var out []any
	arg := 0
	for i := 0; i < len(format) && arg < len(args); i++ {
		if format[i] != '%' {
			continue
		}
		j := i + 1
		for j < len(format) && strings.IndexByte("+-# 0123456789.", format[j]) >= 0 {
			j++
		}
		if j >= len(format) {
			break
		}
		i = j
		if format[j] == '%' {
			continue
		}
		if s, ok := args[arg].(string); ok && format[j] == 'q' && len(s) > quotedMax+20 {
			if out == nil {
				out = append([]any(nil), args...)
			}
			out[arg] = cutLong(s)
		}
		arg++
	}
	if out == nil {
		return args
	}
	return out
}

// cutLong keeps a long value's start and says how long it was.
func cutLong(s string) string {
	if len(s) <= quotedMax+20 {
		return s
	}
	cut := quotedMax
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d bytes)", len(s))
}

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		return fmt.Sprintf("%q", cutLong(n.Value))
	}
	return "something else"
}

// field is one key of a mapping.
type field struct {
	name  string
	key   *yaml.Node
	value *yaml.Node
	path  string
}

// fields returns a mapping's keys in order. Unknown keys (not in known) and
// repeated keys are errors; a suggestion names the closest known key.
func (r *reader) fields(n *yaml.Node, path string, known []string) []field {
	n = deref(n)
	if n == nil {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			return nil
		}
		r.fail(n, path, "want a mapping of keys, got %s", kindName(n))
		return nil
	}
	seen := map[string]bool{}
	var out []field
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), deref(n.Content[i+1])
		if !r.spend(k, 1, len(k.Value)) {
			return nil
		}
		if k.Kind != yaml.ScalarNode {
			r.fail(k, path, "a key must be a plain word, got %s", kindName(k))
			continue
		}
		if k.Value == "<<" {
			r.fail(k, path, "merge keys (<<) are not supported; write the keys out")
			continue
		}
		p := join(path, k.Value)
		if seen[k.Value] {
			r.fail(k, p, "key given twice")
			continue
		}
		seen[k.Value] = true
		if known != nil && !contains(known, k.Value) {
			msg := "unknown key"
			if why, ok := writtenElsewhere[k.Value]; ok {
				msg = why
			} else if why, ok := notModelled[k.Value]; ok {
				msg = "a Kafka key kafkasim does not model: " + why
			} else if s := suggest(k.Value, known); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			} else {
				msg += " (known here: " + strings.Join(known, ", ") + ")"
			}
			r.fail(k, p, "%s", msg)
			continue
		}
		out = append(out, field{name: k.Value, key: k, value: v, path: p})
	}
	return out
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// suggest returns the known key closest to a misspelled one, if it is close.
func suggest(got string, known []string) string {
	limit := max(2, len(got)/4)
	best, bestD := "", math.MaxInt
	for _, k := range known {
		// Lengths further apart than the limit cannot be within it; the
		// check keeps a long key from costing its length times every known one.
		if abs(len(got)-len(k)) > limit {
			continue
		}
		if d := editDistance(got, k); d < bestD {
			best, bestD = k, d
		}
	}
	if bestD <= limit {
		return best
	}
	return ""
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// scalar returns a scalar's text, or fails.
func (r *reader) scalar(f field) (string, bool) {
	n := f.value
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		got := "nothing"
		if n != nil {
			got = kindName(n)
		}
		r.fail(nodeOr(n, f.key), f.path, "want a single value, got %s", got)
		return "", false
	}
	if !r.spend(n, 0, len(n.Value)) {
		return "", false
	}
	return n.Value, true
}

func nodeOr(n, alt *yaml.Node) *yaml.Node {
	if n != nil {
		return n
	}
	return alt
}

func (r *reader) str(f field) string {
	s, _ := r.scalar(f)
	return s
}

func (r *reader) int(f field, lo, hi int64) (int64, bool) {
	s, ok := r.scalar(f)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 10, 64)
	if err != nil {
		r.fail(f.value, f.path, "want an integer, got %q", s)
		return 0, false
	}
	if n < lo || n > hi {
		r.fail(f.value, f.path, "%d is out of range: want %d..%d", n, lo, hi)
		return 0, false
	}
	return n, true
}

func (r *reader) uint(f field) (uint64, bool) {
	s, ok := r.scalar(f)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		r.fail(f.value, f.path, "want a non-negative integer, got %q", s)
		return 0, false
	}
	return n, true
}

func (r *reader) bool(f field) (bool, bool) {
	s, ok := r.scalar(f)
	if !ok {
		return false, false
	}
	switch strings.ToLower(s) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	r.fail(f.value, f.path, "want true or false, got %q", s)
	return false, false
}

func (r *reader) float(f field, lo, hi float64) (float64, bool) {
	s, ok := r.scalar(f)
	if !ok {
		return 0, false
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(x) {
		r.fail(f.value, f.path, "want a number, got %q", s)
		return 0, false
	}
	if x < lo || x > hi {
		r.fail(f.value, f.path, "%v is out of range: want %v..%v", x, lo, hi)
		return 0, false
	}
	return x, true
}

// parseDuration accepts Go/Kafka style durations ("250ms", "30s", "1h30m")
// and a bare 0.
func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("want a duration such as 250ms, 30s or 5m, got %q", cutLong(s))
	}
	return d, nil
}

func (r *reader) duration(f field, lo, hi time.Duration) (time.Duration, bool) {
	s, ok := r.scalar(f)
	if !ok {
		return 0, false
	}
	d, err := parseDuration(s)
	if err != nil {
		r.fail(f.value, f.path, "%v", err)
		return 0, false
	}
	if d < lo || d > hi {
		r.fail(f.value, f.path, "%v is out of range: want %v..%v", d, lo, hi)
		return 0, false
	}
	return d, true
}

// rangeOf parses "1ms..5ms" or a single duration.
func (r *reader) rangeOf(f field, hi time.Duration) (sim.Range, bool) {
	s, ok := r.scalar(f)
	if !ok {
		return sim.Range{}, false
	}
	lo, up, found := strings.Cut(s, "..")
	if !found {
		up = lo
	}
	a, err1 := parseDuration(lo)
	b, err2 := parseDuration(up)
	if err1 != nil || err2 != nil {
		r.fail(f.value, f.path, "want a duration or a range such as 1ms..5ms, got %q", s)
		return sim.Range{}, false
	}
	if a < 0 || b < a {
		r.fail(f.value, f.path, "range %q: want 0 <= low <= high", s)
		return sim.Range{}, false
	}
	if b > hi {
		r.fail(f.value, f.path, "%v is out of range: want at most %v", b, hi)
		return sim.Range{}, false
	}
	return sim.Range{Min: a, Max: b}, true
}

// rate parses "100/s", "6000/m", "2/ms" or a bare number (per second).
func (r *reader) rate(f field) (float64, bool) {
	s, ok := r.scalar(f)
	if !ok {
		return 0, false
	}
	num, unit, found := strings.Cut(strings.TrimSpace(s), "/")
	x, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		r.fail(f.value, f.path, "want a rate such as 100/s, got %q", s)
		return 0, false
	}
	per := time.Second
	if found {
		u := strings.TrimSpace(unit)
		if !strings.ContainsAny(u[:min(1, len(u))], "0123456789") {
			u = "1" + u
		}
		d, err := time.ParseDuration(u)
		if err != nil || d <= 0 {
			r.fail(f.value, f.path, "want a rate such as 100/s, 500/m or 2/ms, got %q", s)
			return 0, false
		}
		per = d
	}
	perSecond := x * float64(time.Second) / float64(per)
	if perSecond < 0 || perSecond > rateMax {
		r.fail(f.value, f.path, "%s is out of range: want 0..%d records per second per instance", s, int(rateMax))
		return 0, false
	}
	return perSecond, true
}

// rateMax bounds one producer instance: enough to saturate a simulated
// cluster, small enough that a typo does not make a run that never ends.
const rateMax = 100_000

// list returns a sequence's items, or fails. An empty item (a bare "-", or
// null) is an error said here, and comes back as nil so that indexes keep
// matching the file: callers skip nil items. An empty item is almost always
// an unfinished edit; taking it for an item with every default, or for no
// item, would run something the file does not say.
func (r *reader) list(f field) []*yaml.Node {
	n := f.value
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		r.fail(n, f.path, "want a list, got %s", kindName(n))
		return nil
	}
	if !r.spend(n, len(n.Content), 0) {
		return nil
	}
	items := make([]*yaml.Node, len(n.Content))
	for i, c := range n.Content {
		items[i] = deref(c)
		if isNull(items[i]) {
			hint := "write it out, or remove the '-'"
			if n.Style&yaml.FlowStyle != 0 {
				hint = "write it out, or remove it"
			}
			r.fail(c, index(f.path, i), "an empty item: %s", hint)
			items[i] = nil
		}
	}
	return items
}

// isNull reports whether a value is absent: no node, "~", "null" or nothing
// after the colon.
func isNull(n *yaml.Node) bool {
	return n == nil || n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// strings reads a list of plain values (a single value counts as a list of one).
func (r *reader) strings(f field) []string {
	if f.value != nil && f.value.Kind == yaml.ScalarNode && f.value.Tag != "!!null" {
		if s, ok := r.scalar(f); ok {
			return []string{s}
		}
		return nil
	}
	var out []string
	for i, n := range r.list(f) {
		if n == nil {
			continue
		}
		s, ok := r.scalar(field{value: n, key: n, path: index(f.path, i)})
		if ok {
			out = append(out, s)
		}
	}
	return out
}

var safeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// name checks a name that becomes a folder or a process name: it must not
// escape the output folder nor contain separators.
func (r *reader) name(f field, what string) string {
	s, ok := r.scalar(f)
	if !ok {
		return ""
	}
	if len(s) > 100 || !safeName.MatchString(s) || strings.Contains(s, "..") {
		r.fail(f.value, f.path, "%q is not a valid %s: use letters, digits, '.', '_' and '-', starting with a letter or digit, no '..', at most 100 characters", s, what)
		return ""
	}
	return s
}
