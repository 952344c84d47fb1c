package redisstore_test

import (
	"context"
	"fmt"
	"net/http"

	"github.com/redis/go-redis/v9"

	"github.com/recoil-go/recoil/idempotency"
	"github.com/recoil-go/recoil/idempotency/redisstore"
)

// The middleware with keys kept in Redis. (No Output: it needs a Redis;
// TestConformance runs the same calls against a real one.)
func ExampleNew() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	store, err := redisstore.New(rdb, redisstore.Config{Prefix: "payments:idem:"})
	if err != nil {
		panic(err)
	}
	charges := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusCreated) })
	h, err := idempotency.NewMiddleware(charges, idempotency.Config{Store: store, Required: true})
	if err != nil {
		panic(err)
	}
	_ = http.ListenAndServe("127.0.0.1:8080", h)

	// Do, for a step that is not an HTTP request, on the same store.
	id, err := idempotency.Do(context.Background(), store, "turn-7/refund", func(ctx context.Context) (string, error) {
		return "re_1", nil
	})
	fmt.Println(id, err)
}
