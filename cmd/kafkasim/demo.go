package main

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"kafkasim/sim"
	"kafkasim/sim/demo"
)

func newDemoCommand() *cobra.Command {
	var (
		seed             uint64
		nemesis          bool
		showTrace        int
		asJSON           bool
		checkDeterminism bool
	)
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the simulated world on a toy cluster (nodes pinging over a faulty network and disks)",
		Long: `demo shows the deterministic world before any Kafka runs on it: five nodes in
three racks ping each other and append every ping to a checksummed log on disk,
while a fault schedule partitions, kills, pauses, cuts a rack's power and tears a
write (and, with --nemesis, a swarm of random faults). It prints the fault
timeline, what each node's disk kept, and the trace hash: run it twice with the
same seed and the hash is the same.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			cfg := demo.DefaultClusterConfig(seed)
			cfg.Nemesis = nemesis
			var buf *sim.TraceBuffer
			if showTrace > 0 {
				buf = &sim.TraceBuffer{RecordsMax: showTrace}
				cfg.Trace = buf
			}
			c, err := demo.Build(cfg)
			if err != nil {
				return usage("%v", err)
			}
			start := time.Now()
			res := c.Run()
			wall := time.Since(start)
			if checkDeterminism {
				cfg.Trace = nil
				again, err := demo.Build(cfg)
				if err != nil {
					return usage("%v", err)
				}
				if r2 := again.Run(); r2.TraceHash != res.TraceHash {
					return simulatorFailed("determinism check failed: seed %d gave trace hash %016x, then %016x", seed, res.TraceHash, r2.TraceHash)
				}
			}
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(demoJSON(seed, res, wall))
			}
			printDemo(out, c, res, buf, wall, checkDeterminism)
			if res.Stop.Livelocked() {
				return simulatorFailed("run stopped early: %s", res.Stop.Detail)
			}
			if !res.Converged {
				return failed("the cluster did not converge after the faults healed")
			}
			return nil
		},
	}
	cmd.Flags().Uint64Var(&seed, "seed", 1, "the run's seed")
	cmd.Flags().BoolVar(&nemesis, "nemesis", false, "add a swarm nemesis of random faults")
	cmd.Flags().IntVar(&showTrace, "trace", 0, "print the first N trace records")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	cmd.Flags().BoolVar(&checkDeterminism, "check-determinism", false, "run twice and compare trace hashes")
	return cmd
}

func printDemo(out io.Writer, c *demo.Cluster, res demo.Result, buf *sim.TraceBuffer, wall time.Duration, checked bool) {
	w := c.World
	fmt.Fprintf(out, "kafkasim demo, seed %d\n\n", w.Seed())
	if len(c.Plan.Rules) > 0 {
		fmt.Fprint(out, c.Plan.String(), "\n")
	}
	fmt.Fprintln(out, "faults:")
	for _, r := range w.FaultLog() {
		what := r.Fault.String()
		switch {
		case r.Undo:
			what = "end of " + what
		case r.Origin == "heal":
			what = "heal everything (liveness phase)"
		}
		line := fmt.Sprintf("  %9v  %-14s %s", r.At, r.Origin, what)
		if len(r.Nodes) > 0 {
			line += fmt.Sprintf(" -> %v", r.Nodes)
		}
		if r.Detail != "" {
			line += "  (" + r.Detail + ")"
		}
		if r.Skipped != "" {
			line += "  skipped: " + r.Skipped
		}
		fmt.Fprintln(out, line)
	}
	fmt.Fprintln(out, "\nnodes at the end:")
	fmt.Fprintf(out, "  %-8s %-8s %5s %8s %8s  %s\n", "node", "state", "boots", "records", "durable", "")
	for _, n := range res.Nodes {
		note := ""
		if n.TornAtBoot {
			note = "recovered from a torn or corrupt tail"
		}
		fmt.Fprintf(out, "  %-8s %-8s %5d %8d %8d  %s\n", n.Name, n.State, n.Boots, n.Records, n.Durable, note)
	}
	if buf != nil {
		fmt.Fprintf(out, "\nfirst %d trace records:\n", len(buf.Records))
		for _, r := range buf.Records {
			from := ""
			if r.From != "" {
				from = r.From + " -> "
			}
			fmt.Fprintf(out, "  #%-7d %12v %-10s %s%-8s %s\n", r.Step, r.At, r.Kind, from, r.Node, r.Detail)
		}
	}
	ns := res.Network
	fmt.Fprintf(out, "\nnetwork: %d sent, %d delivered, %d cut by partitions, %d lost with connections, %d to dead processes\n",
		ns.Sent, ns.Delivered, ns.DroppedCut, ns.DroppedDisconnect, ns.DroppedDown)
	fmt.Fprintf(out, "converged after heal: %v\n", res.Converged)
	rate := float64(res.Steps) / max(wall.Seconds(), 1e-9)
	fmt.Fprintf(out, "%d events, %v simulated in %v (%.1fM events/s)\n", res.Steps, res.SimTime, wall.Round(time.Millisecond), rate/1e6)
	fmt.Fprintf(out, "trace hash %016x", res.TraceHash)
	if checked {
		fmt.Fprint(out, " (deterministic: a second run gave the same hash)")
	}
	fmt.Fprintln(out)
}

type demoJSONResult struct {
	Seed      uint64           `json:"seed"`
	TraceHash string           `json:"trace_hash"`
	Events    uint64           `json:"events"`
	SimTimeNS int64            `json:"sim_time_ns"`
	WallNS    int64            `json:"wall_time_ns"`
	Converged bool             `json:"converged"`
	Stop      string           `json:"stop"`
	Nodes     []demoJSONNode   `json:"nodes"`
	Network   sim.NetworkStats `json:"network"`
}

type demoJSONNode struct {
	Name    string `json:"name"`
	State   string `json:"state"`
	Boots   uint64 `json:"boots"`
	Records uint64 `json:"records"`
	Durable uint64 `json:"durable"`
}

func demoJSON(seed uint64, res demo.Result, wall time.Duration) demoJSONResult {
	out := demoJSONResult{Seed: seed, TraceHash: fmt.Sprintf("%016x", res.TraceHash), Events: res.Steps,
		SimTimeNS: int64(res.SimTime), WallNS: int64(wall), Converged: res.Converged, Stop: res.Stop.Reason.String(),
		Network: res.Network}
	for _, n := range res.Nodes {
		out.Nodes = append(out.Nodes, demoJSONNode{Name: n.Name, State: n.State.String(), Boots: n.Boots, Records: n.Records, Durable: n.Durable})
	}
	return out
}
