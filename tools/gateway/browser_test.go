package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/recoil-go/recoil/internal/testsvc"
	"github.com/recoil-go/recoil/tools/gateway"
	"github.com/recoil-go/recoil/tools/load"
)

// chromium returns the path of a Chromium or Chrome binary, or skips the
// test (fails it when RECOIL_REQUIRE_SERVICES=1: CI installs chromium).
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("RECOIL_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if testsvc.Required() {
		t.Fatalf("no Chromium on PATH for the gateway page's browser test (looked for chromium, chromium-browser, google-chrome, chrome) and RECOIL_REQUIRE_SERVICES=1: install it (apt-get install chromium) or set RECOIL_CHROMIUM to its path")
	}
	t.Skip("skipping the gateway page's browser test: no Chromium on PATH (looked for chromium, chromium-browser, google-chrome, chrome); " +
		"install it (apt-get install chromium) or set RECOIL_CHROMIUM to its path; RECOIL_REQUIRE_SERVICES=1 turns this skip into a failure")
	return ""
}

// browser opens a headless Chromium and returns its context, with every
// console error, uncaught exception and browser log error (a blocked
// script, a failed fetch) collected in the returned func's result.
func browser(t *testing.T) (context.Context, func() []string) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox, // CI runs as root
		chromedp.Flag("disable-gpu", true),
		chromedp.WindowSize(1000, 900),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(t.Context(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })

	var mu sync.Mutex
	var problems []string
	err := chromedp.Listen(ctx, func(ev any) {
		var p string
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			p = fmt.Sprintf("uncaught at %d:%d: %s", d.LineNumber+1, d.ColumnNumber+1, d.Text)
			if d.Exception != nil {
				p += " " + d.Exception.Description
			}
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value))
				}
				p = fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(args, " "))
			}
		case *cdplog.EventEntryAdded:
			if ev.Entry.Level == cdplog.EntryLevelError || ev.Entry.Level == cdplog.EntryLevelWarning {
				p = fmt.Sprintf("log %s (%s): %s %s", ev.Entry.Level, ev.Entry.Source, ev.Entry.Text, ev.Entry.URL)
			}
		}
		if p != "" {
			mu.Lock()
			problems = append(problems, p)
			mu.Unlock()
		}
	})
	if err == nil {
		err = chromedp.Do(ctx) // starts the browser; chromedp enables the log and runtime domains
	}
	if err != nil {
		t.Fatalf("starting %s: %v", chromium(t), err)
	}
	return ctx, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), problems...)
	}
}

// pageView is what the page shows, read from its DOM.
type pageView struct {
	Attempts, Accepted, Peak, Keys, Faults, Elapsed, Status string
	StatusHidden                                            bool
	Numbers                                                 []string
	Bars, YTicks                                            int
}

const readPage = `(() => {
  const t = id => document.getElementById(id).textContent;
  const row = document.getElementById("numbers").rows[1];
  return {
    Attempts: t("attempts"), Accepted: t("accepted"), Peak: t("peak"), Keys: t("keys"),
    Faults: t("faults"), Elapsed: t("elapsed"), Status: t("status"),
    StatusHidden: document.getElementById("status").hidden,
    Numbers: Array.from(row.cells).slice(1).map(c => c.textContent),
    Bars: document.querySelectorAll("#chart rect").length,
    YTicks: document.querySelectorAll("#chart text.ytick").length,
  };
})()`

func view(ctx context.Context) (pageView, error) {
	return chromedp.Run(ctx, chromedp.Evaluate[pageView](readPage))
}

// stats is the part of /stats the page shows.
type stats struct {
	Started  *time.Time `json:"started"`
	Attempts int64      `json:"attempts"`
	Accepted int64      `json:"accepted"`
	Peak     struct {
		Attempts int64   `json:"attempts"`
		StartMS  float64 `json:"start_ms"`
	} `json:"peak"`
	Clients         map[string]json.RawMessage `json:"clients"`
	LogicalRequests int                        `json:"logical_requests"`
	Faults          map[string]uint64          `json:"faults"`
	AttemptNumbers  []uint64                   `json:"attempt_numbers"`
}

