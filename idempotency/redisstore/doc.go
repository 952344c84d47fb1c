// Package redisstore is an idempotency.Store in Redis (go-redis v9), for
// keys shared by every process behind a load balancer:
//
//	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
//	store, err := redisstore.New(rdb, redisstore.Config{Prefix: "payments:idem:"})
//	h, err := idempotency.NewMiddleware(charges, idempotency.Config{Store: store})
//
// Each key is a hash whose expiry is the holder's lease while the request
// runs and the retention once it is done; Lua scripts make every state
// change atomic, and a script run again after a lost reply changes
// nothing. Redis expires keys itself, so there is no reaper to run. For
// keys to survive a Redis restart, run it with appendonly yes and
// appendfsync always.
package redisstore
