package sdktest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The npm packages the Node test installs, pinned: the versions whose
// retry rules docs/proxy.md reports.
var npmPackages = []string{"openai@6.49.0", "@anthropic-ai/sdk@1.16.0"}

// nodeDir installs the SDKs into a temporary directory and returns it,
// with the test script beside them. It skips the test, with the reason,
// when the long tests are off (RECOIL_LONG=1 runs them), and when node or
// npm is missing — a failure instead under RECOIL_REQUIRE_SERVICES=1.
func nodeDir(t *testing.T) string {
	t.Helper()
	skip := func(format string, args ...any) {
		t.Helper()
		if requireServices() {
			t.Fatalf(format, args...)
		}
		t.Skipf(format, args...)
	}
	if os.Getenv("RECOIL_LONG") != "1" {
		// Not a missing service: a long test, which CI runs on its own.
		t.Skip("the Node SDK storms install npm packages: set RECOIL_LONG=1 to run them")
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			skip("%s is not installed: the Node SDK storms need Node 20 and npm", tool)
		}
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	args := append([]string{"install", "--no-audit", "--no-fund", "--no-save", "--prefix", dir}, npmPackages...)
	if out, err := exec.CommandContext(ctx, "npm", args...).CombinedOutput(); err != nil {
		skip("npm install %v: %v\n%s", npmPackages, err, out)
	}
	src, err := os.ReadFile(filepath.Join("testdata", "storm.cjs"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "storm.cjs"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestNodeSDKs counts what one call costs the provider during a 529 storm
// with the npm openai and @anthropic-ai/sdk packages and their default
// retries (2): straight to the provider, through a gateway that retries
// too, and through recoil proxy.
func TestNodeSDKs(t *testing.T) {
	dir := nodeDir(t)
	for _, sdk := range []string{"openai", "anthropic"} {
		for _, tc := range []struct {
			name string
			via  func(t *testing.T, up string) (string, *recorder)
			want int64
			sdk  int // the SDK's attempts at the proxy
		}{
			{"direct", func(t *testing.T, up string) (string, *recorder) { return up, nil }, 3, 0},
			{"retrying gateway", func(t *testing.T, up string) (string, *recorder) { return retryingGateway(t, up).URL, nil }, 3 * gatewayAttempts, 0},
			{"recoil proxy", startProxy, 3, 1},
			{"recoil proxy, x-should-retry lost on the way back", startProxyStripped, 3, 3},
		} {
			t.Run(sdk+"/"+tc.name, func(t *testing.T) {
				up := newOverloaded(t)
				base, rec := tc.via(t, up.URL)
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				out, err := exec.CommandContext(ctx, "node", filepath.Join(dir, "storm.cjs"), sdk, base).Output()
				if err != nil {
					t.Fatalf("node: %v", err)
				}
				var res struct {
					Status  int
					Message string
				}
				if err := json.Unmarshal(out, &res); err != nil {
					t.Fatalf("node printed %q: %v", out, err)
				}
				if res.Status != 529 {
					t.Errorf("the SDK ended with %d (%s), want the provider's 529", res.Status, res.Message)
				}
				if got := up.hits.Load(); got != tc.want {
					t.Errorf("attempts at the provider = %d, want %d", got, tc.want)
				}
				if rec != nil {
					if rec.n != tc.sdk {
						t.Errorf("SDK attempts at the proxy = %d, want %d", rec.n, tc.sdk)
					}
					t.Logf("%s %s: provider attempts %d, SDK attempts %d, last answer: %s", sdk, tc.name, up.hits.Load(), rec.n, headerLine(rec.last))
				} else {
					t.Logf("%s %s: provider attempts %d", sdk, tc.name, up.hits.Load())
				}
			})
		}
	}
}

// startProxyStripped is recoil proxy behind an intermediary that drops
// x-should-retry, as an old SDK that ignores it would: the SDK retries, and
// the proxy charges each retry to the request's spent budget, answering it
// itself.
func startProxyStripped(t *testing.T, upstream string) (string, *recorder) {
	base, rec := startProxy(t, upstream)
	strip := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, base+r.URL.Path, r.Body)
		req.Header = r.Header.Clone()
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			if !strings.EqualFold(k, "X-Should-Retry") {
				w.Header()[k] = v
			}
		}
		w.WriteHeader(resp.StatusCode)
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			_, _ = w.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(strip.Close)
	return strip.URL, rec
}
