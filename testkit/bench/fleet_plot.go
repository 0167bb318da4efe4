package bench

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// Plot geometry, in SVG user units.
const (
	plotW, plotH                   = 800, 420
	plotLeft, plotRight            = 80, 24
	plotTop, plotBottom            = 48, 56
	plotInnerW, plotInnerH float64 = plotW - plotLeft - plotRight, plotH - plotTop - plotBottom
)

// WriteFleetPlot writes an SVG line plot of hosts available over time
// (r.Samples), with hosts registered beside it (what the available count
// waits on) and the fleet size as a dashed line. Hand-written SVG: no
// plotting library.
func WriteFleetPlot(w io.Writer, r FleetResult) error {
	var pts []FleetSample
	for _, x := range r.Samples {
		if x.Available >= 0 {
			pts = append(pts, x)
		}
	}
	xMax := r.Available.Seconds()
	for _, x := range pts {
		xMax = max(xMax, x.At.Seconds())
	}
	xStep := niceStep(xMax)
	xMax = math.Max(xStep, math.Ceil(xMax/xStep)*xStep)
	yStep := niceStep(float64(r.Hosts))
	yMax := math.Max(yStep, math.Ceil(float64(r.Hosts)/yStep)*yStep)
	px := func(s float64) float64 { return plotLeft + s/xMax*plotInnerW }
	py := func(n float64) float64 { return plotTop + plotInnerH - n/yMax*plotInnerH }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", plotW, plotH, plotW, plotH)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", plotW, plotH)
	fmt.Fprintf(&b, `<text x="%d" y="24" font-size="14">%s</text>`+"\n", plotLeft, xmlText(fmt.Sprintf("Hosts available over time: %d hosts, %d racks", r.Hosts, r.Racks)))
	// Grid and tick labels.
	for v := 0.0; v <= xMax+xStep/2; v += xStep {
		fmt.Fprintf(&b, `<line class="grid" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", px(v), py(0), px(v), py(yMax))
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", px(v), py(0)+18, fmtTick(v))
	}
	for v := 0.0; v <= yMax+yStep/2; v += yStep {
		fmt.Fprintf(&b, `<line class="grid" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", px(0), py(v), px(xMax), py(v))
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", px(0)-6, py(v)+4, fmtTick(v))
	}
	fmt.Fprintf(&b, `<path d="M%.1f %.1f V%.1f H%.1f" fill="none" stroke="black"/>`+"\n", px(0), py(yMax), py(0), px(xMax))
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">seconds after registration started</text>`+"\n", plotLeft+plotInnerW/2, plotH-12)
	fmt.Fprintf(&b, `<text transform="translate(18 %.1f) rotate(-90)" text-anchor="middle">hosts available</text>`+"\n", plotTop+plotInnerH/2)
	// The fleet size, and the curve.
	fmt.Fprintf(&b, `<line class="total" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#999" stroke-dasharray="6 4"/>`+"\n", px(0), py(float64(r.Hosts)), px(xMax), py(float64(r.Hosts)))
	curve := func(class, style string, n func(FleetSample) int) {
		if len(pts) == 0 {
			return
		}
		fmt.Fprintf(&b, `<polyline class="%s" fill="none" %s points="`, class, style)
		for i, x := range pts {
			if i > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "%.1f,%.1f", px(x.At.Seconds()), py(float64(max(0, n(x)))))
		}
		b.WriteString(`"/>` + "\n")
	}
	curve("registered", `stroke="#ff7f0e" stroke-width="1.5" stroke-dasharray="4 3"`, func(x FleetSample) int { return x.Registered })
	curve("available", `stroke="#1f77b4" stroke-width="2"`, func(x FleetSample) int { return x.Available })
	// Legend, bottom right: the curves rise from the bottom left.
	lx, ly := px(xMax)-120, py(0)-44
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#1f77b4" stroke-width="2"/><text x="%.1f" y="%.1f">available</text>`+"\n",
		lx, ly, lx+24, ly, lx+30, ly+4)
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ff7f0e" stroke-width="1.5" stroke-dasharray="4 3"/><text x="%.1f" y="%.1f">registered</text>`+"\n",
		lx, ly+18, lx+24, ly+18, lx+30, ly+22)
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// niceStep is a tick step of 1, 2 or 5 × 10^k giving about five ticks
// up to v.
func niceStep(v float64) float64 {
	if v <= 0 {
		return 1
	}
	raw := v / 5
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

func fmtTick(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%g", v)
}

func xmlText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
