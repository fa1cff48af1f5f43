package main

// mutate.go: from a clean history, write variants that each carry exactly one
// known anomaly, with a one-line JSON label naming it.
//
// Every mutation edits the values of existing lines only (no line is added or
// removed), so index and time stay consistent; indexes are rewritten
// 0,1,2,... anyway. Mutations pick the records they edit so that the edit does
// not create a second anomaly where that can be avoided (see README).

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// line is one history line kept generic: the value is decoded into maps so an
// edit touches only what it means to touch; unknown fields survive.
type line struct {
	fields          map[string]json.RawMessage // every top-level field as read
	process, typ, f string
	value           map[string]any // decoded "value" (numbers as json.Number)
	dirty           bool           // value was edited; re-encode it on write
	inv             *line          // for a completion: its invoke line
}

// hist is a parsed history plus the indexes the mutations need.
type hist struct {
	lines []*line
	polls []*line // ok poll completions, in order
	// sends: value string -> ok send line
	sends map[string]*line
	// aborted / committed: values written inside aborted / committed txns
	aborted, committed map[string]bool
	posOf              map[*line]int    // line -> its index
	rebal              map[string][]int // process -> indexes of its assign/revoke lines
}

// reindex rebuilds posOf and rebal; lines are never added or removed, so this
// is needed once per parsed or cloned history.
func (h *hist) reindex() {
	h.posOf = make(map[*line]int, len(h.lines))
	h.rebal = map[string][]int{}
	for i, l := range h.lines {
		h.posOf[l] = i
		if l.f == "assign" || l.f == "revoke" {
			h.rebal[l.process] = append(h.rebal[l.process], i)
		}
	}
}

func readHistory(path string) (*hist, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := &hist{sends: map[string]*line{}, aborted: map[string]bool{}, committed: map[string]bool{}}
	pending := map[string]*line{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<28)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		l := &line{}
		if err := json.Unmarshal(sc.Bytes(), &l.fields); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		for k, dst := range map[string]*string{"process": &l.process, "type": &l.typ, "f": &l.f} {
			if err := json.Unmarshal(l.fields[k], dst); err != nil {
				return nil, fmt.Errorf("%s:%d: field %q: %v", path, n, k, err)
			}
		}
		if raw, ok := l.fields["value"]; ok && string(raw) != "null" {
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			if err := dec.Decode(&l.value); err != nil {
				return nil, fmt.Errorf("%s:%d: field \"value\": %v", path, n, err)
			}
		}
		if l.value == nil {
			l.value = map[string]any{}
		}
		if l.typ == "invoke" {
			pending[l.process] = l
		} else {
			l.inv = pending[l.process]
			delete(pending, l.process)
		}
		h.lines = append(h.lines, l)

		if l.typ != "ok" {
			continue
		}
		switch l.f {
		case "poll":
			h.polls = append(h.polls, l)
		case "send":
			h.sends[str(l.value["value"])] = l
		case "txn-abort", "txn-commit":
			sends, _ := l.value["sends"].([]any)
			for _, s := range sends {
				m, _ := s.(map[string]any)
				if l.f == "txn-abort" {
					h.aborted[str(m["value"])] = true
				} else {
					h.committed[str(m["value"])] = true
				}
			}
		}
	}
	h.reindex()
	return h, sc.Err()
}

