package reports

import "kafkasim/history"

// OpsHistory serves a slice of operations (a history read from a file, or
// built by a test) as a History.
func OpsHistory(ops []history.Op) History { return newOps(ops) }

// RecorderHistory serves a run's recorder as a History without building
// every operation at once (with its polls' records, a long run's history
// took gigabytes): the report, a run's expectations and a sweep read it.
func RecorderHistory(r *history.Recorder) History { return recorderHistory{r} }

type recorderHistory struct{ r *history.Recorder }

func (h recorderHistory) Len() int                        { return h.r.Len() }
func (h recorderHistory) Each(f func(op *history.Op))     { h.r.Each(f) }
func (h recorderHistory) EachHead(f func(op *history.Op)) { h.r.EachHead(f) }

func (h recorderHistory) At(p int) *history.Op {
	op := h.r.Op(int64(p))
	return &op
}

func (h recorderHistory) Head(p int) *history.Op {
	op := h.r.OpHead(int64(p))
	return &op
}

// Find: a recorder's operations sit at their index.
func (h recorderHistory) Find(idx int64) (int, bool) {
	if idx < 0 || idx >= int64(h.r.Len()) {
		return 0, false
	}
	return int(idx), true
}
