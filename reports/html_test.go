package reports

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"kafkasim/history"
)

// renderReport writes the synthetic run's plots and report into a temp dir
// and returns the page.
func renderReport(t *testing.T, r *Run) string {
	t.Helper()
	dir := t.TempDir()
	ps, err := WritePlots(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteHTML(&buf, r, ps, dir); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// checkWellFormed parses the page as strict XML with HTML's entities
// allowed (the template closes its void elements, <meta/> and <img/>):
// html/template quotes every attribute and escapes every text, so a page
// that does not parse has an unbalanced tag or an unescaped value.
func checkWellFormed(t *testing.T, page string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(page))
	d.Strict = true
	d.Entity = xml.HTMLEntity
	depth := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			line, _ := d.InputPos()
			lines := strings.Split(page, "\n")
			ctx := ""
			if line-1 < len(lines) {
				ctx = lines[line-1]
			}
			t.Fatalf("report.html is not well formed: %v\nline %d: %.300s", err, line, ctx)
		}
		switch tok.(type) {
		case xml.StartElement:
			depth++
		case xml.EndElement:
			depth--
		}
	}
	if depth != 0 {
		t.Fatalf("report.html ends %d elements deep", depth)
	}
}

func TestWriteHTMLShowsTheRun(t *testing.T) {
	r, cites := syntheticRun()
	page := renderReport(t, r)
	checkWellFormed(t, page)

	for _, want := range []string{
		`class="verdict fail"`,
		r.Headline,
		r.Scenario,
		r.TraceHash,
		"1834211", // events
		"2258881", // events per wall second
		"36.9×",   // simulated seconds per wall second
		"lost-acked-write", `<span class="badge violation">violation</span>`,
		"duplicate-read", `<span class="badge permitted">permitted</span>`,
		"acks=all must survive one broker crash",
		"replicas-agree-below-hw", "violated",
		"crash broker-1", "no such node",
		`<svg class="lanes"`,
		`<img src="data:image/svg&#43;xml;base64,`, // + is escaped in attributes; browsers decode it
		`id="plot-throughput"`, `id="plot-lag"`,
		// The final state, kafka-topics style: orders-0 led by 2 with 1 in the ELR.
		`<td class="mono">1,2,3</td><td class="mono">2,3</td><td class="mono">1</td>`,
		"1:down 2:1502 3:1500",
		"<details>", "min.insync.replicas",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}

	// Sections come in the order the brief asks for.
	if v, h := strings.Index(page, `id="verdict"`), strings.Index(page, "<body>"); v < 0 || strings.TrimSpace(page[h+len("<body>"):v]) != "<section" {
		t.Error("the verdict must be the first thing in the page body")
	}
	last := -1
	for _, id := range []string{`id="verdict"`, `id="expectations"`, `id="figures"`, `id="anomalies"`,
		`id="invariants"`, `id="timeline"`, `id="plots"`, `id="final"`, `id="linearizability"`, `id="history"`, `id="config"`} {
		i := strings.Index(page, id)
		if i < 0 || i < last {
			t.Errorf("section %s missing or out of order", id)
		}
		last = i
	}

	// Every op an example cites links to its row in the history excerpt,
	// and the excerpt brings each send's invocation along.
	for kind, idxs := range cites {
		for _, idx := range idxs {
			if kind == "lost" || kind == "hostile" || kind == "dup" {
				if !strings.Contains(page, fmt.Sprintf(`href="#op-%d"`, idx)) {
					t.Errorf("%s: no link to op %d", kind, idx)
				}
				if !strings.Contains(page, fmt.Sprintf(`<tr id="op-%d" class="cited">`, idx)) {
					t.Errorf("%s: no excerpt row for op %d", kind, idx)
				}
			}
		}
	}
	hostileAck := cites["hostile"][0]
	if !regexp.MustCompile(fmt.Sprintf(`<tr id="op-%d"><td class="num">%d</td><td class="num">[0-9.]+(ms|s)</td><td class="mono">p-1</td><td>invoke</td>`,
		hostileAck-1, hostileAck-1)).MatchString(page) {
		t.Errorf("excerpt lacks the invocation (op %d) of the hostile send", hostileAck-1)
	}
	// Op 999999 is cited but not in the history: shown without a link.
	if strings.Contains(page, `href="#op-999999"`) || !strings.Contains(page, "#999999") {
		t.Error("an op missing from the history must be listed without a link")
	}
	if n := strings.Count(page, "<tr id=\"op-"); n > 8 {
		t.Errorf("excerpt has %d rows; it should hold only cited ops and their partners", n)
	}
}

