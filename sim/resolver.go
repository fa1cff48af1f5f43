package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// ErrUnknownSelector is returned by a Resolver for a selector it does not
// understand, so that the world's built-in selectors get a turn.
var ErrUnknownSelector = errors.New("unknown target selector")

// Resolver turns a fault's target selector into nodes at the moment the fault
// fires. The model provides one for selectors that need its state
// ("leader(orders-0)", "active-controller"); the world understands the
// forms of worldSelectors: a node's name, rack(R), role(R), random-ROLE,
// random and all.
type Resolver interface {
	ResolveTarget(selector string) ([]NodeID, error)
}

// SelectorValidator is implemented by resolvers that can check a selector's
// form before a run starts, so that a typo is an input error and not a fault
// that silently never fires.
type SelectorValidator interface {
	ValidateSelector(selector string) error
}

// SelectorLister is implemented by resolvers that name the selector forms
// they understand ("leader(TOPIC-PARTITION)"), so that a message about a
// target the world does not know lists them with the world's own.
type SelectorLister interface {
	SelectorForms() []string
}

// NodeNameForm stands, in SelectorForms, for a node's own name.
const NodeNameForm = "NODE"

// worldSelector is one form of target selector the world understands.
type worldSelector struct {
	// form is the selector as messages write it.
	form string
	// candidates returns the nodes sel may name and whether the fault acts
	// on one drawn from them; matched is false when sel has another form.
	candidates func(w *World, sel string) (ids []NodeID, random, matched bool)
	// instances are this world's selectors of the form, for messages (nil:
	// the form as it is).
	instances func(w *World) []string
}

// worldSelectors are tried in order: a node's name wins over a selector.
// Messages listing what a target may be are made from this table.
var worldSelectors = []worldSelector{
	{form: NodeNameForm,
		candidates: func(w *World, sel string) ([]NodeID, bool, bool) {
			id, ok := w.byName[sel]
			return []NodeID{id}, false, ok
		},
		instances: func(w *World) []string { return nodeNameRuns(w) }},
	{form: "rack(RACK)",
		candidates: func(w *World, sel string) ([]NodeID, bool, bool) {
			arg, ok := call(sel, "rack")
			return w.filter(func(s *nodeSlot) bool { return s.spec.Rack == arg }), false, ok
		},
		instances: func(w *World) []string {
			return w.distinct(func(s *nodeSlot) string { return s.spec.Rack }, "rack(", ")")
		}},
	{form: "role(ROLE)",
		candidates: func(w *World, sel string) ([]NodeID, bool, bool) {
			arg, ok := call(sel, "role")
			return w.filter(func(s *nodeSlot) bool { return s.spec.Role == arg }), false, ok
		},
		instances: func(w *World) []string {
			return w.distinct(func(s *nodeSlot) string { return s.spec.Role }, "role(", ")")
		}},
	{form: "random-ROLE",
		candidates: func(w *World, sel string) ([]NodeID, bool, bool) {
			role, ok := strings.CutPrefix(sel, "random-")
			if !ok {
				return nil, true, false
			}
			return w.filter(func(s *nodeSlot) bool { return s.spec.Role == role }), true, true
		},
		instances: func(w *World) []string {
			return w.distinct(func(s *nodeSlot) string { return s.spec.Role }, "random-", "")
		}},
	{form: "random",
		candidates: func(w *World, sel string) ([]NodeID, bool, bool) {
			return w.Nodes(), true, sel == "random"
		}},
	{form: "all",
		candidates: func(w *World, sel string) ([]NodeID, bool, bool) {
			return w.Nodes(), false, sel == "all"
		}},
}

// SelectorForms lists the world's selector forms in the order it tries them;
// NodeNameForm stands for a node's name.
func SelectorForms() []string {
	out := make([]string, len(worldSelectors))
	for i, s := range worldSelectors {
		out[i] = s.form
	}
	return out
}

// SetResolver installs the model's resolver; the built-in selectors remain as
// a fallback.
func (w *World) SetResolver(r Resolver) { w.faults.resolver = r }

// Resolve returns the nodes a selector names now. For random selectors, eligible
// says which nodes the fault can act on (a crash wants a running node); the
// draw falls back to every candidate when none is eligible.
func (w *World) Resolve(selector string, rng *rand.Rand, eligible func(NodeID) bool) ([]NodeID, error) {
	if r := w.faults.resolver; r != nil {
		ids, err := r.ResolveTarget(selector)
		if !errors.Is(err, ErrUnknownSelector) {
			return ids, err
		}
	}
	candidates, random, _, err := w.builtinCandidates(selector)
	if err != nil {
		return nil, err
	}
	if !random {
		return candidates, nil
	}
	if len(candidates) == 0 {
		return nil, fmt.Errorf("target %s: no such node", selector)
	}
	pool := candidates
	if eligible != nil {
		var ok []NodeID
		for _, id := range candidates {
			if eligible(id) {
				ok = append(ok, id)
			}
		}
		if len(ok) > 0 {
			pool = ok
		}
	}
	return []NodeID{pool[rng.IntN(len(pool))]}, nil
}

