package partlog

import (
	"fmt"
	"strconv"
	"strings"
)

// EpochEntry says that leader epoch Epoch starts at StartOffset.
type EpochEntry struct {
	Epoch       int32
	StartOffset int64
}

// EpochCache is Kafka's LeaderEpochFileCache: which leader epoch wrote which
// range of the log. Followers use it to find where their log diverges from
// the leader's (KIP-101, KIP-279).
type EpochCache struct {
	entries []EpochEntry
}

// Entries returns the cache's entries (shared; do not modify).
func (c *EpochCache) Entries() []EpochEntry { return c.entries }

// LatestEpoch is the newest epoch, or -1.
func (c *EpochCache) LatestEpoch() int32 {
	if len(c.entries) == 0 {
		return -1
	}
	return c.entries[len(c.entries)-1].Epoch
}

// Assign records that epoch starts at start. An entry for the latest epoch at
// a later offset is ignored; entries it contradicts (a higher or equal epoch,
// or a start at or after this one) are dropped first. It reports whether the
// cache changed.
func (c *EpochCache) Assign(epoch int32, start int64) bool {
	if n := len(c.entries); n > 0 {
		last := c.entries[n-1]
		if last.Epoch == epoch && start >= last.StartOffset {
			return false
		}
	}
	kept := c.entries[:0]
	for _, e := range c.entries {
		if e.Epoch < epoch && e.StartOffset < start {
			kept = append(kept, e)
		}
	}
	c.entries = append(kept, EpochEntry{Epoch: epoch, StartOffset: start})
	return true
}

// EndOffsetFor answers OffsetsForLeaderEpoch: the largest epoch not above
// requested and the offset where it ends (the start of the next epoch, or
// the log end offset for the latest). (-1, -1) when requested is undefined or
// above every epoch this log knows.
func (c *EpochCache) EndOffsetFor(requested int32, logEndOffset int64) (int32, int64) {
	if requested < 0 || len(c.entries) == 0 {
		return -1, -1
	}
	if c.LatestEpoch() == requested {
		return requested, logEndOffset
	}
	higher := -1
	for i, e := range c.entries {
		if e.Epoch > requested {
			higher = i
			break
		}
	}
	if higher < 0 {
		return -1, -1
	}
	if higher == 0 {
		return requested, c.entries[0].StartOffset
	}
	return c.entries[higher-1].Epoch, c.entries[higher].StartOffset
}

// FirstGreaterStart is the answer of the bug zoo's epoch-lookup-first-greater
// (Kafka before KIP-279): the requested epoch, ending where the first greater
// epoch starts, whether or not this log ever had the requested epoch.
func (c *EpochCache) FirstGreaterStart(requested int32, logEndOffset int64) (int32, int64) {
	for _, e := range c.entries {
		if e.Epoch > requested {
			return requested, e.StartOffset
		}
	}
	return requested, logEndOffset
}

// TruncateFromEnd drops the entries that start at or after offset.
func (c *EpochCache) TruncateFromEnd(offset int64) {
	kept := c.entries[:0]
	for _, e := range c.entries {
		if e.StartOffset < offset {
			kept = append(kept, e)
		}
	}
	c.entries = kept
}

// TruncateFromStart drops entries wholly below offset; the newest of them,
// if it reaches past offset, now starts at offset.
func (c *EpochCache) TruncateFromStart(offset int64) {
	var kept []EpochEntry
	for i, e := range c.entries {
		if i+1 < len(c.entries) && c.entries[i+1].StartOffset <= offset {
			continue
		}
		if e.StartOffset < offset {
			e.StartOffset = offset
		}
		kept = append(kept, e)
	}
	c.entries = kept
}

// Encode is the leader-epoch-checkpoint text format: version, count, entries.
func (c *EpochCache) Encode() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "0\n%d\n", len(c.entries))
	for _, e := range c.entries {
		fmt.Fprintf(&b, "%d %d\n", e.Epoch, e.StartOffset)
	}
	return []byte(b.String())
}

// DecodeEpochCache parses a leader-epoch-checkpoint.
func DecodeEpochCache(data []byte) (*EpochCache, error) {
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) < 2 || lines[0] != "0" {
		return nil, fmt.Errorf("leader-epoch-checkpoint: bad header")
	}
	n, err := strconv.Atoi(lines[1])
	if err != nil || n != len(lines)-2 {
		return nil, fmt.Errorf("leader-epoch-checkpoint: bad count")
	}
	c := &EpochCache{}
	for _, l := range lines[2:] {
		var e EpochEntry
		if _, err := fmt.Sscanf(l, "%d %d", &e.Epoch, &e.StartOffset); err != nil {
			return nil, fmt.Errorf("leader-epoch-checkpoint: %w", err)
		}
		c.entries = append(c.entries, e)
	}
	return c, nil
}

// startEarlier moves an epoch's start back to where checkpointed (the
// leader-epoch checkpoint) says it starts, when that is earlier, after the
// epoch before it, and the log holds no batch in between (batchIn reports
// one): compaction removes an epoch's first batches, not the start the
// epoch had. A checkpoint that says otherwise (a bit flip in it) is not
// taken over the batches.
func (c *EpochCache) startEarlier(checkpointed []EpochEntry, batchIn func(from, to int64) bool) {
	for i := range c.entries {
		for _, ck := range checkpointed {
			if ck.Epoch == c.entries[i].Epoch && ck.StartOffset < c.entries[i].StartOffset &&
				(i == 0 || ck.StartOffset > c.entries[i-1].StartOffset) && !batchIn(ck.StartOffset, c.entries[i].StartOffset) {
				c.entries[i].StartOffset = ck.StartOffset
			}
		}
	}
}