// writeHistory writes lines with index renumbered 0..n-1 and the standard
// fields first, in the order of kafkasim's docs/history.md.
func writeHistory(path string, lines []*line) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for i, l := range lines {
		var b strings.Builder
		b.WriteString(fmt.Sprintf(`{"index":%d`, i))
		order := []string{"time", "process", "type", "f", "value"}
		var extra []string
		for k := range l.fields {
			if k != "index" && !contains(order, k) {
				extra = append(extra, k)
			}
		}
		sort.Strings(extra)
		for _, k := range append(order, extra...) {
			raw, ok := l.fields[k]
			if k == "value" && l.dirty {
				raw, err = marshalNoEscape(l.value)
				if err != nil {
					return err
				}
				ok = true
			}
			if !ok {
				continue
			}
			b.WriteString(fmt.Sprintf(",%q:", k))
			b.Write(raw)
		}
		b.WriteString("}\n")
		w.WriteString(b.String())
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// ---- small accessors over decoded values ----

func str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

func num(v any) int64 {
	if n, ok := v.(json.Number); ok {
		i, _ := n.Int64()
		return i
	}
	return -1
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// records returns a poll completion's records.
func records(l *line) []map[string]any {
	rs, _ := l.value["records"].([]any)
	out := make([]map[string]any, 0, len(rs))
	for _, r := range rs {
		if m, ok := r.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func setRecords(l *line, rs []map[string]any) {
	out := make([]any, len(rs))
	for i, r := range rs {
		out[i] = r
	}
	l.value["records"] = out
	l.dirty = true
}

func recTP(r map[string]any) string { return tp(str(r["topic"]), int32(num(r["partition"]))) }

func isFinal(l *line) bool {
	if l.inv == nil {
		return false
	}
	b, _ := l.inv.value["final"].(bool)
	return b
}

func isolation(l *line) string {
	if l.inv == nil {
		return ""
	}
	return str(l.inv.value["isolation"])
}

func copyRec(r map[string]any) map[string]any {
	c := make(map[string]any, len(r))
	for k, v := range r {
		c[k] = v
	}
	return c
}

// clone deep-copies the history so every mutation starts from the clean one.
func (h *hist) clone() *hist {
	c := &hist{sends: h.sends, aborted: h.aborted, committed: h.committed}
	idx := map[*line]*line{}
	for _, l := range h.lines {
		n := *l
		n.value = deepCopy(l.value).(map[string]any)
		idx[l] = &n
		c.lines = append(c.lines, &n)
	}
	for _, n := range c.lines {
		if n.inv != nil {
			n.inv = idx[n.inv]
		}
	}
	for _, p := range h.polls {
		c.polls = append(c.polls, idx[p])
	}
	c.sends = map[string]*line{}
	for k, v := range h.sends {
		c.sends[k] = idx[v]
	}
	c.reindex()
	return c
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = deepCopy(e)
		}
		return s
	}
	return v
}

// pos is the position of a line in h.lines (its index after renumbering).
func (h *hist) pos(l *line) int {
	if i, ok := h.posOf[l]; ok {
		return i
	}
	return -1
}

// ---- what was read ----

// readAt is one record occurrence in a poll.
type readAt struct {
	poll *line
	i    int // position in the poll's records
	rec  map[string]any
}

// occurrences maps "topic-partition" -> offset -> every poll occurrence.
func (h *hist) occurrences() map[string]map[int64][]readAt {
	out := map[string]map[int64][]readAt{}
	for _, p := range h.polls {
		for i, r := range records(p) {
			k := recTP(r)
			if out[k] == nil {
				out[k] = map[int64][]readAt{}
			}
			out[k][num(r["offset"])] = append(out[k][num(r["offset"])], readAt{p, i, r})
		}
	}
	return out
}

// lastRead returns, per partition, the highest offset any poll returned.
func lastRead(occ map[string]map[int64][]readAt) map[string]int64 {
	out := map[string]int64{}
	for k, offs := range occ {
		out[k] = -1
		for o := range offs {
			if o > out[k] {
				out[k] = o
			}
		}
	}
	return out
}

// shiftCommitted rewrites commit / fetch-committed offsets for partition k
// that equal from into to, so commits stay consistent with an edited read.
func (h *hist) shiftCommitted(k string, from, to int64) {
	for _, l := range h.lines {
		if l.f != "commit" && l.f != "fetch-committed" {
			continue
		}
		offs, ok := l.value["offsets"].(map[string]any)
		if !ok {
			continue
		}
		if v, ok := offs[k]; ok && num(v) == from {
			offs[k] = json.Number(fmt.Sprint(to))
			l.dirty = true
		}
	}
}

// pollsOf returns the ok polls of one process, in order.
func (h *hist) pollsOf(process string) []*line {
	var out []*line
	for _, p := range h.polls {
		if p.process == process {
			out = append(out, p)
		}
	}
	return out
}

// rebalancedBetween reports whether process had an assign/revoke between two
// of its lines.
func (h *hist) rebalancedBetween(process string, a, b *line) bool {
	pa, pb := h.pos(a), h.pos(b)
	rs := h.rebal[process]
	i := sort.SearchInts(rs, pa+1) // first assign/revoke after a
	return i < len(rs) && rs[i] < pb
}

// ---- the mutations ----

// label is the one-line expected-anomaly description written beside each
// variant.
type label map[string]any

type mutation struct {
	name string
	fn   func(h *hist, rng *rand.Rand) (label, error)
}

var mutations = []mutation{
	{"lost-write", mutLostWrite},
	{"duplicate", mutDuplicate},
	{"inconsistent-offsets", mutInconsistent},
	{"nonmonotonic-poll", mutNonmonotonic},
	{"poll-skip", mutPollSkip},
	{"aborted-read", mutAbortedRead},
}

// tailCandidates returns, per partition, the last record any poll returned,
// when its value was acknowledged by a send and (txn) not aborted. Editing the
// tail of a partition cannot leave a gap that some later read would expose.
func (h *hist) tailCandidates(occ map[string]map[int64][]readAt) []readAt {
	var out []readAt
	last := lastRead(occ)
	for _, k := range sortedKeys(last) {
		o := last[k]
		ra := occ[k][o][0]
		v := str(ra.rec["value"])
		if h.sends[v] == nil || h.aborted[v] {
			continue
		}
		out = append(out, ra)
	}
	return out
}

// (a) lost-write: an acknowledged record disappears from every poll.
func mutLostWrite(h *hist, rng *rand.Rand) (label, error) {
	occ := h.occurrences()
	cands := h.tailCandidates(occ)
	// "some later read should have returned it": keep candidates read by a
	// poll that completed after the send did.
	var ok []readAt
	for _, c := range cands {
		send := h.pos(h.sends[str(c.rec["value"])])
		for _, ra := range occ[recTP(c.rec)][num(c.rec["offset"])] {
			if h.pos(ra.poll) > send {
				ok = append(ok, c)
				break
			}
		}
	}
	if len(ok) == 0 {
		return nil, fmt.Errorf("no acknowledged record at the tail of a partition was read after its send")
	}
	c := ok[rng.IntN(len(ok))]
	k, off, val := recTP(c.rec), num(c.rec["offset"]), str(c.rec["value"])
	var edited []int
	for _, ra := range occ[k][off] {
		rs := records(ra.poll)
		rs = append(rs[:ra.i:ra.i], rs[ra.i+1:]...)
		setRecords(ra.poll, rs)
		edited = append(edited, h.pos(ra.poll))
	}
	// Commits that covered the record now cover one record less.
	h.shiftCommitted(k, off+1, off)
	return label{"anomaly": "lost-write", "partition": k, "offset": off, "value": val,
		"send_index": h.pos(h.sends[val]), "polls_edited": edited,
		"note": "acknowledged send never returned by any poll, including the final read"}, nil
}

// (b) duplicate: one value appears at two offsets (o and o+1) in polls.
func mutDuplicate(h *hist, rng *rand.Rand) (label, error) {
	occ := h.occurrences()
	cands := h.tailCandidates(occ)
	if len(cands) == 0 {
		return nil, fmt.Errorf("no acknowledged record at the tail of a partition")
	}
	c := cands[rng.IntN(len(cands))]
	k, off, val := recTP(c.rec), num(c.rec["offset"]), str(c.rec["value"])
	var edited []int
	for _, ra := range occ[k][off] {
		rs := records(ra.poll)
		dup := copyRec(ra.rec)
		dup["offset"] = json.Number(fmt.Sprint(off + 1))
		rs = append(rs[:ra.i+1], append([]map[string]any{dup}, rs[ra.i+1:]...)...)
		setRecords(ra.poll, rs)
		edited = append(edited, h.pos(ra.poll))
	}
	// Consumers that read the copy committed past it.
	h.shiftCommitted(k, off+1, off+2)
	return label{"anomaly": "duplicate", "partition": k, "value": val, "offsets": []int64{off, off + 1},
		"polls_edited": edited, "note": "value written once is read at two offsets"}, nil
}

// (c) inconsistent-offsets: two polls return different values at one offset.
func mutInconsistent(h *hist, rng *rand.Rand) (label, error) {
	occ := h.occurrences()
	type cand struct {
		k   string
		off int64
	}
	var cands []cand
	for _, k := range sortedKeys(occ) {
		for off, ras := range occ[k] {
			if len(ras) >= 2 && !h.aborted[str(ras[0].rec["value"])] {
				cands = append(cands, cand{k, off})
			}
		}
	}
	if len(cands) == 0 {
		return nil, fmt.Errorf("no offset was returned by two polls")
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].k != cands[j].k {
			return cands[i].k < cands[j].k
		}
		return cands[i].off < cands[j].off
	})
	c := cands[rng.IntN(len(cands))]
	ras := occ[c.k][c.off]
	ra := ras[len(ras)-1] // the latest poll that returned it
	orig := str(ra.rec["value"])
	mutant := "mutant:0"
	rs := records(ra.poll)
	rs[ra.i] = copyRec(ra.rec)
	rs[ra.i]["value"] = mutant
	setRecords(ra.poll, rs)
	return label{"anomaly": "inconsistent-offsets", "partition": c.k, "offset": c.off,
		"values": []string{orig, mutant}, "polls": []int{h.pos(ras[0].poll), h.pos(ra.poll)},
		"note": "the second value was never written by any send"}, nil
}

