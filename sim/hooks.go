package sim

// The performance hooks, and the switch that turns them all off.
//
// A node needs only what node.go lists. What else this package offers
// nodes saves work and never changes a run:
//   - Reusable messages (reuse.go): the world hands a delivered message
//     back to its sender for reuse;
//   - DiskMemo (disk_memo.go): what a node derived from a file survives
//     its crash, checked against the bytes when taken back;
//   - OwnedWriter (disk_owned.go): writes without a copy, and FileRefs;
//   - DetailAppender and DetailSink (trace_detail.go): trace details as
//     bytes.
//
// Options.HooksOff runs a world as if none of them existed: a test runs
// scenarios both ways and demands the same trace hash, events, history
// and trace records (runner's TestPerformanceHooksLeaveTraceUnchanged).

// WithoutDiskHooks returns d as a NodeDisk that implements no optional
// interface: what Env.Disk returns under Options.HooksOff, and what a test
// hands a node's code to take the slow paths.
func WithoutDiskHooks(d NodeDisk) NodeDisk { return plainDisk{d} }

// plainDisk has NodeDisk's methods only: a type assertion finds no hook.
type plainDisk struct{ NodeDisk }
