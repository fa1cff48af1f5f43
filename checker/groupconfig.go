package checker

import (
	"sort"
	"strings"
)

// Group settings: what a consumer group's findings are judged by.

// Defaults of a group the configuration does not name: Kafka's
// enable.auto.commit=true (at-least-once) and group.protocol=classic; an
// external store that applies every effect; auto.offset.reset=earliest, the
// stricter of the two (Kafka's default, latest, would excuse every record a
// group skipped where it started).
const (
	defaultCommit        = "auto"
	defaultSideEffects   = "plain"
	defaultGroupProtocol = "classic"
)

// consumerOf returns the settings a finding about group (found at process)
// is judged by: the entry naming the group (the longest Prefix matching the
// process among several), else the entry matching the process by Prefix
// (consumer), with the defaults filled in.
func (c *Config) consumerOf(group, process string) ConsumerGuarantees {
	best, bestLen := ConsumerGuarantees{}, -2
	for _, g := range c.Consumers {
		if group == "" || g.Group != group {
			continue
		}
		l := -1
		if g.Prefix != "" && (process == g.Prefix || strings.HasPrefix(process, g.Prefix+"-")) {
			l = len(g.Prefix)
		}
		if l > bestLen {
			best, bestLen = g, l
		}
	}
	if bestLen == -2 {
		return fillGroupDefaults(c.consumer(process))
	}
	if best.Isolation == "" {
		best.Isolation = "read_uncommitted"
	}
	if best.AutoOffsetReset == "" {
		best.AutoOffsetReset = "earliest"
	}
	if best.Commit == "" {
		best.Commit = defaultCommit
	}
	return fillGroupDefaults(best)
}

func fillGroupDefaults(g ConsumerGuarantees) ConsumerGuarantees {
	if g.SideEffects == "" {
		g.SideEffects = defaultSideEffects
	}
	if g.GroupProtocol == "" {
		g.GroupProtocol = defaultGroupProtocol
	}
	return g
}

// groupConfigured reports whether the configuration covers a group: an
// entry names it, or matches the first process that acted for it.
func (c *Config) groupConfigured(group, process string) bool {
	for _, g := range c.Consumers {
		if g.Group == group || (g.Prefix != "" && (process == g.Prefix || strings.HasPrefix(process, g.Prefix+"-"))) {
			return true
		}
	}
	return false
}

// groupsAssumed words the defaults assumed for the groups of the history the
// configuration does not cover ("" when none).
func (c *Config) groupsAssumed(a *analyzer) string {
	var names []string
	for i, name := range a.members.groupNames {
		if !c.groupConfigured(name, a.members.groupFirst[i]) {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	sort.Strings(names)
	return "groups " + strings.Join(capList(names, 8), ", ") + ": not configured; assumed commit: auto (enable.auto.commit=true: at-least-once), group.protocol=classic (a generation is the group's: a KIP-848 group checked as classic reads its members' differing epochs as fenced), side-effects: plain, and auto.offset.reset=earliest (Kafka's default is latest, which would excuse the records a group skipped where it started)"
}
