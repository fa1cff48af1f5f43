package scenarios

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

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
// are usually echoes of the first.
const errorsMax = 20

// reader walks a YAML document, collecting errors with their positions.
type reader struct {
	file string
	errs Errors
	// at remembers where some keys were written, for checks that come
	// later and compare several values.
	at map[string]*yaml.Node
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
	if len(r.errs) >= errorsMax {
		return
	}
	e := &Error{File: r.file, Key: key, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	r.errs = append(r.errs, e)
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
		return fmt.Sprintf("%q", n.Value)
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
			if why, ok := notModelled[k.Value]; ok {
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
	best, bestD := "", math.MaxInt
	for _, k := range known {
		if d := editDistance(got, k); d < bestD {
			best, bestD = k, d
		}
	}
	if bestD <= max(2, len(got)/4) {
		return best
	}
	return ""
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
		return 0, fmt.Errorf("want a duration such as 250ms, 30s or 5m, got %q", s)
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

// list returns a sequence's items, or fails.
func (r *reader) list(f field) []*yaml.Node {
	n := f.value
	if n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		r.fail(n, f.path, "want a list, got %s", kindName(n))
		return nil
	}
	items := make([]*yaml.Node, len(n.Content))
	for i, c := range n.Content {
		items[i] = deref(c)
	}
	return items
}

// strings reads a list of plain values (a single value counts as a list of one).
func (r *reader) strings(f field) []string {
	if f.value != nil && f.value.Kind == yaml.ScalarNode && f.value.Tag != "!!null" {
		return []string{f.value.Value}
	}
	var out []string
	for i, n := range r.list(f) {
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

// sortedKeys returns a map's keys in order, for messages.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
