package sim

// The disk's faults, as the world injects them: a power loss (the page
// cache lost, the last write perhaps torn), a wipe, a flipped bit,
// unreadable ranges and a full disk.

type badRange struct {
	name     string
	off, end int64
}

// Flip is where a bit flip landed (a god-view fact, for audits).
type Flip struct {
	File   string
	Offset int64
}

// Flips lists every bit flip in the disk's files, oldest first, by the
// files' current names: a rename carries a file's flips along, a removal or
// a wipe clears them.
func (d *Disk) Flips() []Flip { return d.flips }

func (d *Disk) powerLoss() {
	tear := d.tornArmed || chance(d.rng, d.opts.TornWriteProbability)
	d.tornArmed = false
	if tear {
		for i := len(d.pending) - 1; i >= d.head; i-- {
			op := *d.pending[i]
			if op.kind != opWrite || op.done {
				continue
			}
			if len(op.data) > 1 {
				op.data = op.data[:1+d.rng.IntN(len(op.data)-1)]
				d.applyDurable(&op)
				d.stats.TornWrites++
			}
			break
		}
	}
	// What the page cache held beyond the durable copy is undone: a file
	// changes from the lowest offset an operation not yet durable touched,
	// or a bit flip hit.
	for _, f := range d.flips {
		d.changedFrom(f.File, f.Offset)
	}
	var undid map[string]bool
	for _, op := range d.pending[d.head:] {
		if op.done {
			continue
		}
		if undid == nil {
			undid = map[string]bool{}
		}
		undid[dirOf(op.name())] = true
		if to := op.to(); to != "" {
			undid[dirOf(to)] = true
		}
		switch op.kind {
		case opWrite, opTruncate:
			d.changedFrom(op.name(), op.off)
		default:
			d.changedFrom(op.name(), 0)
			d.changedFrom(op.to(), 0)
		}
	}
	if d.undidIn == nil && undid != nil {
		d.undidIn = map[string]uint64{}
	}
	for dir := range undid { // kafkasim:orderless: each directory counted on its own
		d.undidIn[dir]++
	}
	d.clearPending()
	d.used = 0
	for name, e := range d.files { // kafkasim:orderless: each entry on its own
		e.cache = nil
		if f := e.durable; f != nil {
			e.cache = f.handOver()
			d.used += f.size
		}
		d.tidy(name, e)
	}
}

// PowerLossesUndoing counts the power losses that undid an operation (a
// write, truncation, rename or removal not yet durable) on a file in dir
// (a god-view fact, for audits: a power loss that found everything there
// durable took nothing from it).
func (d *Disk) PowerLossesUndoing(dir string) uint64 { return d.undidIn[dir] }

// dirOf is the directory of a file's name ("" for a file at the root).
func dirOf(name string) string {
	for i := len(name) - 1; i >= 0; i-- {
		if name[i] == '/' {
			return name[:i]
		}
	}
	return ""
}

// wipe replaces the disk with an empty one.
func (d *Disk) wipe() {
	d.stats.Wipes++
	d.clearPending()
	d.files, d.dirs = map[string]*fileEntry{}, diskDirs{}
	d.dropped++
	d.used = 0
	d.bad = nil
	d.memo, d.unchangedBelow, d.flips = nil, nil, nil
	d.tornArmed = false
	d.fullAt = -1
	d.fsyncSlowFactor = 1
}

// corrupt flips one bit of a file (a random file when name is empty) at a
// random offset, on the medium and in the cache. It returns the file and
// offset, or false if there was nothing to corrupt.
func (d *Disk) corrupt(name string) (string, int64, bool) {
	if name == "" {
		var names []string
		for _, n := range d.List("") {
			if d.cached(n).size > 0 {
				names = append(names, n)
			}
		}
		if len(names) == 0 {
			return "", 0, false
		}
		name = names[d.rng.IntN(len(names))]
	}
	f := d.cached(name)
	if f == nil || f.size == 0 {
		return "", 0, false
	}
	off := d.rng.Int64N(f.size)
	bit := byte(1) << d.rng.IntN(8)
	f.flip(off, bit)
	d.changedFrom(name, off)
	d.flips = append(d.flips, Flip{File: name, Offset: off})
	if df := d.files[name].durable; df != nil && off < df.size {
		df.flip(off, bit) // on the medium too
	}
	d.stats.Corruptions++
	return name, off, true
}

// readError makes a range of a file unreadable (a random file and range when
// name is empty). It returns what it chose.
func (d *Disk) readError(name string) (string, int64, bool) {
	if name == "" {
		names := d.List("")
		if len(names) == 0 {
			return "", 0, false
		}
		name = names[d.rng.IntN(len(names))]
	}
	size, _ := d.Size(name)
	off := int64(0)
	if size > 0 {
		off = d.rng.Int64N(size)
	}
	d.bad = append(d.bad, badRange{name: name, off: off, end: off + 4096})
	return name, off, true
}

func (d *Disk) clearBad(name string, off, end int64) {
	kept := d.bad[:0]
	for _, r := range d.bad {
		if r.name == name && off <= r.off && r.end <= end {
			continue
		}
		kept = append(kept, r)
	}
	d.bad = kept
}

func (d *Disk) dropBad(name string) { d.clearBad(name, 0, 1<<62) }

// setFull makes the disk full at its current usage (on) or lifts that (off).
func (d *Disk) setFull(on bool) {
	if on {
		d.fullAt = d.used
	} else {
		d.fullAt = -1
	}
}
