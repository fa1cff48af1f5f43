package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
)

// ErrUnknownSelector is returned by a Resolver for a selector it does not
// understand, so that the world's built-in selectors get a turn.
var ErrUnknownSelector = errors.New("unknown target selector")

// Resolver turns a fault's target selector into nodes at the moment the fault
// fires. The model provides one for selectors that need its state
// ("leader(orders-0)", "active-controller"); the world understands:
//
//	broker-1         a node by name
//	all              every node
//	rack(a)          every node in rack a
//	role(broker)     every node whose role is broker
//	random-broker    one node whose role is broker, drawn from the fault's stream
//	random           one node of any role
type Resolver interface {
	ResolveTarget(selector string) ([]NodeID, error)
}

// SelectorValidator is implemented by resolvers that can check a selector's
// form before a run starts, so that a typo is an input error and not a fault
// that silently never fires.
type SelectorValidator interface {
	ValidateSelector(selector string) error
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
	candidates, random, err := w.builtinCandidates(selector)
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
	candidates, _, err := w.builtinCandidates(selector)
	if err != nil {
		return err
	}
	if len(candidates) == 0 {
		return fmt.Errorf("target %s names no node", selector)
	}
	return nil
}

func (w *World) builtinCandidates(selector string) (ids []NodeID, random bool, err error) {
	if id, ok := w.byName[selector]; ok {
		return []NodeID{id}, false, nil
	}
	if arg, ok := call(selector, "rack"); ok {
		return w.filter(func(s *nodeSlot) bool { return s.spec.Rack == arg }), false, nil
	}
	if arg, ok := call(selector, "role"); ok {
		return w.filter(func(s *nodeSlot) bool { return s.spec.Role == arg }), false, nil
	}
	switch {
	case selector == "all":
		return w.Nodes(), false, nil
	case selector == "random":
		return w.Nodes(), true, nil
	case strings.HasPrefix(selector, "random-"):
		role := strings.TrimPrefix(selector, "random-")
		ids := w.filter(func(s *nodeSlot) bool { return s.spec.Role == role })
		if len(ids) == 0 {
			return nil, true, fmt.Errorf("target %s: no node has role %q", selector, role)
		}
		return ids, true, nil
	}
	return nil, false, fmt.Errorf("target %q: no node by that name, and not a selector (all, random, random-ROLE, rack(R), role(R))", selector)
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
