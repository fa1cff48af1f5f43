package reports

import (
	"sort"
	"strconv"
	"strings"
)

// splitPartition splits a "topic-partition" name such as "orders-0" at its
// last dash, because topic names may themselves contain dashes. ok is false
// when the name does not end in a partition number.
func splitPartition(name string) (topic string, partition int64, ok bool) {
	i := strings.LastIndexByte(name, '-')
	if i < 0 {
		return name, -1, false
	}
	p, err := strconv.ParseInt(name[i+1:], 10, 32)
	if err != nil || p < 0 {
		return name, -1, false
	}
	return name[:i], p, true
}

// lessPartition orders partition names the way kafka-topics does: by topic,
// then by partition number (so orders-10 comes after orders-9, not after
// orders-1). Names that are not topic-partitions sort by plain text.
func lessPartition(a, b string) bool {
	ta, pa, oka := splitPartition(a)
	tb, pb, okb := splitPartition(b)
	if !oka || !okb || ta != tb {
		if ta != tb {
			return ta < tb
		}
		return a < b
	}
	return pa < pb
}

// sortPartitions sorts partition names in place with lessPartition.
func sortPartitions(names []string) {
	sort.SliceStable(names, func(i, j int) bool { return lessPartition(names[i], names[j]) })
}

// timelinePartitions lists every partition named anywhere in the timeline,
// sorted, so that a partition created mid-run still gets its lane.
func timelinePartitions(timeline []Sample) []string {
	seen := map[string]bool{}
	var names []string
	for _, s := range timeline {
		for _, p := range s.Partitions {
			if !seen[p.Name] {
				seen[p.Name] = true
				names = append(names, p.Name)
			}
		}
	}
	sortPartitions(names)
	return names
}

// joinIDs writes broker ids comma-separated, as kafka-topics prints
// replica lists ("2,3,1"); an empty list is an empty string.
func joinIDs(ids []int32) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(int64(id), 10))
	}
	return b.String()
}
