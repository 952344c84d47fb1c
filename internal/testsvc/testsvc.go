// Package testsvc finds the real services (Redis, PostgreSQL) that recoil's
// tests run against. A test asks for a service's address; when the server is
// unreachable the test is skipped with a message saying how to start it, or
// fails instead when RECOIL_REQUIRE_SERVICES=1 (as the CI script sets), so a
// green CI run can never hide a skipped service test.
//
// Addresses come from the environment, with the defaults of a local install:
//
//	RECOIL_REDIS_ADDR     host:port of Redis        (default 127.0.0.1:6379)
//	RECOIL_POSTGRES_URL   a libpq URL for PostgreSQL (default postgres://postgres@127.0.0.1:5432/test?sslmode=disable)
//
// It also holds the one switch for the long tests: RECOIL_LONG=1 (Long,
// SkipUnlessLong).
package testsvc

import (
	"net"
	"net/url"
	"os"
	"time"
)

// Default addresses, used when the environment names none.
const (
	DefaultRedisAddr   = "127.0.0.1:6379"
	DefaultPostgresURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
)

// TB is the part of testing.TB this package uses.
type TB interface {
	Helper()
	Skipf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// Required reports whether RECOIL_REQUIRE_SERVICES=1 is set: an unreachable
// service is then a failure, not a skip.
func Required() bool { return os.Getenv("RECOIL_REQUIRE_SERVICES") == "1" }

// RedisAddr returns the Redis address from RECOIL_REDIS_ADDR or the default,
// without checking that it is reachable.
func RedisAddr() string {
	if a := os.Getenv("RECOIL_REDIS_ADDR"); a != "" {
		return a
	}
	return DefaultRedisAddr
}

// PostgresURL returns the PostgreSQL URL from RECOIL_POSTGRES_URL or the
// default, without checking that it is reachable.
func PostgresURL() string {
	if u := os.Getenv("RECOIL_POSTGRES_URL"); u != "" {
		return u
	}
	return DefaultPostgresURL
}

// Redis returns the address of a reachable Redis, or skips (fails, when
// services are required) the test.
func Redis(t TB) string {
	t.Helper()
	addr := RedisAddr()
	reach(t, "Redis", addr, "RECOIL_REDIS_ADDR", "redis-server --daemonize yes")
	return addr
}

// Postgres returns the URL of a reachable PostgreSQL, or skips (fails, when
// services are required) the test.
func Postgres(t TB) string {
	t.Helper()
	raw := PostgresURL()
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		t.Fatalf("testsvc: RECOIL_POSTGRES_URL=%q is not a postgres:// URL with a host: %v", raw, err)
		return raw
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "5432")
	}
	reach(t, "PostgreSQL", host, "RECOIL_POSTGRES_URL", "pg_ctlcluster <version> main start")
	return raw
}

func reach(t TB, name, addr, env, start string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err == nil {
		c.Close()
		return
	}
	if Required() {
		t.Fatalf("%s at %s is unreachable (%v) and RECOIL_REQUIRE_SERVICES=1: start it (%s) or point %s at one", name, addr, err, start, env)
		return
	}
	t.Skipf("skipping: %s at %s is unreachable (%v); start it (%s) or set %s; RECOIL_REQUIRE_SERVICES=1 turns this skip into a failure", name, addr, err, start, env)
}
