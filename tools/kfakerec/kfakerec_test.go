package main

// A short end-to-end check: record a small history against kfake, check it is
// well formed and complete, then check every mutation applies and changes it.

import (
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"
)

func recordShort(t *testing.T, workload string, mod ...func(*Config)) *hist {
	t.Helper()
	out := filepath.Join(t.TempDir(), workload+".jsonl")
	cfg := Config{Workload: workload, Out: out, Duration: 1500 * time.Millisecond, Rate: 100,
		Producers: 2, Readers: 2, Keys: 10, Seed: 1, Brokers: 3, Partitions: 4, Topic: "orders",
		Group: "billing", GroupProtocol: "classic", AbortFrac: 0.25, MaxPoll: 100}
	for _, m := range mod {
		m(&cfg)
	}
	rec, err := NewRecorder(out)
	if err != nil {
		t.Fatal(err)
	}
	env, err := startCluster(cfg, rec)
	if err != nil {
		t.Fatal(err)
	}
	switch workload {
	case "assign":
		err = workloadAssign(env)
	case "group":
		err = workloadGroup(env)
	case "txn":
		err = workloadTxn(env)
	}
	env.close()
	if cerr := rec.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	h, err := readHistory(out)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// checkWellFormed: one op in flight per process, every invoke completed,
// every acknowledged (and not aborted) send returned by the final read.
func checkWellFormed(t *testing.T, h *hist) {
	t.Helper()
	pending := map[string]bool{}
	for i, l := range h.lines {
		if l.typ == "invoke" {
			if pending[l.process] {
				t.Fatalf("line %d: %s has two operations in flight", i, l.process)
			}
			pending[l.process] = true
		} else {
			if !pending[l.process] || l.inv == nil || l.inv.f != l.f {
				t.Fatalf("line %d: completion without matching invoke", i)
			}
			pending[l.process] = false
		}
	}
	final := map[string]bool{}
	for _, p := range h.polls {
		if isFinal(p) {
			for _, r := range records(p) {
				final[str(r["value"])] = true
			}
		}
	}
	if len(h.sends) == 0 {
		t.Fatal("no acknowledged sends")
	}
	for v := range h.sends {
		if !final[v] && !h.aborted[v] {
			t.Fatalf("acknowledged send %s missing from the final read", v)
		}
	}
}

func TestRecordAndMutate(t *testing.T) {
	for _, w := range []string{"assign", "group", "txn"} {
		t.Run(w, func(t *testing.T) {
			h := recordShort(t, w)
			checkWellFormed(t, h)
			for i, m := range mutations {
				if m.name == "aborted-read" && w != "txn" {
					continue
				}
				c := h.clone()
				lab, err := m.fn(c, rand.New(rand.NewPCG(1, uint64(i))))
				if err != nil {
					t.Fatalf("%s: %v", m.name, err)
				}
				if lab["anomaly"] != m.name {
					t.Fatalf("%s: label %v", m.name, lab)
				}
				dirty := 0
				for _, l := range c.lines {
					if l.dirty {
						dirty++
					}
				}
				if dirty == 0 || len(c.lines) != len(h.lines) {
					t.Fatalf("%s: %d lines edited, %d -> %d lines", m.name, dirty, len(h.lines), len(c.lines))
				}
			}
		})
	}
}

// A member that processes and crashes: every record it processed has a
// process op between the poll that returned it and (after-processing) the
// commit that covers it; c-1 crashes once, halfway through a poll's records,
// leaving only the record in processing open, and records nothing after.
func TestProcessAndCrash(t *testing.T) {
	for _, mode := range []string{"after-processing", "before-processing"} {
		t.Run(mode, func(t *testing.T) {
			h := recordShort(t, "group", func(c *Config) {
				c.Commit, c.Processing, c.Crash = mode, time.Millisecond, true
				c.Duration, c.Rate = 2*time.Second, 150
			})
			processed, crashes, after := 0, 0, 0
			open := map[string]*line{}
			for _, l := range h.lines {
				if l.process == "c-1" && crashes > 0 && l.f != "crash" {
					after++
				}
				switch {
				case l.f == "process" && l.typ == "ok":
					processed++
					delete(open, l.process)
				case l.f == "process":
					open[l.process] = l
				case l.f == "crash" && l.typ == "invoke":
					crashes++
					if l.process != "c-1" {
						t.Fatalf("%s crashed", l.process)
					}
				}
			}
			if processed == 0 || crashes != 1 || after != 0 {
				t.Fatalf("%d records processed, %d crashes, %d ops of c-1 after its crash", processed, crashes, after)
			}
			for p := range open {
				if p != "c-1" {
					t.Fatalf("%s left a process op open", p)
				}
			}
		})
	}
}
