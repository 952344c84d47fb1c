package gateway

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestNewSetRefuses(t *testing.T) {
	ok := Config{}
	many := make([]Target, MaxTargets+1)
	for i := range many {
		many[i] = Target{Name: "t" + string(rune('a'+i))}
	}
	for _, tc := range []struct {
		name    string
		targets []Target
		want    string
	}{
		{"none", nil, "gateway: targets: none given: a set serves at least one target"},
		{"too many", many, "gateway: targets: 17 given: at most 16"},
		{"empty name", []Target{{Name: "", Config: ok}}, `name "": want 1 to 32 lower-case letters`},
		{"upper case", []Target{{Name: "Primary"}}, `name "Primary": want`},
		{"slash", []Target{{Name: "a/b"}}, `name "a/b": want`},
		{"own path", []Target{{Name: "stats"}}, `name "stats" is one of the set's own paths`},
		{"twice", []Target{{Name: "a"}, {Name: "a"}}, `name "a" is given twice`},
		{"bad config", []Target{{Name: "a"}, {Name: "b", Config: Config{FailureRate: 2}}}, "gateway: targets.b.failure.rate: 2 is not between 0 and 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewSet("", false, tc.targets)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrConfig) {
				t.Fatalf("NewSet: %v, want an ErrConfig containing %q", err, tc.want)
			}
		})
	}
}

// TestSetServesTargetsApart serves two targets with timelines of their
// own, and checks that each answers, counts and reports on its own.
func TestSetServesTargetsApart(t *testing.T) {
	s, err := NewSet("", false, []Target{
		{Name: "primary", Config: Config{Outages: []Outage{{Duration: time.Hour, Status: 529}}}},
		{Name: "spent", Config: Config{Outages: []Outage{{Duration: time.Hour, Status: 429, Code: "insufficient_quota"}}}},
		{Name: "backup"},
	})
	if err != nil {
		t.Fatal(err)
	}
	url, stop, err := s.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	c := &http.Client{Transport: client(t), CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(method, path string) (int, string, http.Header) {
		t.Helper()
		req, _ := http.NewRequest(method, url+path, strings.NewReader(`{"model":"m"}`))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header
	}
	for _, tc := range []struct {
		method, path string
		status       int
		body         string
	}{
		{"POST", "/primary/v1/messages", 529, "overloaded_error"},
		{"POST", "/primary/v1/messages", 529, "overloaded_error"},
		{"POST", "/backup/v1/messages", 200, `"type":"message"`},
		{"POST", "/spent/v1/messages", 429, `"error":{"type":"insufficient_quota"`},
		{"POST", "/nowhere/v1/messages", 404, `no target "nowhere": the targets are served under /primary/, /spent/, /backup/`},
		{"GET", "/", 200, `<a href="backup/">backup</a>`},
		{"GET", "/backup/", 200, "<svg"},
		{"GET", "/metrics", 200, `recoil_gateway_attempts_total{target="primary"} 2`},
		{"GET", "/primary/metrics", 200, "recoil_gateway_attempts_total 2"},
	} {
		status, body, _ := get(tc.method, tc.path)
		if status != tc.status || !strings.Contains(body, tc.body) {
			t.Errorf("%s %s: %d %.200q, want %d containing %q", tc.method, tc.path, status, body, tc.status, tc.body)
		}
	}
	if status, _, h := get("GET", "/backup"); status != http.StatusMovedPermanently || h.Get("Location") != "/backup/" {
		t.Errorf("GET /backup: %d to %q, want a redirect to /backup/", status, h.Get("Location"))
	}

	_, body, _ := get("GET", "/stats")
	var all struct {
		Targets []struct {
			Name  string
			Stats struct{ Attempts, Accepted int64 }
		}
	}
	if err := json.Unmarshal([]byte(body), &all); err != nil {
		t.Fatalf("/stats: %v in %.200q", err, body)
	}
	got := map[string][2]int64{}
	for _, ts := range all.Targets {
		got[ts.Name] = [2]int64{ts.Stats.Attempts, ts.Stats.Accepted}
	}
	want := map[string][2]int64{"primary": {2, 0}, "backup": {1, 1}}
	if len(got) != 3 || got["primary"] != want["primary"] || got["backup"] != want["backup"] {
		t.Errorf("/stats attempts, accepted per target = %v, want %v", got, want)
	}
	if st := s.Stats(); len(st) != 3 || st[0].Name != "primary" || st[2].Stats.Accepted != 1 {
		t.Errorf("Stats() = %+v", st)
	}
	if status, body, _ := get("GET", "/stats?series=x"); status != http.StatusBadRequest {
		t.Errorf("/stats?series=x: %d %q, want 400", status, body)
	}
}