func getStats(t *testing.T, url string) stats {
	t.Helper()
	resp, err := http.Get(url + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s stats
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// The live page, opened in a real headless Chromium while recoil's load
// driver runs against the gateway: it says plainly that nothing has arrived
// yet, it follows /stats within a second while the load runs, it shows
// exactly /stats once the load stops, and nothing goes wrong in the
// browser's console.
func TestPageInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the browser test in -short mode")
	}
	g, err := gateway.New(gateway.Config{
		Outages: []gateway.Outage{{Start: 300 * time.Millisecond, Duration: 600 * time.Millisecond}},
		Seed:    1,
	})
	if err != nil {
		t.Fatal(err)
	}
	url, stop, err := g.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	}()
	ctx, problems := browser(t)
	// The page polls /stats every 500 ms, so on an idle machine it catches
	// up within a second; a browser on a machine busy with other work runs
	// its timers late, so each look allows lookWithin, which a page that
	// stopped polling, or polled every few seconds, still does not meet.
	const lookWithin = 5 * time.Second

	// Idle: before any attempt the page says so, in words.
	if err := chromedp.Do(ctx, chromedp.Navigate(url+"/"), chromedp.WaitVisible(chromedp.ID("status"))); err != nil {
		t.Fatalf("opening %s/: %v", url, err)
	}
	idle := waitView(t, ctx, lookWithin, func(v pageView) bool { return v.Attempts == "0" })
	if !strings.Contains(idle.Status, "Waiting for the first attempt") || idle.StatusHidden {
		t.Errorf("idle page status = %q (hidden %v), want it to say it waits for the first attempt", idle.Status, idle.StatusHidden)
	}
	if idle.Elapsed != "no attempt yet" || idle.Peak != "none yet" || idle.Bars != 0 {
		t.Errorf("idle page: elapsed %q, peak %q, %d bars; want \"no attempt yet\", \"none yet\", 0", idle.Elapsed, idle.Peak, idle.Bars)
	}

	if s := getStats(t, url); s.Started != nil || s.Attempts != 0 {
		t.Errorf("opening the page started the clock or counted an attempt (its favicon?): started %v, %d attempts", s.Started, s.Attempts)
	}

	// Under load: the page follows /stats. The load lasts until the page
	// has been looked at three times and the outage is over, having
	// answered some attempts: however slowly a busy machine sends them,
	// the page is watched under load through the outage.
	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	done := make(chan error, 1)
	go func() {
		_, err := load.Run(loadCtx, load.Config{
			URL: url + "/v1/charges", Callers: 8, Duration: time.Minute,
			Timeout: 3 * time.Second, Seed: 1, // the default policy
		})
		done <- err
	}()
	var lags []time.Duration
	for {
		select {
		case err := <-done:
			t.Fatalf("load.Run ended before the test stopped it, after %d looks at the page: %v", len(lags), err)
		case <-time.After(300 * time.Millisecond):
		}
		s := getStats(t, url)
		start := time.Now()
		waitView(t, ctx, lookWithin, func(v pageView) bool {
			n, err := strconv.ParseInt(v.Attempts, 10, 64)
			return err == nil && n >= s.Attempts
		})
		lags = append(lags, time.Since(start))
		if o := g.Stats().Outages[0]; len(lags) >= 3 && o.Ended && s.Faults["outage"] > 0 {
			break
		}
	}
	stopLoad()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("load.Run = %v, want it stopped by the test", err)
	}
	t.Logf("the page caught up with /stats within %v", lags)

	// Stopped: the page comes to show exactly what /stats says, within a
	// look. /stats is read again each time the page is looked at, in case
	// an attempt sent as the load stopped was counted after load.Run
	// returned.
	var s stats
	v := waitView(t, ctx, lookWithin, func(v pageView) bool {
		s = getStats(t, url)
		return v.Attempts == strconv.FormatInt(s.Attempts, 10)
	})
	want := pageView{
		Attempts: strconv.FormatInt(s.Attempts, 10),
		Accepted: strconv.FormatInt(s.Accepted, 10),
		Peak:     fmt.Sprintf("%d attempts, in the span from %s", s.Peak.Attempts, pageMS(s.Peak.StartMS)),
		Keys:     fmt.Sprintf("%d · %d", len(s.Clients), s.LogicalRequests),
	}
	if v.Accepted != want.Accepted || v.Peak != want.Peak || v.Keys != want.Keys {
		t.Errorf("page shows accepted %q, peak %q, keys %q; /stats says %q, %q, %q", v.Accepted, v.Peak, v.Keys, want.Accepted, want.Peak, want.Keys)
	}
	for fault, n := range s.Faults {
		if !strings.Contains(v.Faults, fmt.Sprintf("%s %d", fault, n)) {
			t.Errorf("page's faults %q lack %s %d from /stats", v.Faults, fault, n)
		}
	}
	if len(v.Numbers) != len(s.AttemptNumbers) {
		t.Errorf("page's attempt numbers %v, /stats %v", v.Numbers, s.AttemptNumbers)
	} else {
		for i, n := range s.AttemptNumbers {
			if v.Numbers[i] != strconv.FormatUint(n, 10) {
				t.Errorf("attempt number %d: page %s, /stats %d", i+1, v.Numbers[i], n)
			}
		}
	}
	if s.Attempts == 0 || s.Accepted == 0 || s.Faults["outage"] == 0 {
		t.Errorf("the load did not exercise the page: %+v", s)
	}
	if !v.StatusHidden || v.Bars == 0 || v.YTicks < 2 {
		t.Errorf("page under load: status hidden %v, %d bars, %d y ticks; want hidden, bars, a y scale", v.StatusHidden, v.Bars, v.YTicks)
	}
	for _, p := range problems() {
		t.Errorf("browser: %s", p)
	}
}

// pageMS formats milliseconds as the page's ms() does.
func pageMS(v float64) string {
	if v >= 10000 {
		return strconv.FormatFloat(v/1000, 'f', 1, 64) + " s"
	}
	return strconv.FormatFloat(float64(int64(v+0.5)), 'f', 0, 64) + " ms"
}

// waitView reads the page until ok accepts it, failing the test after
// within.
func waitView(t *testing.T, ctx context.Context, within time.Duration, ok func(pageView) bool) pageView {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		v, err := view(ctx)
		if err != nil {
			t.Fatalf("reading the page: %v", err)
		}
		if ok(v) {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page did not get there within %v; it shows %+v", within, v)
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