// (d) nonmonotonic-poll: a reader's poll returns offsets below the previous
// poll's last offset for that partition, with no assign/revoke in between.
func mutNonmonotonic(h *hist, rng *rand.Rand) (label, error) {
	type cand struct {
		a, b *line
		k    string
		back []map[string]any // records of a to replay at the start of b
	}
	var cands, finals []cand
	for _, proc := range h.readerProcesses() {
		polls := h.pollsOf(proc)
		lastPoll := map[string]*line{}
		for _, b := range polls {
			for _, k := range partitionsIn(b) {
				a := lastPoll[k]
				if a != nil && !h.rebalancedBetween(proc, a, b) {
					if ar := recsOf(a, k); len(ar) >= 2 {
						c := cand{a, b, k, ar[len(ar)-2:]}
						if isFinal(b) {
							finals = append(finals, c)
						} else {
							cands = append(cands, c)
						}
					}
				}
				lastPoll[k] = b
			}
		}
	}
	if len(cands) == 0 {
		cands = finals
	}
	if len(cands) == 0 {
		return nil, fmt.Errorf("no reader had two polls of a partition with two records in the first")
	}
	c := cands[rng.IntN(len(cands))]
	rs := records(c.b)
	at := 0
	for i, r := range rs {
		if recTP(r) == c.k {
			at = i
			break
		}
	}
	ins := []map[string]any{copyRec(c.back[0]), copyRec(c.back[1])}
	rs = append(rs[:at:at], append(ins, rs[at:]...)...)
	setRecords(c.b, rs)
	prevLast := num(c.back[1]["offset"])
	return label{"anomaly": "nonmonotonic-poll", "process": c.b.process, "partition": c.k,
		"polls": []int{h.pos(c.a), h.pos(c.b)}, "previous_last_offset": prevLast,
		"returned_offset": num(c.back[0]["offset"]),
		"note":            "the later poll starts by returning the previous poll's last two records again"}, nil
}

