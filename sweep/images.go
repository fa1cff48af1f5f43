package sweep

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

// plotDPI is the PNGs' resolution: the sweep's figures carry small print
// (facet titles, keys, values in squares) that 96 dpi blurs.
const plotDPI = 144

// plotWriteImages draws the same figure onto a PNG and an SVG canvas and
// writes both into dir under p's file names.
func plotWriteImages(dir string, p Plot, w, h vg.Length, drawTo func(draw.Canvas)) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(plotDPI))
	if err := plotDrawSafely(draw.New(img), drawTo); err != nil {
		return err
	}
	if err := plotWriteFile(filepath.Join(dir, p.PNG), func(f io.Writer) error {
		return (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(f, img.Image())
	}); err != nil {
		return err
	}
	svg := vgsvg.New(w, h)
	if err := plotDrawSafely(draw.New(svg), drawTo); err != nil {
		return err
	}
	return plotWriteFile(filepath.Join(dir, p.SVG), func(f io.Writer) error {
		_, err := svg.WriteTo(f)
		return err
	})
}

// plotDrawSafely turns a panic of the plotting library (it panics on some
// degenerate input) into an error: one bad plot must not lose the sweep.
func plotDrawSafely(c draw.Canvas, drawTo func(draw.Canvas)) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("drawing failed: %v", r)
		}
	}()
	drawTo(c)
	return nil
}

func plotWriteFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
