package checker

import (
	"strings"
	"testing"

	"kafkasim/godview"
	"kafkasim/history"
)

func altered(at int64, topic, config, value string) godview.Fact {
	return godview.Fact{Kind: godview.ConfigAltered, At: at, Topic: topic, Config: config, Value: value, Producer: godview.NoProducer}
}

func lostB() *hb {
	h := &hb{}
	h.send("p-0", "a", 0, 0, history.OK) // acknowledged at 2000
	h.send("p-0", "b", 0, 1, history.OK) // acknowledged at 4000
	h.poll("c-0", true, rec{0, 0, "a"})
	return h
}

// A loss is judged against unclean.leader.election.enable as the loss found
// it: turned on before the unclean election, the operator chose it; turned
// on after, it explains nothing (the loss is then KIP-966's last-leader
// election's); cluster-wide, it does not reach a topic that sets its own.
func TestUncleanAlteredJudgedAtTheLoss(t *testing.T) {
	h := lostB()
	loss := godview.Fact{Kind: godview.Loss, Partition: "t-0", From: 1, To: 2, Cause: "unclean-election", At: 6000, Producer: godview.NoProducer}
	because := func(cfg Config) string {
		t.Helper()
		r := Check(h.ops, cfg)
		expectVerdict(t, r, LostAckedWrite, Permitted)
		a, _ := r.Anomaly(LostAckedWrite)
		return a.Because
	}
	const operators = "unclean.leader.election.enable=true let"
	cfg := strict
	cfg.Happened = godview.Seen(altered(5000, "t", "unclean.leader.election.enable", "true"), loss)
	if b := because(cfg); !strings.Contains(b, operators) {
		t.Fatalf("on before the loss: %q", b)
	}
	cfg.Happened = godview.Seen(loss, altered(7000, "t", "unclean.leader.election.enable", "true"))
	if b := because(cfg); strings.Contains(b, operators) {
		t.Fatalf("on only after the loss: %q", b)
	}
	cfg.Happened = godview.Seen(altered(5000, "", "unclean.leader.election.enable", "true"), loss)
	if b := because(cfg); !strings.Contains(b, operators) {
		t.Fatalf("cluster-wide, topic inherits: %q", b)
	}
	cfg.Topics = []TopicGuarantees{{Name: "t", ReplicationFactor: 3, MinInsyncReplicas: 2, SetsUnclean: true}}
	if b := because(cfg); strings.Contains(b, operators) {
		t.Fatalf("cluster-wide, topic sets its own: %q", b)
	}
	// Turned off again before the loss.
	cfg = strict
	cfg.Topics = []TopicGuarantees{{Name: "t", ReplicationFactor: 3, MinInsyncReplicas: 2, Unclean: true}}
	cfg.Happened = godview.Seen(altered(5000, "t", "unclean.leader.election.enable", "false"), loss)
	if b := because(cfg); strings.Contains(b, operators) {
		t.Fatalf("off before the loss: %q", b)
	}
}

// Without the god view (kafkasim check --config), a scheduled alter-config
// turning unclean on permits what unclean.leader.election.enable=true
// would; without it the same loss is a violation.
func TestUncleanAlteredWithoutGodView(t *testing.T) {
	h := lostB()
	cfg := strict
	cfg.Happened = godview.Scheduled()
	expectVerdict(t, Check(h.ops, cfg), LostAckedWrite, Violation)
	cfg.Happened = godview.Scheduled(altered(0, "t", "unclean.leader.election.enable", "true"))
	expectVerdict(t, Check(h.ops, cfg), LostAckedWrite, Permitted)
	cfg.Happened = godview.Scheduled(altered(0, "other", "unclean.leader.election.enable", "true"))
	expectVerdict(t, Check(h.ops, cfg), LostAckedWrite, Violation)
}

// A lost write's min.insync.replicas is the one in force when it was
// acknowledged.
func TestMinISRAlteredJudgedAtTheAck(t *testing.T) {
	h := lostB()
	cfg := strict
	cfg.Happened = godview.Seen(altered(3500, "t", "min.insync.replicas", "1"))
	r := Check(h.ops, cfg)
	expectVerdict(t, r, LostAckedWrite, Violation)
	if a, _ := r.Anomaly(LostAckedWrite); !strings.Contains(a.Because, "min.insync.replicas=1 ") {
		t.Fatalf("altered before the ack: %q", a.Because)
	}
	cfg.Happened = godview.Seen(altered(4500, "t", "min.insync.replicas", "1"))
	r = Check(h.ops, cfg)
	if a, _ := r.Anomaly(LostAckedWrite); !strings.Contains(a.Because, "min.insync.replicas=2 ") {
		t.Fatalf("altered after the ack: %q", a.Because)
	}
}
