package main

// workloads.go: the three recorded workloads. Each runs a fault-free phase of
// cfg.Duration with producers and readers running concurrently, then lets
// readers drain, then reads every partition once more from offset 0.

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"
)

// Config is everything the record command can set.
type Config struct {
	Workload      string
	Out           string
	Duration      time.Duration // how long producers run
	Rate          int           // sends per second per producer
	Producers     int
	Readers       int
	Keys          int
	Seed          uint64
	Brokers       int
	Partitions    int
	Topic         string
	Group         string
	GroupProtocol string  // classic | consumer (KIP-848)
	AbortFrac     float64 // txn: fraction of transactions aborted on purpose
	MaxPoll       int     // max records per PollRecords call
	MoveLeaders   time.Duration
	Verbose       bool
	// Commit is when a group member commits what a poll returned: "poll"
	// (right after the poll; no process operations are recorded),
	// "after-processing" (at-least-once) or "before-processing"
	// (at-most-once), recording a process operation per record.
	Commit     string
	Processing time.Duration // group: per record, when processing
	// Crash: c-1 crashes at 60 % of the run, halfway through a poll's
	// records, instead of leaving cleanly.
	Crash bool
}

// runProducers starts n producers named prefix-i and returns a wait func.
func runProducers(ctx context.Context, env *Env, prefix string, n int, txn bool) (func(), error) {
	var wg sync.WaitGroup
	var ps []*producer
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("%s-%d", prefix, i)
		txnID := ""
		if txn {
			txnID = "kfakerec-" + name
		}
		p, err := newProducer(env, name, txnID, env.cfg.Seed*1000+uint64(i))
		if err != nil {
			for _, q := range ps {
				q.close()
			}
			return nil, err
		}
		ps = append(ps, p)
	}
	for _, p := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if txn {
				p.runTxn(ctx)
			} else {
				p.runPlain(ctx)
			}
		}()
	}
	return func() {
		wg.Wait()
		for _, p := range ps {
			p.close()
		}
	}, nil
}

// moveLeaders moves every partition leader to a random broker every interval
// until ctx is done (kfake.ShufflePartitionLeaders). It returns the number of
// moves. kfake has one shared log per partition, so this exercises client
// metadata refresh and NOT_LEADER retries, not data loss.
func moveLeaders(ctx context.Context, env *Env) int {
	if env.cfg.MoveLeaders <= 0 {
		return 0
	}
	t := time.NewTicker(env.cfg.MoveLeaders)
	defer t.Stop()
	n := 0
	for {
		select {
		case <-ctx.Done():
			return n
		case <-t.C:
			env.cluster.ShufflePartitionLeaders()
			n++
		}
	}
}

// startDrain waits for the producers, takes the end offsets, and tells
// readers to finish.
func startDrain(env *Env, waitProducers func(), drain *drainSignal) error {
	waitProducers()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ends, err := env.endOffsets(ctx)
	if err != nil {
		return fmt.Errorf("listing end offsets: %w", err)
	}
	drain.start(ends)
	return nil
}

// runReaders starts assign-mode readers and returns a wait func; readers are
// cut off hardStopAfter the drain starts at the latest.
func runReaders(env *Env, names, isolations []string, drain *drainSignal) (func() error, error) {
	hard := make(chan struct{})
	var wg sync.WaitGroup
	errs := make([]error, len(names))
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = runAssignReader(env, name, isolations[i], drain, hard)
		}()
	}
	return func() error {
		<-drain.ch
		t := time.AfterFunc(8*time.Second, func() { close(hard) })
		wg.Wait()
		t.Stop()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// workloadAssign: idempotent producers + assign-mode readers + final read.
func workloadAssign(env *Env) error {
	cfg := env.cfg
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Duration)
	defer cancel()
	drain := newDrainSignal()
	var names, isos []string
	for i := 0; i < cfg.Readers; i++ {
		names = append(names, fmt.Sprintf("r-%d", i))
		isos = append(isos, "")
	}
	waitReaders, err := runReaders(env, names, isos, drain)
	if err != nil {
		return err
	}
	waitProducers, err := runProducers(ctx, env, "p", cfg.Producers, false)
	if err != nil {
		return err
	}
	go logMoves(ctx, env)
	if err := startDrain(env, waitProducers, drain); err != nil {
		return err
	}
	if err := waitReaders(); err != nil {
		return err
	}
	return finalRead(env, "final", "")
}