// (e) poll-skip: consecutive polls of a reader skip an offset that exists.
func mutPollSkip(h *hist, rng *rand.Rand) (label, error) {
	occ := h.occurrences()
	type cand struct {
		a, b *line
		k    string
		i    int // index in b's records of the record to drop
	}
	var cands, finals []cand
	for _, proc := range h.readerProcesses() {
		polls := h.pollsOf(proc)
		lastOff := map[string]int64{}
		lastPoll := map[string]*line{}
		// later[k] tells whether proc reads partition k again after b.
		for bi, b := range polls {
			for i, r := range records(b) {
				k, off := recTP(r), num(r["offset"])
				a, seen := lastPoll[k], lastPoll[k] != nil
				firstInB := seen && a != b
				if firstInB && off == lastOff[k]+1 && !h.rebalancedBetween(proc, a, b) &&
					h.sends[str(r["value"])] != nil && !h.aborted[str(r["value"])] &&
					len(occ[k][off]) >= 2 && readsAfter(polls[bi:], k, off) {
					c := cand{a, b, k, i}
					if isFinal(b) {
						finals = append(finals, c)
					} else {
						cands = append(cands, c)
					}
				}
				lastPoll[k], lastOff[k] = b, off
			}
		}
	}
	if len(cands) == 0 {
		cands = finals
	}
	if len(cands) == 0 {
		return nil, fmt.Errorf("no reader poll continues a partition from the previous poll")
	}
	c := cands[rng.IntN(len(cands))]
	rs := records(c.b)
	dropped := rs[c.i]
	off := num(dropped["offset"])
	rs = append(rs[:c.i:c.i], rs[c.i+1:]...)
	setRecords(c.b, rs)
	// The gap shows at the first poll (the edited one or a later one) that
	// returns a record of the partition above the dropped offset.
	shows := -1
	for _, p := range h.pollsOf(c.b.process) {
		if h.pos(p) >= h.pos(c.b) && readsAfter([]*line{p}, c.k, off) {
			shows = h.pos(p)
			break
		}
	}
	return label{"anomaly": "poll-skip", "process": c.b.process, "partition": c.k,
		"skipped_offset": off, "value": str(dropped["value"]),
		"polls": []int{h.pos(c.a), shows}, "poll_edited": h.pos(c.b),
		"note": "polls[0] returned skipped_offset-1; polls[1], the reader's next poll of the partition, " +
			"returns offsets above skipped_offset; the value was acknowledged and other readers return it"}, nil
}

