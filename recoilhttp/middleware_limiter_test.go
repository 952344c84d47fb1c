package recoilhttp_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/limit"
	"github.com/recoil-go/recoil/recoilhttp"
)

// overloadLog is a LatencyLimiter that admits every request and writes
// down whether each ended in overload.
type overloadLog struct {
	recoil.Limiter
	got []bool
}

func (l *overloadLog) ReleaseAt(_ time.Time, _ time.Duration, overload bool) {
	l.Limiter.Release()
	l.got = append(l.got, overload)
}

// TestMiddlewareLimiter: a request holds a slot of the Limiter while the
// handler runs; one without a slot is refused 503 with Retry-After, and
// the limiter hears which answers were overloads.
func TestMiddlewareLimiter(t *testing.T) {
	one := limit.Must(limit.NewAdaptive(limit.AdaptiveConfig{Initial: 1, Min: 1, Max: 1}))
	var inner *httptest.ResponseRecorder
	mw := recoilhttp.NewMiddleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/nested" { // a second request while this one holds the slot
			inner = httptest.NewRecorder()
			recoilhttp.NewMiddleware(http.NotFoundHandler(), recoilhttp.MiddlewareConfig{Limiter: one}).ServeHTTP(inner, httptest.NewRequest("GET", "/", nil))
		}
		if r.URL.Path == "/busy" {
			w.WriteHeader(529)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}), recoilhttp.MiddlewareConfig{Limiter: one})
	rec := httptest.NewRecorder()
	mw.ServeHTTP(rec, httptest.NewRequest("GET", "/nested", nil))
	if rec.Code != 200 || inner == nil || inner.Code != http.StatusServiceUnavailable || inner.Header().Get("Retry-After") != "1" {
		t.Fatalf("outer %d, inner %v; want 200 outside and 503 with Retry-After: 1 inside", rec.Code, inner)
	}
	if one.InUse() != 0 {
		t.Errorf("%d slots held after the request", one.InUse())
	}

	log := &overloadLog{Limiter: limit.Must(limit.New(limit.Config{Capacity: 4}))}
	mw = recoilhttp.NewMiddleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/busy" {
			w.WriteHeader(529)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}), recoilhttp.MiddlewareConfig{Limiter: log})
	for _, path := range []string{"/ok", "/busy"} {
		mw.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", path, nil))
	}
	if len(log.got) != 2 || log.got[0] || !log.got[1] {
		t.Errorf("overload reports %v, want [false true]", log.got)
	}
}