// workloadTxn: transactional producers + a read_committed and a
// read_uncommitted reader + a final read at both isolation levels.
func workloadTxn(env *Env) error {
	cfg := env.cfg
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Duration)
	defer cancel()
	drain := newDrainSignal()
	var names, isos []string
	for i := 0; i < cfg.Readers; i++ {
		// Alternate isolation levels: rc-0, ru-0, rc-1, ru-1, ...
		if i%2 == 0 {
			names, isos = append(names, fmt.Sprintf("rc-%d", i/2)), append(isos, "read_committed")
		} else {
			names, isos = append(names, fmt.Sprintf("ru-%d", i/2)), append(isos, "read_uncommitted")
		}
	}
	waitReaders, err := runReaders(env, names, isos, drain)
	if err != nil {
		return err
	}
	waitProducers, err := runProducers(ctx, env, "t", cfg.Producers, true)
	if err != nil {
		return err
	}
	go logMoves(ctx, env)
	if err := startDrain(env, waitProducers, drain); err != nil {
		return err
	}
	if err := waitReaders(); err != nil {
		return err
	}
	if err := finalRead(env, "final-rc", "read_committed"); err != nil {
		return err
	}
	return finalRead(env, "final-ru", "read_uncommitted")
}

// workloadGroup: idempotent producers + a consumer group whose membership
// changes mid-run (c-0 and c-1 start, c-2 joins at 30% of the duration, c-1
// leaves at 60%), then fetch-committed per partition and a final read.
func workloadGroup(env *Env) error {
	cfg := env.cfg
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Duration)
	defer cancel()
	tracker := newCommitTracker()

	waitProducers, err := runProducers(ctx, env, "p", cfg.Producers, false)
	if err != nil {
		return err
	}
	go logMoves(ctx, env)

	members := map[string]*member{}
	join := func(name string) error {
		m, err := startMember(env, name, tracker)
		if err != nil {
			return err
		}
		members[name] = m
		return nil
	}
	if err := join("c-0"); err != nil {
		return err
	}
	if err := join("c-1"); err != nil {
		return err
	}
	time.Sleep(time.Until(start.Add(cfg.Duration * 3 / 10)))
	if err := join("c-2"); err != nil {
		return err
	}
	time.Sleep(time.Until(start.Add(cfg.Duration * 6 / 10)))
	if cfg.Crash {
		members["c-1"].crash()
	} else {
		members["c-1"].leave()
	}
	delete(members, "c-1")

	// Drain: wait until the group committed everything, at most 8 s.
	drain := newDrainSignal()
	if err := startDrain(env, waitProducers, drain); err != nil {
		return err
	}
	deadline := time.Now().Add(8 * time.Second)
	for !tracker.reached(drain.ends) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if !tracker.reached(drain.ends) {
		fmt.Fprintln(os.Stderr, "kfakerec: warning: group did not commit up to the end offsets before the drain deadline")
	}
	// Stop every poll loop first, then close (leave) one member at a time.
	for _, name := range []string{"c-0", "c-2"} {
		members[name].stopPolling()
	}
	for _, name := range []string{"c-0", "c-2"} {
		members[name].leave()
	}

	fetchCommitted(env, "admin")
	return finalRead(env, "final", "")
}

// logMoves runs moveLeaders and reports how many moves it made.
func logMoves(ctx context.Context, env *Env) {
	if n := moveLeaders(ctx, env); n > 0 {
		fmt.Fprintf(os.Stderr, "kfakerec: moved partition leaders %d times\n", n)
	}
}