// readsAfter reports whether polls (starting with the edited one) return a
// record of partition k above off, so that dropping off shows as a gap.
func readsAfter(polls []*line, k string, off int64) bool {
	for _, p := range polls {
		for _, r := range records(p) {
			if recTP(r) == k && num(r["offset"]) > off {
				return true
			}
		}
	}
	return false
}

// (f) aborted-read: a read_committed poll returns a value from an aborted
// transaction (inserted at its real offset, where the reader skipped it).
func mutAbortedRead(h *hist, rng *rand.Rand) (label, error) {
	if len(h.aborted) == 0 {
		return nil, fmt.Errorf("no aborted transaction in the history (txn workload only)")
	}
	type cand struct {
		p   *line
		at  int
		rec map[string]any
	}
	// Acknowledged sends of aborted transactions, by partition, by offset.
	abortedAt := map[string][]*line{}
	for _, v := range sortedKeys(h.aborted) {
		if s := h.sends[v]; s != nil {
			k := tp(str(s.value["topic"]), int32(num(s.value["partition"])))
			abortedAt[k] = append(abortedAt[k], s)
		}
	}
	for _, ss := range abortedAt {
		sort.Slice(ss, func(i, j int) bool { return num(ss[i].value["offset"]) < num(ss[j].value["offset"]) })
	}
	var cands, finals []cand
	for _, proc := range h.readerProcesses() {
		polls := h.pollsOf(proc)
		if len(polls) == 0 || isolation(polls[0]) != "read_committed" {
			continue
		}
		prev := map[string]int64{}
		for _, p := range polls {
			for i, r := range records(p) {
				k, off := recTP(r), num(r["offset"])
				before, ok := prev[k]
				if !ok {
					before = -1
				}
				// Aborted sends the reader jumped over between before and off.
				ss := abortedAt[k]
				for j := sort.Search(len(ss), func(j int) bool { return num(ss[j].value["offset"]) > before }); j < len(ss); j++ {
					s := ss[j]
					if so := num(s.value["offset"]); so < off {
						rec := map[string]any{"topic": s.value["topic"], "partition": s.value["partition"],
							"offset": s.value["offset"], "key": s.value["key"], "value": s.value["value"]}
						c := cand{p, i, rec}
						if isFinal(p) {
							finals = append(finals, c)
						} else {
							cands = append(cands, c)
						}
					} else {
						break
					}
				}
				prev[k] = off
			}
		}
	}
	if len(cands) == 0 {
		cands = finals
	}
	if len(cands) == 0 {
		return nil, fmt.Errorf("no read_committed reader skipped over an aborted record")
	}
	c := cands[rng.IntN(len(cands))]
	rs := records(c.p)
	rs = append(rs[:c.at:c.at], append([]map[string]any{c.rec}, rs[c.at:]...)...)
	setRecords(c.p, rs)
	return label{"anomaly": "aborted-read", "process": c.p.process, "partition": recTP(c.rec),
		"offset": num(c.rec["offset"]), "value": str(c.rec["value"]), "poll": h.pos(c.p),
		"send_index": h.pos(h.sends[str(c.rec["value"])]),
		"note":       "read_committed poll returns a record of an aborted transaction"}, nil
}

