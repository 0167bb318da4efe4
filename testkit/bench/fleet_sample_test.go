package bench

import "testing"

func TestStateText(t *testing.T) {
	got := stateText(map[string]int{"available": 9000, "inspecting": 300, "registering": 600, "error": 0, "none": 300})
	if want := "600 registering, 300 inspecting, 300 none"; got != want {
		t.Errorf("stateText = %q, want %q", got, want)
	}
	if got := stateText(map[string]int{"available": 20}); got != "no other state" {
		t.Errorf("all available: %q", got)
	}
}

func TestLabelValue(t *testing.T) {
	for labels, want := range map[string]string{`{state="available"}`: "available", `{rack="r1",state="none"}`: "none", `{rack="r1"}`: ""} {
		got, ok := labelValue(labels, "state")
		if got != want || ok != (want != "") {
			t.Errorf("labelValue(%s) = %q %v, want %q", labels, got, ok, want)
		}
	}
}

func TestPeaks(t *testing.T) {
	rss, heap := peaks([]FleetSample{{RSSKiB: 5, HeapBytes: 9}, {RSSKiB: 7, HeapBytes: -1}, {RSSKiB: -1, HeapBytes: 3}})
	if rss != 7 || heap != 9 {
		t.Errorf("peaks = %d, %v; want 7, 9", rss, heap)
	}
}

func TestWithoutPrefill(t *testing.T) {
	got := withoutPrefill(map[string]int{"available": 1030, "inspecting": 5, "none": 2}, map[string]int{"available": 1000, "none": 2})
	if len(got) != 2 || got["available"] != 30 || got["inspecting"] != 5 {
		t.Errorf("withoutPrefill = %v, want available 30, inspecting 5 (none left out: all prefilled)", got)
	}
	if got := withoutPrefill(nil, map[string]int{"available": 3}); got != nil {
		t.Errorf("a failed scrape (nil) must stay nil, got %v", got)
	}
}