// ValidateSelector checks a selector's form and that the nodes it names exist.
func (w *World) ValidateSelector(selector string) error {
	if v, ok := w.faults.resolver.(SelectorValidator); ok {
		err := v.ValidateSelector(selector)
		if !errors.Is(err, ErrUnknownSelector) {
			return err
		}
	}
	ids, _, form, err := w.builtinCandidates(selector)
	if err != nil || len(ids) > 0 {
		return err
	}
	var here []string
	if form.instances != nil {
		here = form.instances(w)
	}
	if len(here) == 0 {
		return fmt.Errorf("target %s names no node of this cluster", selector)
	}
	return fmt.Errorf("target %s names no node of this cluster (here: %s)", selector, strings.Join(here, ", "))
}

// builtinCandidates resolves a selector of the world's own forms, or says
// what a target may be.
func (w *World) builtinCandidates(selector string) (ids []NodeID, random bool, form *worldSelector, err error) {
	for i := range worldSelectors {
		s := &worldSelectors[i]
		if ids, random, matched := s.candidates(w, selector); matched {
			return ids, random, s, nil
		}
	}
	return nil, false, nil, fmt.Errorf("target %q: no node has that name, and it is not a selector; a target is %s", selector, w.TargetForms())
}

// TargetForms lists, for messages, every way a fault may name its targets
// in this world: its nodes' names, the resolver's selectors and the world's,
// each with this world's instances where it has them.
func (w *World) TargetForms() string {
	var parts []string
	for i, s := range worldSelectors {
		if i == 1 {
			// The model's selectors come right after the names: they are
			// what a scenario most often means.
			if l, ok := w.faults.resolver.(SelectorLister); ok {
				parts = append(parts, l.SelectorForms()...)
			}
		}
		if s.instances == nil {
			parts = append(parts, s.form)
			continue
		}
		if got := s.instances(w); len(got) > 0 {
			parts = append(parts, got...)
		} else {
			parts = append(parts, s.form)
		}
	}
	return strings.Join(parts, ", ")
}

// nodeNameRuns lists the world's node names, a run of names that differ only
// in a number counting up by one written as "broker-1..broker-3", and at
// most nameRunsMax entries.
func nodeNameRuns(w *World) []string {
	const nameRunsMax = 24
	var out []string
	var prefix string
	first, last := -1, -1
	flush := func() {
		switch {
		case first < 0:
		case first == last:
			out = append(out, prefix+strconv.Itoa(first))
		default:
			out = append(out, fmt.Sprintf("%s%d..%s%d", prefix, first, prefix, last))
		}
		first, last = -1, -1
	}
	for _, s := range w.nodes {
		name := s.spec.Name
		i := strings.LastIndexFunc(name, func(r rune) bool { return r < '0' || r > '9' }) + 1
		n, err := strconv.Atoi(name[i:])
		if i == len(name) || err != nil || (len(name)-i > 1 && name[i] == '0') {
			flush()
			out = append(out, name)
			continue
		}
		if first >= 0 && name[:i] == prefix && n == last+1 {
			last = n
			continue
		}
		flush()
		prefix, first, last = name[:i], n, n
	}
	flush()
	if len(out) > nameRunsMax {
		out = append(out[:nameRunsMax-1], fmt.Sprintf("… (%d more)", len(out)-nameRunsMax+1))
	}
	return out
}

// distinct lists the distinct non-empty values of a node attribute in node
// order, each written as before+value+after.
func (w *World) distinct(attr func(*nodeSlot) string, before, after string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range w.nodes {
		if v := attr(s); v != "" && !seen[v] {
			seen[v] = true
			out = append(out, before+v+after)
		}
	}
	return out
}

func (w *World) filter(keep func(*nodeSlot) bool) []NodeID {
	var ids []NodeID
	for _, s := range w.nodes {
		if keep(s) {
			ids = append(ids, s.id)
		}
	}
	return ids
}

// call parses "name(arg)".
func call(selector, name string) (string, bool) {
	if strings.HasPrefix(selector, name+"(") && strings.HasSuffix(selector, ")") {
		return selector[len(name)+1 : len(selector)-1], true
	}
	return "", false
}

// ParseCall parses a selector of the form "name(arg)", for resolvers.
func ParseCall(selector, name string) (string, bool) { return call(selector, name) }
