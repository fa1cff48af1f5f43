// Package storage holds the disk conventions every node of the model shares:
// checksummed frames for append-only logs, checkpoint files replaced the way
// Kafka replaces them (write a temporary file, fsync it, rename), and the
// durability gate that holds messages back until the writes they acknowledge
// are on disk.
package storage

import (
	"encoding/binary"
	"errors"
	"hash/crc32"

	"kafkasim/sim"
)

// FrameHeaderBytes is the size of a frame's header: a 4-byte length and a
// 4-byte CRC32C of the payload.
const FrameHeaderBytes = 8

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Checksum is CRC32C (Castagnoli), as Kafka's record batches use.
func Checksum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// AppendFrame encodes payload as a frame at the end of buf.
func AppendFrame(buf, payload []byte) []byte {
	var h [FrameHeaderBytes]byte
	binary.BigEndian.PutUint32(h[0:], uint32(len(payload)))
	binary.BigEndian.PutUint32(h[4:], Checksum(payload))
	buf = append(buf, h[:]...)
	return append(buf, payload...)
}

// ScanFrames walks the frames of a log file and returns each payload with the
// position where its frame starts, and the length of the valid prefix: the
// scan stops at the first frame that is short or fails its checksum (a torn
// or corrupt tail), exactly where recovery must truncate.
func ScanFrames(data []byte) (payloads [][]byte, starts []int64, valid int64) {
	pos := 0
	for pos+FrameHeaderBytes <= len(data) {
		n := int(binary.BigEndian.Uint32(data[pos:]))
		sum := binary.BigEndian.Uint32(data[pos+4:])
		end := pos + FrameHeaderBytes + n
		if n < 0 || end > len(data) || end < pos {
			break
		}
		payload := data[pos+FrameHeaderBytes : end]
		if Checksum(payload) != sum {
			break
		}
		payloads = append(payloads, payload)
		starts = append(starts, int64(pos))
		pos = end
	}
	return payloads, starts, int64(pos)
}

// ErrCorrupt reports a checkpoint file that failed its checksum.
var ErrCorrupt = errors.New("checkpoint failed its checksum")

// WriteCheckpoint replaces a checkpoint file the safe way: write name.tmp,
// fsync it, rename it over name, fsync name and its directory (Kafka's
// CheckpointFile.write: Utils.atomicMoveWithFallback flushes the parent
// directory, which makes every earlier removal of a file in it durable: the
// segments a truncation deleted stay deleted). The gate holds back messages
// sent after this call until the final fsync completes, and hands token to
// OnDurable then.
func WriteCheckpoint(g *Gate, name string, payload []byte, token any) error {
	tmp := name + ".tmp"
	if err := g.disk().WriteFile(tmp, AppendFrame(nil, payload)); err != nil {
		return err
	}
	g.Fsync(tmp)
	if err := g.disk().Rename(tmp, name); err != nil {
		return err
	}
	g.issued++
	g.env.Disk().FsyncDir(name, fsyncToken{gate: g, seq: g.issued, token: token})
	return nil
}

// ReadCheckpoint reads a checkpoint file; it returns sim.ErrNotExist when
// there is none and ErrCorrupt when its frame is damaged.
func ReadCheckpoint(d sim.NodeDisk, name string) ([]byte, error) {
	data, err := d.ReadFile(name)
	if err != nil {
		return nil, err
	}
	payloads, _, _ := ScanFrames(data)
	if len(payloads) != 1 {
		return nil, ErrCorrupt
	}
	return payloads[0], nil
}

// Gate orders a node's messages after its fsyncs. A message sent through the
// gate leaves only once every fsync issued before it has completed: a KRaft
// voter's vote, or a follower's fetch that acknowledges appended entries,
// must not reach anyone before the state it reports is durable. The world can
// crash the node between the two, and then the message is never sent.
//
// Fsyncs on one disk complete in the order they were issued, so counting is
// enough.
type Gate struct {
	env       sim.Env
	issued    uint64
	completed uint64
	queue     []gated
	// OnDurable, when set, is called after each fsync the gate issued
	// completes, with the token given to Fsync.
	OnDurable func(token any)
}

type gated struct {
	after uint64
	to    sim.NodeID
	m     sim.Message
	then  func()
}

// fsyncToken is the timer value the gate's fsyncs come back with.
type fsyncToken struct {
	gate  *Gate
	seq   uint64
	token any
}

// NewGate returns a gate over env's disk and network.
func NewGate(env sim.Env) *Gate { return &Gate{env: env} }

func (g *Gate) disk() sim.NodeDisk { return g.env.Disk() }

// Fsync asks for name to be made durable; messages sent after this wait for it.
func (g *Gate) Fsync(name string) { g.FsyncWith(name, nil) }

// FsyncWith is Fsync with a token handed to OnDurable on completion.
func (g *Gate) FsyncWith(name string, token any) {
	g.issued++
	g.env.Disk().Fsync(name, fsyncToken{gate: g, seq: g.issued, token: token})
}

// Issued counts the fsyncs asked for so far.
func (g *Gate) Issued() uint64 { return g.issued }

// Pending reports whether an fsync is still in flight.
func (g *Gate) Pending() bool { return g.completed < g.issued }

// Send sends m now if nothing is pending, or once the fsyncs issued so far
// have completed.
func (g *Gate) Send(to sim.NodeID, m sim.Message) {
	if g.completed >= g.issued {
		g.env.Send(to, m)
		return
	}
	g.queue = append(g.queue, gated{after: g.issued, to: to, m: m})
}

// Then runs f once the fsyncs issued so far have completed (at once if none
// is pending): the rest of a handler that flushed synchronously.
func (g *Gate) Then(f func()) {
	if g.completed >= g.issued {
		f()
		return
	}
	g.queue = append(g.queue, gated{after: g.issued, then: f})
}

// Fire handles an FsyncDone that belongs to the gate and reports whether it
// did. A node may keep several gates (one per ordering concern) on one disk.
func (g *Gate) Fire(t sim.Timer) bool {
	done, ok := t.(*sim.FsyncDone)
	if !ok {
		return false
	}
	tok, ok := done.Token.(fsyncToken)
	if !ok || tok.gate != g {
		return false
	}
	if tok.seq > g.completed {
		g.completed = tok.seq
	}
	if g.OnDurable != nil {
		g.OnDurable(tok.token)
	}
	n := 0
	for _, q := range g.queue {
		if q.after <= g.completed {
			if q.then != nil {
				q.then()
			} else {
				g.env.Send(q.to, q.m)
			}
			n++
		} else {
			break
		}
	}
	g.queue = append(g.queue[:0], g.queue[n:]...)
	return true
}