func TestWriteHTMLEscapesHostileValues(t *testing.T) {
	r, _ := syntheticRun()
	r.Scenario = `<img src=x onerror=alert(2)>`
	page := renderReport(t, r)
	if strings.Contains(page, hostile) || strings.Contains(page, "<img src=x") {
		t.Fatal("a hostile value reached the page unescaped")
	}
	if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the hostile record value should appear escaped")
	}
	// The page itself runs no script: the only "<script" is inside the
	// porcupine srcdoc, where it is escaped.
	if strings.Contains(strings.ToLower(page), "<script") {
		t.Error("report.html must not contain script elements of its own")
	}
	if strings.Contains(page, "ZgotmplZ") {
		t.Error("html/template rejected a value (ZgotmplZ): an unsafe URL or CSS value slipped in")
	}
	// The porcupine page is carried whole in srcdoc, escaped once.
	if !strings.Contains(page, `srcdoc="&lt;!DOCTYPE html&gt;&lt;html&gt;&lt;body&gt;&lt;h1 id=&#34;h&#34;&gt;porcupine orders-0`) {
		t.Error("the porcupine visualisation is not embedded in an escaped srcdoc")
	}
}

func TestWriteHTMLVerdictColours(t *testing.T) {
	for verdict, class := range map[string]string{"pass": "pass", "fail": "fail", "liveness": "liveness", "crash": "crash", "": "unknown", "weird": "unknown"} {
		var buf bytes.Buffer
		if err := WriteHTML(&buf, &Run{Verdict: verdict}, nil, t.TempDir()); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), `class="verdict `+class+`"`) {
			t.Errorf("verdict %q: want class %q", verdict, class)
		}
	}
}

// An empty run, a nil run and a run whose plot files vanished still make a
// well-formed page.
func TestWriteHTMLOddInputs(t *testing.T) {
	for name, r := range map[string]*Run{
		"nil":   nil,
		"empty": {},
		"odd ops": {
			Ops:       []history.Op{{Index: 5, Type: history.Type(9)}, {Index: 5, Process: "p", Type: history.OK, F: history.FSend, Value: history.Value{Partition: -1, Offset: -1}}},
			Anomalies: []Anomaly{{Type: "x", Examples: []Example{{Offset: -1, Ops: []int64{5, -3}}}}},
			Timeline:  []Sample{{At: -time.Second}, {At: 0, Partitions: []PartitionSample{{Name: "nodash", Leader: -1}}}},
			Faults:    []Fault{{At: time.Hour}},
			Final:     []PartitionState{{Topic: "t", Leader: -1}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			err := WriteHTML(&buf, r, []Plot{{Name: "gone", Title: "Gone", PNG: "gone.png", SVG: "gone.svg"}}, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			checkWellFormed(t, buf.String())
			if !strings.Contains(buf.String(), "neither") {
				t.Error("a missing plot should be reported on the page")
			}
		})
	}
}

func TestWriteHTMLCapsExamplesAndExcerpt(t *testing.T) {
	var b opsBuilder
	for i := 0; i < 2000; i++ {
		b.add(time.Duration(i)*time.Millisecond, "p-0", history.Invoke, history.FSend, sendValue(fmt.Sprint("v", i)))
	}
	var anomalies []Anomaly
	for a := 0; a < 40; a++ {
		an := Anomaly{Type: fmt.Sprint("kind-", a), Verdict: "violation", Count: 30}
		for e := 0; e < 30; e++ {
			an.Examples = append(an.Examples, Example{Offset: -1, Ops: []int64{int64(a*30 + e)}})
		}
		anomalies = append(anomalies, an)
	}
	var buf bytes.Buffer
	if err := WriteHTML(&buf, &Run{Ops: b.ops, Anomalies: anomalies}, nil, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if n := strings.Count(page, `<tr id="op-`); n != maxExcerptRows {
		t.Errorf("excerpt has %d rows, want the cap of %d", n, maxExcerptRows)
	}
	if n := strings.Count(page, "… and 10 more examples."); n != 40 {
		t.Errorf("%d anomalies say how many examples they left out, want 40", n)
	}
	if !strings.Contains(page, "cited operations are not shown") {
		t.Error("the excerpt should say that it left cited operations out")
	}
}
