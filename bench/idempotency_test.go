package bench

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/recoil-go/recoil/idempotency"
	"github.com/recoil-go/recoil/idempotency/pgstore"
	"github.com/recoil-go/recoil/idempotency/redisstore"
	"github.com/recoil-go/recoil/internal/testsvc"
)

// benchStores makes each store the benchmark compares, on a prefix or a
// table of its own; a service that cannot be reached is skipped.
var benchStores = []struct {
	name string
	make func(b *testing.B) idempotency.Store
}{
	{"memory", func(b *testing.B) idempotency.Store {
		s, _ := idempotency.NewMemory(idempotency.MemoryConfig{MaxEntries: 1 << 22})
		return s
	}},
	{"redis", func(b *testing.B) idempotency.Store {
		rdb := redis.NewClient(&redis.Options{Addr: testsvc.Redis(b)})
		prefix := "recoil-bench:" + strconv.FormatInt(time.Now().UnixNano(), 36) + ":"
		b.Cleanup(func() {
			ctx := context.Background()
			var cursor uint64
			for {
				keys, next, err := rdb.Scan(ctx, cursor, prefix+"*", 1000).Result()
				if err != nil {
					break
				}
				if len(keys) > 0 {
					rdb.Del(ctx, keys...)
				}
				if cursor = next; cursor == 0 {
					break
				}
			}
			rdb.Close()
		})
		s, _ := redisstore.New(rdb, redisstore.Config{Prefix: prefix})
		return s
	}},
	{"postgres", func(b *testing.B) idempotency.Store {
		ctx := context.Background()
		pool, err := pgxpool.New(ctx, testsvc.Postgres(b))
		if err != nil {
			b.Fatal(err)
		}
		table := "idem_bench_" + strconv.FormatInt(time.Now().UnixNano(), 36)
		b.Cleanup(func() {
			_, _ = pool.Exec(ctx, "DROP TABLE IF EXISTS "+table)
			pool.Close()
		})
		s, err := pgstore.New(pool, pgstore.Config{Table: table})
		if err == nil {
			err = s.Migrate(ctx)
		}
		if err != nil {
			b.Fatal(err)
		}
		return s
	}},
}

// chargeHandler is the handler measured: small, as a charge's answer is.
var chargeHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write([]byte(`{"id":"ch_1","object":"charge","status":"succeeded"}`))
})

// BenchmarkMiddleware measures what the middleware adds to a request, per
// store, beside the bare handler in the same run: "first" is a request
// under a new key (Begin, the handler, Complete), "replay" a retry under a
// finished key (Begin, which finds the response). The requests are served
// in process, without a network, so the difference is the middleware's and
// its store's round trips.
func BenchmarkMiddleware(b *testing.B) {
	body := `{"amount":100,"currency":"eur"}`
	serve := func(b *testing.B, h http.Handler, key func(i int) string) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			req := httptest.NewRequest(http.MethodPost, "/v1/charges", strings.NewReader(body))
			req.Header["Authorization"] = []string{"Bearer sk-bench-client"} // the default scope
			if k := key(i); k != "" {
				req.Header["Idempotency-Key"] = []string{k}
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != http.StatusCreated {
				b.Fatalf("status %d: %s", w.Code, w.Body)
			}
			i++
		}
	}
	b.Run("bare", func(b *testing.B) { serve(b, chargeHandler, func(int) string { return "" }) })
	for _, st := range benchStores {
		b.Run(st.name+"/first", func(b *testing.B) {
			m, _ := idempotency.NewMiddleware(chargeHandler, idempotency.Config{Store: st.make(b)})
			prefix := strconv.FormatInt(time.Now().UnixNano(), 36) + "-"
			serve(b, m, func(i int) string { return prefix + strconv.Itoa(i) })
		})
		b.Run(st.name+"/replay", func(b *testing.B) {
			m, _ := idempotency.NewMiddleware(chargeHandler, idempotency.Config{Store: st.make(b)})
			serve(b, m, func(int) string { return "the-same-key" })
		})
	}
}
