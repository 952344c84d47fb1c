package proxy

import (
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"
)

// redisAddr returns the test Redis's address, or skips (fails under
// RECOIL_REQUIRE_SERVICES=1) when none answers.
func redisAddr(t *testing.T) string {
	addr := os.Getenv("RECOIL_REDIS_ADDR")
	if addr == "" {
		addr = "127.0.0.1:6379"
	}
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		if os.Getenv("RECOIL_REQUIRE_SERVICES") == "1" {
			t.Fatalf("no Redis at %s: %v", addr, err)
		}
		t.Skipf("no Redis at %s (set RECOIL_REDIS_ADDR): %v", addr, err)
	}
	c.Close()
	return addr
}

// cutter is a TCP forwarder to Redis that a test can cut and restore, to
// lose Redis without stopping a server others share.
type cutter struct {
	target, addr string
	mu           sync.Mutex
	ln           net.Listener
	conns        []net.Conn
}

func newCutter(t *testing.T, target string) *cutter {
	c := &cutter{target: target}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c.addr = ln.Addr().String()
	c.serve(ln)
	t.Cleanup(c.cut)
	return c
}

func (c *cutter) serve(ln net.Listener) {
	c.mu.Lock()
	c.ln = ln
	c.mu.Unlock()
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", c.target)
			if err != nil {
				in.Close()
				continue
			}
			c.mu.Lock()
			c.conns = append(c.conns, in, out)
			c.mu.Unlock()
			go func() { _, _ = io.Copy(out, in); out.Close() }()
			go func() { _, _ = io.Copy(in, out); in.Close() }()
		}
	}()
}

func (c *cutter) cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ln != nil {
		c.ln.Close()
		c.ln = nil
	}
	for _, conn := range c.conns {
		conn.Close()
	}
	c.conns = nil
}

func (c *cutter) restore(t *testing.T) {
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		t.Fatal(err)
	}
	c.serve(ln)
}

// TestRedisLostAndBack loses the fleet's Redis mid-run: the proxy keeps
// answering from its local share, says so (State, and so the page and
// recoil_proxy_fleet_shared), and rejoins when Redis answers again.
func TestRedisLostAndBack(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the fleet's reconnect probe (about a second)")
	}
	c := newCutter(t, redisAddr(t))
	up := newProvider(t, ok(`{"id":"x"}`))
	cfg := oneRoute(OpenAI, up.URL, fast())
	cfg.Routes[0].Allowance = &Allowance{Limit: 100_000, Window: time.Second}
	cfg.Fleet = &Fleet{Redis: c.addr, Replicas: 2, Timeout: 200 * time.Millisecond,
		Prefix: "recoil:proxytest:" + strconv.FormatInt(time.Now().UnixNano(), 36) + ":"}
	p, url := start(t, cfg)
	call := func() {
		t.Helper()
		if resp, body := post(t, url+"/v1/chat/completions", nil, `{}`); resp.StatusCode != 200 {
			t.Fatalf("call answered %d %s", resp.StatusCode, body)
		}
	}
	call()
	if !p.State().Shared {
		t.Fatal("not shared with Redis up")
	}
	c.cut()
	deadline := time.Now().Add(guard)
	for p.State().Shared {
		if time.Now().After(deadline) {
			t.Fatal("still shared long after Redis was lost")
		}
		call() // answered from the lease, then the local share
	}
	st := p.State()
	if st.Routes[0].AllowanceShared {
		t.Errorf("the route's allowance says shared while Redis is lost: %+v", st.Routes[0])
	}
	c.restore(t)
	for !p.State().Shared {
		if time.Now().After(deadline) {
			t.Fatal("did not rejoin Redis")
		}
		call()
	}
}
