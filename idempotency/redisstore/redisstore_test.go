package redisstore_test

import (
	"context"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/recoil-go/recoil/idempotency"
	"github.com/recoil-go/recoil/idempotency/redisstore"
	"github.com/recoil-go/recoil/idempotency/storetest"
	"github.com/recoil-go/recoil/internal/leakcheck"
	"github.com/recoil-go/recoil/internal/testsvc"
)

func TestMain(m *testing.M) {
	redis.SetLogger(quiet{}) // the restart test makes the pool complain on purpose
	leakcheck.VerifyTestMain(m)
}

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// newStore returns a store on the shared Redis under a prefix of the
// test's own, and deletes its keys when the test ends.
func newStore(t *testing.T, cfg redisstore.Config) (*redisstore.Store, *redis.Client) {
	rdb := redis.NewClient(&redis.Options{Addr: testsvc.Redis(t)})
	cfg.Prefix = "recoil-test:" + t.Name() + ":" + strconv.FormatInt(time.Now().UnixNano(), 36) + ":"
	t.Cleanup(func() {
		ctx := context.Background()
		keys, _ := rdb.Keys(ctx, cfg.Prefix+"*").Result()
		if len(keys) > 0 {
			rdb.Del(ctx, keys...)
		}
		rdb.Close()
	})
	s, err := redisstore.New(rdb, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, rdb
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) idempotency.Store {
		s, _ := newStore(t, redisstore.Config{})
		return s
	})
}

// TestRetention: Redis expires a finished key after the retention; it is
// the store's reaper.
func TestRetention(t *testing.T) {
	s, _ := newStore(t, redisstore.Config{Retention: 300 * time.Millisecond})
	ctx := context.Background()
	b, err := s.Begin(ctx, "", "k", "fp", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Complete(ctx, "", "k", b.Token, &idempotency.Response{Status: 200}); err != nil {
		t.Fatal(err)
	}
	if b, _ := s.Begin(ctx, "", "k", "fp", time.Minute); b.State != idempotency.StateDone {
		t.Fatalf("within the retention: %v, want done", b.State)
	}
	deadline := time.Now().Add(5 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for range tick.C {
		b, err := s.Begin(ctx, "", "k", "fp", time.Minute)
		if err == nil && b.State == idempotency.StateNew {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 5 s the key is still %v, %v; want it expired (new)", b.State, err)
		}
	}
}

// TestKeyStoredByAnEarlierVersion: a finished key written before headers
// were kept exactly (its header JSON, no trailer field) still replays.
func TestKeyStoredByAnEarlierVersion(t *testing.T) {
	s, rdb := newStore(t, redisstore.Config{})
	ctx := context.Background()
	b, err := s.Begin(ctx, "client-1", "k", "fp", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := rdb.Keys(ctx, "recoil-test:"+t.Name()+":*").Result()
	if err != nil || len(keys) != 1 {
		t.Fatalf("keys = %v, %v; want the one Begin wrote", keys, err)
	}
	// What the earlier Complete wrote: status, JSON header, body.
	if err := rdb.HSet(ctx, keys[0], "token", b.Token, "status", "201", "header", `{"X-Two":["a","b"]}`, "body", "old").Err(); err != nil {
		t.Fatal(err)
	}
	got, err := s.Begin(ctx, "client-1", "k", "fp", time.Minute)
	if err != nil || got.State != idempotency.StateDone || got.Response.Status != 201 || string(got.Response.Body) != "old" ||
		strings.Join(got.Response.Header.Values("X-Two"), ",") != "a,b" || got.Response.Trailer != nil {
		t.Fatalf("Begin on the earlier version's key = %+v, %v; want its 201 replayed", got.Response, err)
	}
}

func TestNewRejectsNegativeRetention(t *testing.T) {
	if _, err := redisstore.New(nil, redisstore.Config{Retention: -1}); err == nil {
		t.Fatal("New with a negative retention: no error")
	}
}

// server is a redis-server the test owns, persisting every write to its
// append-only file, so that it can be killed and started again on the same
// port with the same data.
type server struct {
	t    *testing.T
	port int
	dir  string
	cmd  *exec.Cmd
}

func startServer(t *testing.T) *server {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if testsvc.Required() {
			t.Fatalf("redis-server not found (%v) and RECOIL_REQUIRE_SERVICES=1", err)
		}
		t.Skipf("skipping: redis-server not found on PATH (%v): this test starts and restarts a server of its own", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	s := &server{t: t, port: port, dir: t.TempDir()}
	s.start(bin)
	t.Cleanup(s.kill)
	return s
}

func (s *server) addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

func (s *server) start(bin string) {
	s.cmd = exec.Command(bin, "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--dir", s.dir,
		"--appendonly", "yes", "--appendfsync", "always", "--save", "", "--daemonize", "no", "--logfile", "")
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: s.addr(), MaxRetries: -1})
	defer rdb.Close()
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for range tick.C {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := rdb.Ping(ctx).Err()
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("redis-server on %s did not answer within 10 s: %v", s.addr(), err)
		}
	}
}

// kill kills the server (SIGKILL: no shutdown, no final save).
func (s *server) kill() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}

// TestRestart kills Redis mid-run and starts it again: no side effect
// runs twice, a request that arrives while Redis is down gets a 503
// problem+json, and the requests in flight finish once it is back (their
// responses are stored after it returns) or end with a problem+json error.
func TestRestart(t *testing.T) {
	srv := startServer(t)
	bin, _ := exec.LookPath("redis-server")
	rdb := redis.NewClient(&redis.Options{Addr: srv.addr(), DialTimeout: time.Second})
	t.Cleanup(func() { rdb.Close() })
	s, err := redisstore.New(rdb, redisstore.Config{Prefix: "restart:"})
	if err != nil {
		t.Fatal(err)
	}
	storetest.Interrupted(t, s, func(t *testing.T, url string) {
		srv.kill()
		storetest.ExpectUnavailable(t, url)
		srv.start(bin)
	})
}
