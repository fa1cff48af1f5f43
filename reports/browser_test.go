package reports

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// findBrowser returns the first Chromium-family browser on PATH.
func findBrowser() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browserErrors loads file in headless Chromium and returns every console
// error, uncaught exception and error-level log entry the page (or its
// porcupine iframes) produced, plus the text of the element sel.
func browserErrors(t *testing.T, browser, file, sel string) (errs []string, text string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser),
		chromedp.NoSandbox,
		chromedp.Headless,
		chromedp.DisableGPU,
		// Chrome runs a sandboxed iframe (the report's porcupine srcdoc
		// frames) in a process of its own, whose console the page's
		// target does not hear. Keep such frames in the page's process
		// so that their errors count too; this is a test browser that
		// opens only local files.
		chromedp.Flag("disable-features", "Translate,BlinkGenPropertyTrees,IsolateSandboxedIframes,SitePerProcess,IsolateOrigins"),
		chromedp.Flag("disable-site-isolation-trials", true),
	)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	defer acancel()
	var mu sync.Mutex
	record := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, s)
	}
	// The listener is in place before the page loads, so that an error in
	// an inline script is not missed.
	listen := func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				record("console." + string(ev.Type) + ": " + strings.Join(args, " "))
			}
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			record(fmt.Sprintf("uncaught exception at %d:%d: %s", d.LineNumber, d.ColumnNumber, msg))
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError {
				record(fmt.Sprintf("log %s: %s (%s)", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL))
			}
		}
	}
	bctx, bcancel := chromedp.NewContext(actx, chromedp.WithListener(listen))
	defer bcancel()
	err := chromedp.Do(bctx,
		chromedp.Navigate("file://"+file),
		chromedp.WaitReady(chromedp.CSS("body")),
		// Give the iframes' scripts and any late errors a moment.
		chromedp.Sleep(500*time.Millisecond),
	)
	if err != nil {
		t.Fatalf("headless %s: %v", browser, err)
	}
	text, err = chromedp.Run(bctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("headless %s: reading %s: %v", browser, sel, err)
	}
	mu.Lock()
	defer mu.Unlock()
	return append([]string(nil), errs...), text
}

func requireBrowser(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: skipping the headless browser")
	}
	b := findBrowser()
	if b == "" {
		// Under CI the report must be seen rendered: a CI that could not
		// install a browser fails rather than pass without looking.
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true and no chromium, chromium-browser or google-chrome on PATH: the report cannot be rendered (.ci/run installs chromium)")
		}
		t.Skip("no chromium, chromium-browser or google-chrome on PATH; .ci/run installs chromium")
	}
	return b
}

// The report renders in a real browser without a console error or an
// uncaught exception, the porcupine iframe included.
func TestReportRendersWithoutBrowserErrors(t *testing.T) {
	browser := requireBrowser(t)
	r, _ := syntheticRun()
	dir := t.TempDir()
	ps, err := WritePlots(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "report.html")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(f, r, ps, dir); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	errs, verdict := browserErrors(t, browser, file, "#verdict .word")
	for _, e := range errs {
		t.Error(e)
	}
	// innerText applies the page's CSS (text-transform: uppercase), so
	// this also shows that the inline style sheet was applied.
	if strings.TrimSpace(verdict) != "FAIL" {
		t.Errorf("the browser shows verdict %q, want FAIL", verdict)
	}
}

// The harness itself catches errors: a page that logs one and throws one,
// and a sandboxed srcdoc iframe like porcupine's that logs one, must be
// reported, or the test above would pass vacuously.
func TestBrowserHarnessCatchesErrors(t *testing.T) {
	browser := requireBrowser(t)
	file := filepath.Join(t.TempDir(), "bad.html")
	page := `<!DOCTYPE html><html><body><p id="p">x</p>` +
		`<script>console.error("deliberate console error")</script>` +
		`<script>undefinedFunction()</script>` +
		`<iframe sandbox="allow-scripts" srcdoc="&lt;script&gt;console.error(&quot;error in iframe&quot;)&lt;/script&gt;"></iframe></body></html>`
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	errs, _ := browserErrors(t, browser, file, "#p")
	all := strings.Join(errs, "\n")
	t.Logf("errors seen:\n%s", all)
	if !strings.Contains(all, "deliberate console error") || !strings.Contains(all, "undefinedFunction") ||
		!strings.Contains(all, "error in iframe") {
		t.Errorf("harness missed the page's errors; it saw:\n%s", all)
	}
}
