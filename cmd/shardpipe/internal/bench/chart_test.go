package bench

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var updateChart = flag.Bool("update", false, "rewrite docs/bench-chart.svg from testdata/report-2026-12-01.json")

// fixedReport is the fifth run of 2026-12-01 as BENCHMARKS.md reports it.
func fixedReport(t *testing.T) Report {
	t.Helper()
	b, err := os.ReadFile("testdata/report-2026-12-01.json")
	if err != nil {
		t.Fatal(err)
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("testdata/report-2026-12-01.json: %v", err)
	}
	return r
}

// svgElem is one element of the chart with its attributes.
type svgElem struct {
	name  string
	attrs map[string]string
	text  string
}

// parseSVG decodes the chart as XML (it must be well formed) into its
// elements, in order.
func parseSVG(t *testing.T, svg []byte) []svgElem {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(svg))
	var out []svgElem
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("the chart is no well-formed XML: %v", err)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			e := svgElem{name: tk.Name.Local, attrs: map[string]string{}}
			for _, a := range tk.Attr {
				e.attrs[a.Name.Local] = a.Value
			}
			out = append(out, e)
		case xml.CharData:
			if len(out) > 0 {
				out[len(out)-1].text += string(tk)
			}
		}
	}
}

func num(t *testing.T, e svgElem, attr string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(e.attrs[attr], 64)
	if err != nil {
		t.Fatalf("<%s %s=%q>: %v", e.name, attr, e.attrs[attr], err)
	}
	return v
}

// TestWriteChart draws the fixed report and checks the drawing: one bar
// per mode, in the report's order, longer for a faster mode; a dashed
// ceiling mark for d (min(a, b) and k), e (j) and f (min(a, b)) at the end
// of that ceiling's bar, with the ratio in the row's text; and the
// committed docs/bench-chart.svg (shown in BENCHMARKS.md) is this drawing.
func TestWriteChart(t *testing.T) {
	r := fixedReport(t)
	var buf bytes.Buffer
	if err := WriteChart(&buf, r); err != nil {
		t.Fatal(err)
	}
	elems := parseSVG(t, buf.Bytes())
	barEnd := map[string]float64{}
	rate := map[string]float64{}
	var bars []string
	var texts []string
	ceilings := map[string][]svgElem{}
	row := ""
	for _, e := range elems {
		switch {
		case e.name == "rect" && e.attrs["class"] == "bar":
			row = e.attrs["data-mode"]
			bars = append(bars, row)
			barEnd[row] = num(t, e, "x") + num(t, e, "width")
		case e.name == "line" && e.attrs["class"] == "ceiling":
			ceilings[row] = append(ceilings[row], e)
		case e.name == "text":
			texts = append(texts, e.text)
		}
	}
	var want []string
	for _, m := range r.Modes {
		want = append(want, m.Letter)
		rate[m.Letter] = m.RecordsPerSec.Median
	}
	if strings.Join(bars, " ") != strings.Join(want, " ") {
		t.Fatalf("bars %v, want one per mode in order %v", bars, want)
	}
	for _, a := range want {
		for _, b := range want {
			if rate[a] > rate[b] && barEnd[a] <= barEnd[b] {
				t.Errorf("(%s) at %.0f records/s has a bar no longer than (%s) at %.0f", a, rate[a], b, rate[b])
			}
		}
	}
	floor := min(rate["a"], rate["b"])
	ceilingEnd := map[string]float64{"min(a, b)": barEnd["a"], "k": barEnd["k"], "j": barEnd["j"]}
	if rate["b"] < rate["a"] {
		ceilingEnd["min(a, b)"] = barEnd["b"]
	}
	for _, tc := range []struct {
		mode string
		of   []string
		cv   []float64
	}{
		{"d", []string{"min(a, b)", "k"}, []float64{floor, rate["k"]}},
		{"e", []string{"j"}, []float64{rate["j"]}},
		{"f", []string{"min(a, b)"}, []float64{floor}},
		{"a", nil, nil},
		{"h", nil, nil},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			got := ceilings[tc.mode]
			if len(got) != len(tc.of) {
				t.Fatalf("%d ceiling marks, want %d (%v)", len(got), len(tc.of), tc.of)
			}
			for i, c := range got {
				if c.attrs["data-of"] != tc.of[i] || num(t, c, "x1") != ceilingEnd[tc.of[i]] {
					t.Errorf("mark %d: of %q at x %s, want of %q at %.1f", i, c.attrs["data-of"], c.attrs["x1"], tc.of[i], ceilingEnd[tc.of[i]])
				}
				ratio := fmt.Sprintf("%.2f of %s", rate[tc.mode]/tc.cv[i], tc.of[i])
				if !strings.Contains(strings.Join(texts, "\n"), ratio) {
					t.Errorf("no text says %q", ratio)
				}
			}
		})
	}
	golden := filepath.Join("..", "..", "..", "..", "docs", "bench-chart.svg")
	if *updateChart {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if g, err := os.ReadFile(golden); err != nil || !bytes.Equal(g, buf.Bytes()) {
		t.Errorf("docs/bench-chart.svg is not the chart of testdata/report-2026-12-01.json (%v): go test ./cmd/shardpipe/internal/bench -run TestWriteChart -update", err)
	}
}

// TestOutputWritesChart: with a JSON file, Output writes the chart beside
// it (.svg in place of .json), the same drawing WriteChart makes.
func TestOutputWritesChart(t *testing.T) {
	r := fixedReport(t)
	file := filepath.Join(t.TempDir(), "bench.json")
	if err := Output(r, io.Discard, false, file); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(ChartPath(file))
	if err != nil {
		t.Fatalf("no chart beside the JSON: %v", err)
	}
	var want bytes.Buffer
	if err := WriteChart(&want, r); err != nil {
		t.Fatal(err)
	}
	if ChartPath(file) != strings.TrimSuffix(file, "json")+"svg" || !bytes.Equal(got, want.Bytes()) {
		t.Errorf("chart at %s (%d bytes) is not WriteChart's drawing (%d bytes)", ChartPath(file), len(got), want.Len())
	}
}
