package recoilhttp_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/recoil-go/recoil/recoilhttp"
)

// baseRT is a variable so the compiler cannot see through it, as it cannot
// through the Transport's Base.
var baseRT http.RoundTripper = staticRT{}

type staticRT struct{}

func (staticRT) RoundTrip(*http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody}, nil
}

// bodyRT answers with a body, which the Transport wraps in its idle limit.
var bodyRT http.RoundTripper = bodyStaticRT{}

type bodyStaticRT struct{}

func (bodyStaticRT) RoundTrip(*http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("{}"))}, nil
}

// What the Transport itself allocates per request, over what its base
// allocates: an untouched request costs nothing (the retry loop's driver
// is pooled); a response with a body under the idle limit costs its share
// of a batch of bodies (one allocation per 16 responses, which whole
// numbers round to 0; TestWatchAllocs counts it exactly), and none
// with NoIdleTimeout; the hop headers add a shallow request copy (1), a
// header map of its own (2), the values (2: one backing array, one string)
// and the per-request budget account (1), which the driver hands to the
// loop.
func TestTransportAllocs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://example.com/v1/models", nil)
	req.Header.Set("Authorization", "Bearer x")
	buf := make([]byte, 64)
	base := testing.AllocsPerRun(200, func() { baseRT.RoundTrip(req) })
	withBody := testing.AllocsPerRun(200, func() { bodyRT.RoundTrip(req) })
	for _, tt := range []struct {
		name string
		tr   *recoilhttp.Transport
		base float64
		max  float64
	}{
		{"untouched", &recoilhttp.Transport{Base: staticRT{}}, base, 0},
		{"a body, under the default idle limit", &recoilhttp.Transport{Base: bodyStaticRT{}}, withBody, 0},
		{"a body, NoIdleTimeout", &recoilhttp.Transport{Base: bodyStaticRT{}, IdleTimeout: recoilhttp.NoIdleTimeout}, withBody, 0},
		{"hop headers", &recoilhttp.Transport{Base: staticRT{}, Hop: true}, base, 6},
	} {
		got := testing.AllocsPerRun(200, func() {
			resp, err := tt.tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			drain(resp.Body, buf)
		})
		extra := got - tt.base
		t.Logf("%s: %.0f allocations over the base's", tt.name, extra)
		if extra > tt.max {
			t.Errorf("%s: %.0f allocations over the base's, want at most %.0f", tt.name, extra, tt.max)
		}
	}
}

// drain reads body to its end into buf, not through io.Discard, whose
// pooled buffer -race allocates again at random.
func drain(body io.Reader, buf []byte) {
	for {
		if _, err := body.Read(buf); err != nil {
			return
		}
	}
}
