package bench

import (
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

type svgDoc struct {
	XMLName   xml.Name  `xml:"svg"`
	Width     int       `xml:"width,attr"`
	Lines     []svgLine `xml:"line"`
	Polylines []struct {
		Class  string `xml:"class,attr"`
		Points string `xml:"points,attr"`
	} `xml:"polyline"`
	Texts []string `xml:"text"`
}

type svgLine struct {
	Class string  `xml:"class,attr"`
	X1    float64 `xml:"x1,attr"`
	Y1    float64 `xml:"y1,attr"`
	X2    float64 `xml:"x2,attr"`
	Y2    float64 `xml:"y2,attr"`
}

func TestFleetPlotIsTheAvailableCurve(t *testing.T) {
	r := fleetResult(10000, 45)
	r.Samples[3].Available = -1 // a failed scrape is left out
	var b strings.Builder
	if err := WriteFleetPlot(&b, r); err != nil {
		t.Fatal(err)
	}
	var doc svgDoc
	if err := xml.Unmarshal([]byte(b.String()), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, b.String())
	}
	curves := map[string]string{}
	for _, p := range doc.Polylines {
		curves[p.Class] = p.Points
	}
	if len(doc.Polylines) != 2 || curves["available"] == "" || curves["registered"] == "" {
		t.Fatalf("want the polylines available and registered, got %+v", doc.Polylines)
	}
	// Registered reaches the fleet size at half time: its midpoint sits
	// on the top line, where available is halfway up.
	reg := strings.Fields(curves["registered"])
	if _, y, _ := strings.Cut(reg[len(reg)/2+1], ","); y != fmt.Sprintf("%.1f", float64(plotTop)) {
		t.Errorf("registered at half time: y=%s, want %d (all registered)", y, plotTop)
	}
	pts := strings.Fields(curves["available"])
	if len(pts) != len(r.Samples)-1 {
		t.Fatalf("%d points, want %d (one per sample read)", len(pts), len(r.Samples)-1)
	}
	var xs, ys []float64
	for _, p := range pts {
		x, y, ok := strings.Cut(p, ",")
		fx, err1 := strconv.ParseFloat(x, 64)
		fy, err2 := strconv.ParseFloat(y, 64)
		if !ok || err1 != nil || err2 != nil {
			t.Fatalf("point %q", p)
		}
		if fx < plotLeft || fx > plotW-plotRight || fy < plotTop || fy > plotH-plotBottom {
			t.Errorf("point %q outside the plot area", p)
		}
		xs, ys = append(xs, fx), append(ys, fy)
	}
	for i := 1; i < len(xs); i++ {
		if xs[i] <= xs[i-1] || ys[i] > ys[i-1] { // SVG y grows downwards
			t.Errorf("point %d (%v,%v) after (%v,%v): time must grow and the count not fall", i, xs[i], ys[i], xs[i-1], ys[i-1])
		}
	}
	// The first point is (0 s, 0 hosts): the bottom-left corner; the last
	// sits on the dashed fleet-size line.
	if xs[0] != plotLeft || ys[0] != plotH-plotBottom {
		t.Errorf("first point (%v,%v), want the origin (%v,%v)", xs[0], ys[0], plotLeft, plotH-plotBottom)
	}
	var total *svgLine
	for i := range doc.Lines {
		if doc.Lines[i].Class == "total" {
			total = &doc.Lines[i]
		}
	}
	if total == nil || total.Y1 != ys[len(ys)-1] {
		t.Errorf("fleet-size line %+v, want at y=%v (the last point)", total, ys[len(ys)-1])
	}
	if !strings.Contains(strings.Join(doc.Texts, "\n"), "10000 hosts, 100 racks") {
		t.Errorf("title missing: %q", doc.Texts)
	}
}

func TestNiceStep(t *testing.T) {
	for v, want := range map[float64]float64{100000: 20000, 10000: 2000, 59: 20, 1: 0.2, 30: 10, 0: 1} {
		if got := niceStep(v); got != want {
			t.Errorf("niceStep(%v) = %v, want %v", v, got, want)
		}
	}
}

func TestSimsFor(t *testing.T) {
	for _, c := range []struct{ hosts, asked, nofile, want int }{
		{10000, 4, 20000, 4},     // the bench's 10,000: as asked
		{100000, 4, 20000, 11},   // 100,000: 9,872 BMCs per process at 20,000 files
		{100000, 20, 20000, 20},  // more asked than needed: as asked
		{100000, 1, 1024, 261},   // 384 per process at the usual 1,024
		{20, 0, 20000, 1},        // at least one
		{100000, 1, 1 << 20, 10}, // bmcsim.MaxHosts bounds a process
	} {
		if got := simsFor(c.hosts, c.asked, c.nofile); got != c.want {
			t.Errorf("simsFor(%d, %d, %d) = %d, want %d", c.hosts, c.asked, c.nofile, got, c.want)
		}
	}
}