// readerProcesses lists processes that poll, sorted.
func (h *hist) readerProcesses() []string {
	set := map[string]bool{}
	for _, p := range h.polls {
		set[p.process] = true
	}
	return sortedKeys(set)
}

// partitionsIn lists the partitions a poll returned records of.
func partitionsIn(p *line) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range records(p) {
		if k := recTP(r); !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// recsOf returns a poll's records of one partition, in order.
func recsOf(p *line, k string) []map[string]any {
	var out []map[string]any
	for _, r := range records(p) {
		if recTP(r) == k {
			out = append(out, r)
		}
	}
	return out
}

func cmdMutate(args []string) int {
	fs := flag.NewFlagSet("mutate", flag.ContinueOnError)
	in := fs.String("in", "", "clean history (JSON Lines)")
	outDir := fs.String("out-dir", "", "directory for the variants")
	seed := fs.Uint64("seed", 1, "picks among candidate records")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *in == "" || *outDir == "" {
		fmt.Fprintln(os.Stderr, "kfakerec mutate: --in FILE and --out-dir DIR are required")
		return 2
	}
	h, err := readHistory(*in)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfakerec mutate:", err)
		return 2
	}
	if err := os.MkdirAll(*outDir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "kfakerec mutate:", err)
		return 2
	}
	wrote := 0
	for i, m := range mutations {
		c := h.clone()
		lab, err := m.fn(c, rand.New(rand.NewPCG(*seed, uint64(i))))
		if err != nil {
			fmt.Fprintf(os.Stderr, "kfakerec mutate: %s: skipped: %v\n", m.name, err)
			continue
		}
		lab["source"] = filepath.Base(*in)
		path := filepath.Join(*outDir, m.name+".jsonl")
		if err := writeHistory(path, c.lines); err != nil {
			fmt.Fprintln(os.Stderr, "kfakerec mutate:", err)
			return 1
		}
		b, _ := marshalNoEscape(lab)
		if err := os.WriteFile(filepath.Join(*outDir, m.name+".label"), append(b, '\n'), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "kfakerec mutate:", err)
			return 1
		}
		fmt.Printf("%s\t%s\n", path, b)
		wrote++
	}
	if wrote == 0 {
		return 1
	}
	return 0
}
