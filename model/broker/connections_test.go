package broker

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"kafkasim/model/metadata"
	"kafkasim/model/proto"
	"kafkasim/sim"
)

// connEnv records what the broker sends, on which connection, and keeps
// the timers it sets; resets bump a peer's connection.
type connEnv struct {
	sim.Env
	gens   map[sim.NodeID]uint64
	sent   []string
	timers []sim.Timer
}

func (e *connEnv) Now() time.Duration { return time.Second }

func (e *connEnv) Connection(peer sim.NodeID) uint64 { return e.gens[peer] }

func (e *connEnv) Send(to sim.NodeID, m sim.Message) {
	corr := uint64(0)
	switch m := m.(type) {
	case *proto.FetchResponse:
		corr = m.CorrelationID
	case *proto.ListOffsetsResponse:
		corr = m.CorrelationID
	case *proto.MetadataResponse:
		corr = m.CorrelationID
	}
	e.sent = append(e.sent, fmt.Sprintf("%s %d to %d", m.MessageName(), corr, to))
}

func (e *connEnv) After(_ time.Duration, t sim.Timer) sim.TimerID {
	e.timers = append(e.timers, t)
	return sim.TimerID{}
}

func (e *connEnv) Cancel(sim.TimerID) {}

func (e *connEnv) CloseConnection(peer sim.NodeID) {
	e.sent = append(e.sent, fmt.Sprintf("closes %d", peer))
}

// A broker reads a connection's next request only once the one it serves
// is answered (Kafka's SocketServer mutes the channel meanwhile), so
// answers come back in the order of the requests; other connections are
// served meanwhile; a reset drops what the old connection had not read and
// the answers still owed on it.
func TestOneRequestPerConnectionAtATime(t *testing.T) {
	const client, other = 7, 8
	// waitingFetch parks (it names nothing, so finds nothing, and may wait).
	waitingFetch := func(corr uint64) *proto.FetchRequest {
		return &proto.FetchRequest{CorrelationID: corr, ReplicaID: -1, MaxWait: 500 * time.Millisecond}
	}
	listOffsets := func(corr uint64) *proto.ListOffsetsRequest {
		return &proto.ListOffsetsRequest{CorrelationID: corr}
	}
	setup := func() (*replicaManager, *connEnv) {
		env := &connEnv{gens: map[sim.NodeID]uint64{}}
		return &replicaManager{n: &Node{env: env, image: metadata.NewImage("broker-1", nil)}}, env
	}
	// fireParked ends the parked fetches' waits, oldest first, and runs
	// the timers that set (the reads of unread requests).
	fireParked := func(rm *replicaManager, env *connEnv) {
		for len(env.timers) > 0 {
			tm := env.timers[0]
			env.timers = env.timers[1:]
			rm.fire(tm)
		}
	}

	t.Run("in order, behind a waiting fetch", func(t *testing.T) {
		rm, env := setup()
		rm.deliver(client, waitingFetch(1))
		rm.deliver(client, listOffsets(2))
		rm.deliver(client, &proto.MetadataRequest{CorrelationID: 3, Topics: []string{}})
		rm.deliver(other, listOffsets(4))
		if want := []string{"ListOffsetsResponse 4 to 8"}; !slices.Equal(env.sent, want) {
			t.Fatalf("while the fetch waits: sent %q, want %q", env.sent, want)
		}
		fireParked(rm, env)
		want := []string{"ListOffsetsResponse 4 to 8", "FetchResponse 1 to 7", "ListOffsetsResponse 2 to 7", "MetadataResponse 3 to 7"}
		if !slices.Equal(env.sent, want) {
			t.Fatalf("sent %q, want %q", env.sent, want)
		}
		rm.deliver(client, listOffsets(5))
		if last := env.sent[len(env.sent)-1]; last != "ListOffsetsResponse 5 to 7" {
			t.Fatalf("the connection stayed muted: last sent %q", last)
		}
	})

	t.Run("a reset drops what was unread and what is owed", func(t *testing.T) {
		rm, env := setup()
		rm.deliver(client, waitingFetch(1))
		rm.deliver(client, listOffsets(2)) // unread, lost with the connection
		env.gens[client]++
		rm.deliver(client, listOffsets(3)) // the new connection is not muted
		fireParked(rm, env)                // the old fetch's answer has no channel
		if want := []string{"ListOffsetsResponse 3 to 7"}; !slices.Equal(env.sent, want) {
			t.Fatalf("sent %q, want %q", env.sent, want)
		}
	})

	t.Run("an old connection's late answer does not unmute the new one", func(t *testing.T) {
		rm, env := setup()
		rm.deliver(client, waitingFetch(1))
		env.gens[client]++
		rm.deliver(client, waitingFetch(2))
		rm.deliver(client, listOffsets(3))
		oldFetch, newFetch := env.timers[0], env.timers[1]
		env.timers = env.timers[2:]
		rm.fire(oldFetch)
		if len(env.sent) != 0 || len(env.timers) != 0 {
			t.Fatalf("sent %q, set %d timers while the new connection's fetch waits", env.sent, len(env.timers))
		}
		rm.fire(newFetch)
		fireParked(rm, env)
		if want := []string{"FetchResponse 2 to 7", "ListOffsetsResponse 3 to 7"}; !slices.Equal(env.sent, want) {
			t.Fatalf("sent %q, want %q", env.sent, want)
		}
	})

	t.Run("a processor's producer channel is not held behind its consumer's fetch", func(t *testing.T) {
		rm, env := setup()
		rm.deliver(client, waitingFetch(1))
		rm.deliver(client, &proto.MetadataRequest{CorrelationID: proto.ProducerChannel + 2, Topics: []string{}})
		rm.deliver(client, listOffsets(3))
		if want := []string{fmt.Sprintf("MetadataResponse %d to 7", proto.ProducerChannel+2)}; !slices.Equal(env.sent, want) {
			t.Fatalf("while the consumer's fetch waits: sent %q, want %q", env.sent, want)
		}
		fireParked(rm, env)
		if want := []string{"FetchResponse 1 to 7", "ListOffsetsResponse 3 to 7"}; !slices.Equal(env.sent[1:], want) {
			t.Fatalf("the consumer's connection: sent %q, want %q after the producer's", env.sent, want)
		}
	})

	t.Run("a peer that pipelines without limit is closed", func(t *testing.T) {
		rm, env := setup()
		rm.deliver(client, waitingFetch(1))
		for i := range unreadRequestsMax + 1 {
			rm.deliver(client, listOffsets(uint64(2+i)))
		}
		if want := []string{"closes 7"}; !slices.Equal(env.sent, want) {
			t.Fatalf("sent %q, want %q", env.sent, want)
		}
	})
}
