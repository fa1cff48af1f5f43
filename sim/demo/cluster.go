package demo

import (
	"fmt"
	"time"

	"kafkasim/sim"
)

// ClusterConfig describes a demo run: nodes pinging each other in racks,
// an explicit fault schedule, and optionally a swarm nemesis.
type ClusterConfig struct {
	Seed     uint64
	Nodes    int
	Racks    []string
	Duration time.Duration // fault phase
	Settle   time.Duration // liveness phase: everything healed
	Faults   []ScheduledFault
	Nemesis  bool // add a swarm nemesis of crashes, pauses, partitions and disk faults
	Trace    sim.TraceSink
	Node     Config
}

// ScheduledFault is a fault at a time.
type ScheduledFault struct {
	At    time.Duration
	Fault sim.Fault
}

// DefaultClusterConfig is the demo the CLI runs: five nodes in three racks, a
// partition, a process crash, a pause, a rack power loss and a torn write.
func DefaultClusterConfig(seed uint64) ClusterConfig {
	return ClusterConfig{
		Seed:     seed,
		Nodes:    5,
		Racks:    []string{"a", "b", "c"},
		Duration: 20 * time.Second,
		Settle:   5 * time.Second,
		Node:     Config{Interval: 100 * time.Millisecond, FsyncEvery: 8},
		Faults: []ScheduledFault{
			{At: 2 * time.Second, Fault: sim.Fault{Kind: sim.FaultPartition, Groups: [][]string{{"node-1", "node-2"}, {"rest"}}, For: 3 * time.Second}},
			{At: 6 * time.Second, Fault: sim.Fault{Kind: sim.FaultKill, Target: "node-3", For: 2 * time.Second}},
			{At: 9 * time.Second, Fault: sim.Fault{Kind: sim.FaultPause, Target: "node-4", For: 2 * time.Second}},
			{At: 12 * time.Second, Fault: sim.Fault{Kind: sim.FaultPowerLoss, Target: "rack(a)", For: 3 * time.Second}},
			{At: 16 * time.Second, Fault: sim.Fault{Kind: sim.FaultDisk, Disk: sim.DiskTornWrite, Target: "random-demo", For: time.Second}},
		},
	}
}

// DemoNemesis is the nemesis of a demo with Nemesis on.
func DemoNemesis() []sim.NemesisRule {
	return []sim.NemesisRule{
		{Fault: sim.Fault{Kind: sim.FaultCrash, Target: "random-demo"}, Every: sim.Range{Min: time.Second, Max: 4 * time.Second}, Down: sim.Range{Min: 200 * time.Millisecond, Max: 2 * time.Second}},
		{Fault: sim.Fault{Kind: sim.FaultPause, Target: "random-demo"}, Every: sim.Range{Min: time.Second, Max: 5 * time.Second}, Down: sim.Range{Min: 100 * time.Millisecond, Max: time.Second}},
		{Fault: sim.Fault{Kind: sim.FaultPartition}, Shape: sim.ShapeHalves, Every: sim.Range{Min: time.Second, Max: 5 * time.Second}, Down: sim.Range{Min: 200 * time.Millisecond, Max: 3 * time.Second}},
		{Fault: sim.Fault{Kind: sim.FaultPartition}, Shape: sim.ShapeOneWay, Every: sim.Range{Min: 2 * time.Second, Max: 6 * time.Second}, Down: sim.Range{Min: 200 * time.Millisecond, Max: 2 * time.Second}},
		{Fault: sim.Fault{Kind: sim.FaultDisconnect, Target: "random-demo"}, Every: sim.Range{Min: time.Second, Max: 3 * time.Second}},
		{Fault: sim.Fault{Kind: sim.FaultSlowNetwork, Target: "random-demo", Latency: 50 * time.Millisecond}, Every: sim.Range{Min: time.Second, Max: 4 * time.Second}, Down: sim.Range{Min: 500 * time.Millisecond, Max: 2 * time.Second}},
		{Fault: sim.Fault{Kind: sim.FaultClock, Target: "random-demo", ClockJump: 500 * time.Millisecond, DriftPPM: 20_000}, Every: sim.Range{Min: 2 * time.Second, Max: 6 * time.Second}, Down: sim.Range{Min: time.Second, Max: 3 * time.Second}},
		{Fault: sim.Fault{Kind: sim.FaultDisk, Disk: sim.DiskTornWrite, Target: "random-demo"}, Every: sim.Range{Min: 3 * time.Second, Max: 8 * time.Second}, Down: sim.Range{Min: 100 * time.Millisecond, Max: time.Second}},
		{Fault: sim.Fault{Kind: sim.FaultDisk, Disk: sim.DiskSlowFsync, Target: "random-demo", SlowFactor: 20}, Every: sim.Range{Min: 2 * time.Second, Max: 6 * time.Second}, Down: sim.Range{Min: time.Second, Max: 3 * time.Second}},
	}
}

