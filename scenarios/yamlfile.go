package scenarios

import (
	"go.yaml.in/yaml/v3"
)

// The strict reading of scenario files, for kafkasim's other YAML files
// (sweep files, read in package sweep): the same file:line:column: key
// errors, the same bounds on what a file may cost, the same suggestions for
// a misspelled key. A thin layer over reader, so that every file kafkasim
// reads is read by one implementation.

// YAMLReader walks one YAML file, collecting errors with their positions.
type YAMLReader struct{ r *reader }

// YAMLField is one key of a mapping: its name, its key and value nodes, and
// the path errors name it by ("plots[0].x").
type YAMLField struct {
	Name  string
	Key   *yaml.Node
	Value *yaml.Node
	Path  string
}

// ReadYAML reads a file of one YAML document, as strictly as a scenario
// file: its root node, and a reader to walk it with.
func ReadYAML(path string) (*YAMLReader, *yaml.Node, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, nil, err
	}
	root, err := parseDocument(path, data)
	if err != nil {
		return nil, nil, err
	}
	return &YAMLReader{newReader(path, len(data))}, root, nil
}

func (f YAMLField) field() field {
	return field{name: f.Name, key: f.Key, value: f.Value, path: f.Path}
}

// Fields returns a mapping's keys in order. Unknown keys (not in known; nil
// accepts any) and repeated keys are errors; a suggestion names the closest
// known key.
func (y *YAMLReader) Fields(n *yaml.Node, path string, known []string) []YAMLField {
	fs := y.r.fields(n, path, known)
	out := make([]YAMLField, len(fs))
	for i, f := range fs {
		out[i] = YAMLField{Name: f.name, Key: f.key, Value: f.value, Path: f.path}
	}
	return out
}

// Name reads a name that becomes a folder or a process name: it must not
// escape the output folder nor contain separators (what names it in the
// error).
func (y *YAMLReader) Name(f YAMLField, what string) string { return y.r.name(f.field(), what) }

// Str reads a single value ("" after an error).
func (y *YAMLReader) Str(f YAMLField) string { return y.r.str(f.field()) }

// Scalar reads a single value; false after an error.
func (y *YAMLReader) Scalar(f YAMLField) (string, bool) { return y.r.scalar(f.field()) }

// Int reads an integer in lo..hi; false after an error.
func (y *YAMLReader) Int(f YAMLField, lo, hi int64) (int64, bool) { return y.r.int(f.field(), lo, hi) }

// Strings reads a list of values (a single value is a list of one).
func (y *YAMLReader) Strings(f YAMLField) []string { return y.r.strings(f.field()) }

// List reads a list's items; an empty item is an error, and nil in its
// place so that indexes keep matching the file.
func (y *YAMLReader) List(f YAMLField) []*yaml.Node { return y.r.list(f.field()) }

// Fail records an error at node n (its line and column), naming key.
func (y *YAMLReader) Fail(n *yaml.Node, key, format string, args ...any) {
	y.r.fail(n, key, format, args...)
}

// Failures counts the errors so far.
func (y *YAMLReader) Failures() int { return y.r.failures }

// Report is the errors found, in file order (nil if none).
func (y *YAMLReader) Report() Errors { return y.r.report() }

// ItemPath names item i of the list at path in errors ("axes.acks[1]").
func ItemPath(path string, i int) string { return index(path, i) }

// Suggest returns the name in known closest to a misspelled one, if it is
// close ("" if none is).
func Suggest(got string, known []string) string { return suggest(got, known) }

// IsSafeName reports whether a name may become a folder or a file name: it
// starts with a letter or a digit, then letters, digits, '.', '_' and '-'.
func IsSafeName(s string) bool { return safeName.MatchString(s) }
