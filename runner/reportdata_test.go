package runner

import (
	"strings"
	"testing"
	"time"

	"kafkasim/history"
	"kafkasim/sim"
)

// The report reads nemesis durations to the millisecond, not the
// nanosecond a nemesis draws them at.
func TestReadableFaultRoundsDurations(t *testing.T) {
	f := sim.Fault{Kind: sim.FaultPause, Target: "random-broker", For: 4986015136 * time.Nanosecond}
	if got := readableFault(f); got != "pause random-broker for 4.986s" {
		t.Errorf("readableFault = %q", got)
	}
	slow := sim.Fault{Kind: sim.FaultSlowNetwork, Target: "broker-1", Latency: 1500 * time.Microsecond, For: 2 * time.Second}
	if got := readableFault(slow); got != "slow-network broker-1 +2ms for 2s" {
		t.Errorf("readableFault = %q", got)
	}
	if f.For != 4986015136*time.Nanosecond {
		t.Error("readableFault must not change the fault it describes")
	}
}

// The report data carries the run's phases, and the history marks the
// final reads (the report finds them by their final flag, through the
// recorder's heads): after settle, by the final reader alone.
func TestReportDataMarksThePhases(t *testing.T) {
	s := bundled(t)["rack-power-loss.yaml"]
	res := run(t, s)
	rd := res.ReportData("test")
	if rd.Phases.FaultsEnd != s.Duration || rd.Phases.SettleEnd != s.Duration+s.Settle {
		t.Errorf("phases %+v, want the fault phase to end at %v and settle at %v", rd.Phases, s.Duration, s.Duration+s.Settle)
	}
	finals := 0
	rd.History.EachHead(func(op *history.Op) {
		if op.F != history.FPoll || !op.Value.Final {
			return
		}
		finals++
		if !strings.HasPrefix(op.Process, FinalReaderName) || time.Duration(op.Time) < rd.Phases.SettleEnd {
			t.Fatalf("a final poll by %s at %v: want the final reader after settle (%v)", op.Process, time.Duration(op.Time), rd.Phases.SettleEnd)
		}
	})
	if finals == 0 {
		t.Error("no poll of the history is marked final")
	}
}