// Cluster is a built demo world.
type Cluster struct {
	World *sim.World
	Plan  sim.NemesisPlan
	cfg   ClusterConfig
}

// Build creates the world for cfg and schedules its faults.
func Build(cfg ClusterConfig) (*Cluster, error) {
	if cfg.Nodes < 1 {
		return nil, fmt.Errorf("demo: need at least one node, got %d", cfg.Nodes)
	}
	opts := sim.DefaultOptions(sim.Seed(cfg.Seed))
	opts.Trace = cfg.Trace
	w := sim.NewWorld(opts)
	names := make([]string, cfg.Nodes)
	for i := range names {
		names[i] = fmt.Sprintf("node-%d", i)
	}
	nodeCfg := cfg.Node
	nodeCfg.Peers = names
	for i, name := range names {
		rack := ""
		if len(cfg.Racks) > 0 {
			rack = cfg.Racks[i%len(cfg.Racks)]
		}
		w.AddNode(sim.NodeSpec{Name: name, Role: "demo", Rack: rack, New: New(nodeCfg)})
	}
	for _, f := range cfg.Faults {
		for _, sel := range f.Fault.Selectors() {
			if err := w.ValidateSelector(sel); err != nil {
				return nil, fmt.Errorf("demo fault at %v: %w", f.At, err)
			}
		}
		if err := w.ScheduleFault(f.At, f.Fault); err != nil {
			return nil, fmt.Errorf("demo fault at %v: %w", f.At, err)
		}
	}
	c := &Cluster{World: w, cfg: cfg}
	if cfg.Nemesis {
		plan, err := w.StartNemesis(sim.NemesisOptions{Rules: DemoNemesis(), Swarm: true, Stop: cfg.Duration})
		if err != nil {
			return nil, err
		}
		c.Plan = plan
	}
	w.Start()
	return c, nil
}

// Result summarises a demo run.
type Result struct {
	TraceHash uint64
	Steps     uint64
	SimTime   time.Duration
	Stop      sim.RunResult
	Network   sim.NetworkStats
	// Converged is true when, after the liveness phase, every node is up and
	// has heard from every other node since the heal.
	Converged bool
	Nodes     []NodeReport
}

// NodeReport is one node's state at the end of a run.
type NodeReport struct {
	Name       string
	State      sim.ProcessState
	Boots      uint64
	Records    uint64
	Durable    uint64 // records that survive a power loss now
	TornAtBoot bool
}

// Run runs the fault phase, heals everything, runs the liveness phase and
// reports. A run that stops early (a livelock) reports where it stopped.
func (c *Cluster) Run() Result {
	w := c.World
	r := w.RunUntil(c.cfg.Duration)
	res := Result{Stop: r}
	if r.Reason == sim.StopDeadline || r.Reason == sim.StopIdle {
		w.HealAll()
		healedAt := w.Now() // HealAll put every clock back on virtual time
		r = w.RunFor(c.cfg.Settle)
		res.Stop = r
		res.Converged = r.Reason == sim.StopDeadline
		for _, id := range w.Nodes() {
			n, ok := w.Node(id).(*Node)
			if !ok || w.State(id) != sim.Running || !n.HeardFromAllSince(healedAt) {
				res.Converged = false
			}
		}
	}
	res.TraceHash, res.Steps, res.SimTime, res.Network = w.TraceHash(), w.Steps(), w.Now(), w.NetworkStats()
	for _, id := range w.Nodes() {
		rep := NodeReport{Name: w.Name(id), State: w.State(id), Boots: w.ProcessStats(id).Boots}
		if n, ok := w.Node(id).(*Node); ok {
			rep.Records = n.Records()
			rep.TornAtBoot = n.Stats.TornAtBoot
		}
		if b, ok := w.Disk(id).Durable(logFile); ok {
			rep.Durable = uint64(len(b) / recordSize)
		}
		res.Nodes = append(res.Nodes, rep)
	}
	return res
}
