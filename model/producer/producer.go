package producer

import (
	"time"

	"kafkasim/history"
	"kafkasim/sim"
)

// Config is a producer instance's configuration: its client's, its
// workload's, and the history it records its sends in.
type Config struct {
	ClientConfig
	WorkloadConfig
	Recorder *history.Recorder
}

// WorkloadConfig is what a producer instance's application sends, and when.
type WorkloadConfig struct {
	// Rate is records per second; zero sends nothing.
	Rate float64
	// Keys is the key space ("k0".."k{Keys-1}"); zero sends null keys.
	Keys int
	// ProbeKeys gives the probes keys ("kafkasim-probe-<partition>"): a
	// compacted topic refuses records without one.
	ProbeKeys bool
	// Payload follows the unique "<name>:<seq>" in every record's value,
	// so that record sizes (and what compression makes of them) are real.
	Payload string
	// Start and Stop bound when the workload sends (virtual time).
	Start, Stop time.Duration
	// Transactions, when set (with a transactional.id), makes every tick
	// a transaction: Rate is then transactions begun per second.
	Transactions *TxnWorkload
}

// TxnWorkload is what each transaction of a transactional workload does:
// RecordsMin..RecordsMax records (uniform), then a commit, or an abort with
// probability Abort.
type TxnWorkload struct {
	RecordsMin, RecordsMax int
	Abort                  float64
}

// DefaultConfig has Kafka 4.x's producer defaults, and a workload that
// sends nothing.
func DefaultConfig(name, topic string) Config {
	return Config{ClientConfig: DefaultClientConfig(name, topic)}
}

// Producer is one producer instance: a workload driving a Client (whose
// Deliver, Stats and Unresolved it has).
type Producer struct {
	Client
	app workload
}

// New returns a constructor for a producer.
func New(cfg Config) func() sim.Node {
	return func() sim.Node {
		p := &Producer{app: workload{cfg: cfg}}
		p.Client.cfg = cfg.ClientConfig.normalized()
		return p
	}
}

// Start starts the client, which asks for metadata (and a producer id),
// then the workload.
func (p *Producer) Start(env sim.Env) {
	p.Client.Start(env)
	p.app.start(env, &p.Client)
}

// Fire handles timers: the workload's sends, and the client's.
func (p *Producer) Fire(t sim.Timer) {
	pt, ok := asTimer(t)
	if !ok {
		return
	}
	if pt.kind() == timerSend {
		p.app.tick()
		return
	}
	if pt.kind() == timerTxnWorkload {
		p.app.txnTick()
		return
	}
	p.Client.fire(pt)
}

// Probe sends one record without a key (with one, to a compacted topic) to
// every partition, now, whether or not the workload has stopped: after the
// heal, the proof that the producer can write again. ProbeOutcome tells how
// the probes ended.
//
// A transactional producer probes in a transaction of its own, once the
// one under way has ended.
func (p *Producer) Probe() {
	if p.app.txn.on {
		p.app.beginTxn(true)
		return
	}
	p.app.probe()
}

// ProbeOutcome counts the probes acknowledged, failed, unknown (info:
// with acks=0 every send is), and still pending.
func (p *Producer) ProbeOutcome() (acked, failed, unknown, pending int) { return p.app.probeOutcome() }

// ProbesUnknown lists the values of probes whose outcome is unknown, sorted.
func (p *Producer) ProbesUnknown() []string { return p.app.probesUnknown() }
