package reports

import (
	"fmt"
	"image/png"
	"io"
	"os"
	"path/filepath"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// WriteImages draws the same picture onto a PNG and an SVG canvas and
// writes both into dir under p's file names (the run store's plots and the
// sweeps' use it alike); dpi is the PNG's resolution (vgimg.DefaultDPI, or
// more for figures with small print).
func WriteImages(dir string, p Plot, w, h vg.Length, dpi int, drawTo func(draw.Canvas)) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(dpi))
	if err := drawSafely(draw.New(img), drawTo); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, p.PNG), fastPNG{img}); err != nil {
		return err
	}
	svg := vgsvg.New(w, h)
	if err := drawSafely(draw.New(svg), drawTo); err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, p.SVG), svg)
}

// fastPNG encodes a canvas as PNG at the fastest compression: a run's
// plots took more of its time than the simulation of a small scenario, most
// of it in the encoder's default compression (the files grow by a few
// kilobytes; the pixels are the same).
type fastPNG struct{ c *vgimg.Canvas }

func (p fastPNG) WriteTo(w io.Writer) (int64, error) {
	cw := &countingWriter{w: w}
	err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(cw, p.c.Image())
	return cw.n, err
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// drawSafely turns a panic inside the plotting library (it panics on some
// degenerate ranges) into an error: a report must not crash the run that
// it reports on.
func drawSafely(c draw.Canvas, drawTo func(draw.Canvas)) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("drawing: %v", v)
		}
	}()
	drawTo(c)
	return nil
}

func writeFile(path string, w io.WriterTo) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	_, err = w.WriteTo(f)
	return err
}
