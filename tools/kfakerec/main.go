// Command kfakerec records client-visible Kafka histories (kafkasim's docs/history.md)
// from the franz-go client talking to kfake, an in-process Kafka-protocol
// implementation, and makes variants of a clean history that each carry one
// known anomaly.
//
//	kfakerec record --workload assign|group|txn --out FILE [flags]
//	kfakerec mutate --in FILE --out-dir DIR
//
// Exit codes: 0 success, 1 the run failed, 2 bad usage.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	switch os.Args[1] {
	case "record":
		os.Exit(cmdRecord(os.Args[2:]))
	case "mutate":
		os.Exit(cmdMutate(os.Args[2:]))
	case "-h", "--help", "help":
		usage()
	default:
		fmt.Fprintf(os.Stderr, "kfakerec: unknown command %q\n", os.Args[1])
		usage()
		os.Exit(2)
	}
}

func usage() {
	fmt.Fprint(os.Stderr, `usage:
  kfakerec record --workload assign|group|txn --out FILE [flags]   (record --help for flags)
  kfakerec mutate --in FILE --out-dir DIR                          (one variant per known anomaly)
`)
}

func cmdRecord(args []string) int {
	fs := flag.NewFlagSet("record", flag.ContinueOnError)
	var cfg Config
	fs.StringVar(&cfg.Workload, "workload", "assign", "assign | group | txn")
	fs.StringVar(&cfg.Out, "out", "", "history file to write (JSON Lines)")
	fs.DurationVar(&cfg.Duration, "duration", 8*time.Second, "how long producers run")
	fs.IntVar(&cfg.Rate, "rate", 200, "sends per second per producer")
	fs.IntVar(&cfg.Producers, "producers", 2, "number of producers")
	fs.IntVar(&cfg.Readers, "readers", 2, "assign/txn: number of readers (txn alternates read_committed, read_uncommitted)")
	fs.IntVar(&cfg.Keys, "keys", 20, "key space: keys k0..k(N-1)")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "seed for keys and abort decisions (the run itself is not deterministic)")
	fs.IntVar(&cfg.Brokers, "brokers", 3, "kfake brokers")
	fs.IntVar(&cfg.Partitions, "partitions", 4, "partitions of the topic")
	fs.StringVar(&cfg.Topic, "topic", "orders", "topic name")
	fs.StringVar(&cfg.Group, "group", "billing", "group: consumer group name")
	fs.StringVar(&cfg.GroupProtocol, "group-protocol", "classic", "group: classic | consumer (KIP-848)")
	fs.Float64Var(&cfg.AbortFrac, "abort-frac", 0.25, "txn: fraction of transactions aborted on purpose")
	fs.IntVar(&cfg.MaxPoll, "max-poll", 100, "max records per poll")
	fs.DurationVar(&cfg.MoveLeaders, "move-leaders", 0, "move every partition leader to a random broker this often (0 = never)")
	fs.BoolVar(&cfg.Verbose, "v", false, "log franz-go client activity to stderr")
	fs.StringVar(&cfg.Commit, "commit", "poll", "group: poll (commit each poll's records, no process ops) | after-processing | before-processing")
	fs.DurationVar(&cfg.Processing, "processing", time.Millisecond, "group: time to process one record (with --commit *-processing)")
	fs.BoolVar(&cfg.Crash, "crash", false, "group: c-1 crashes halfway through a poll's records at 60 % instead of leaving")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if msg := validate(cfg); msg != "" {
		fmt.Fprintln(os.Stderr, "kfakerec record:", msg)
		return 2
	}

	rec, err := NewRecorder(cfg.Out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfakerec record:", err)
		return 2
	}
	began := time.Now()
	env, err := startCluster(cfg, rec)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfakerec record:", err)
		return 1
	}
	switch cfg.Workload {
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
		fmt.Fprintln(os.Stderr, "kfakerec record:", err)
		return 1
	}

	// Summary on stdout, one JSON object.
	counts := rec.Counts()
	total := 0
	for _, n := range counts {
		total += n
	}
	summary := map[string]any{
		"workload": cfg.Workload, "out": cfg.Out, "lines": rec.Lines(), "operations": total,
		"operations_by_f": counts, "wall_time_s": time.Since(began).Seconds(),
	}
	b, _ := json.Marshal(summary)
	fmt.Println(string(b))
	return 0
}

func validate(cfg Config) string {
	switch {
	case cfg.Workload != "assign" && cfg.Workload != "group" && cfg.Workload != "txn":
		return fmt.Sprintf("--workload must be assign, group or txn, not %q", cfg.Workload)
	case cfg.Out == "":
		return "--out FILE is required"
	case cfg.Duration <= 0 || cfg.Rate <= 0 || cfg.Producers <= 0 || cfg.Keys <= 0 || cfg.MaxPoll <= 0:
		return "--duration, --rate, --producers, --keys and --max-poll must be positive"
	case cfg.Readers < 0:
		return "--readers must not be negative"
	case cfg.Brokers <= 0 || cfg.Partitions <= 0:
		return "--brokers and --partitions must be positive"
	case cfg.GroupProtocol != "classic" && cfg.GroupProtocol != "consumer":
		return "--group-protocol must be classic or consumer"
	case cfg.Commit != "poll" && cfg.Commit != "after-processing" && cfg.Commit != "before-processing":
		return "--commit must be poll, after-processing or before-processing"
	case cfg.Crash && cfg.Workload != "group":
		return "--crash is for --workload group"
	case cfg.AbortFrac < 0 || cfg.AbortFrac > 1:
		return "--abort-frac must be within [0, 1]"
	}
	return ""
}

// sortedKeys is a small helper for deterministic iteration.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
