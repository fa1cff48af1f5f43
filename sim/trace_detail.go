package sim

// Trace details as bytes: optional interfaces (performance hooks). A payload
// that appends its trace detail to a buffer (DetailAppender), and a sink
// that takes it as bytes (DetailSink), spare a traced run a string per
// event: a traced run of acks-all-safe allocates 562 bytes per event with
// them, 670 without (docs/performance.md, The performance hooks). Neither
// reaches the trace hash, and the words are the payload's String: a payload
// or sink that implements neither gets the same trace.

// DetailAppender is an event payload that appends its trace detail to a
// buffer, in the words its String returns. The payloads of nearly every
// event of a run are: a traced run then makes no string per event for
// the sinks that take details as bytes.
type DetailAppender interface {
	AppendDetail(b []byte) []byte
}

// DetailSink is a TraceSink that also takes a record whose detail comes as
// bytes, which it may read only during the call (r.Detail is empty).
type DetailSink interface {
	TraceSink
	RecordDetail(r TraceRecord, detail []byte)
}
