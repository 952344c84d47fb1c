package proxy

import (
	"crypto/sha256"
	"sync"
	"time"

	"github.com/recoil-go/recoil/hop"
	"github.com/recoil-go/recoil/recoilhttp"
)

// maxLedger bounds how many failed requests the proxy remembers at once;
// past it the oldest are forgotten first (their retries then go once, with
// no retries of the proxy's own).
const maxLedger = 100_000

// ledger remembers the requests the proxy answered with a failure, for a
// while, so that an SDK's retry of one is charged to the same request
// budget — its hop account — instead of arriving as new demand with a
// budget of its own. It keeps no request bodies: a request is known by a
// digest of its client's idempotency scope, method, path and body (what
// the SDK sends again, unchanged, on its retry), or by its Idempotency-Key.
type ledger struct {
	ttl   time.Duration
	mu    sync.Mutex
	byKey map[[32]byte]*entry
	order [][32]byte // oldest first; a ring would do, a slice is plainer
}

type entry struct {
	acct   *hop.Account
	status int
	body   []byte // the failure's error body, answered again to a refused retry
	at     time.Time
}

func newLedger(ttl time.Duration) *ledger {
	return &ledger{ttl: ttl, byKey: map[[32]byte]*entry{}}
}

// key is what identifies the request c repeats.
func (c *call) key() [32]byte {
	d := sha256.New()
	if c.cl != nil {
		d.Write([]byte(c.cl.scope))
	}
	d.Write([]byte{0})
	if k := c.idemKey; k != "" {
		d.Write([]byte("key\x00" + k))
	} else {
		d.Write([]byte(c.method + "\x00" + c.path + "\x00"))
		d.Write(c.body)
	}
	var k [32]byte
	d.Sum(k[:0])
	return k
}

// remember records that c ended in a failure answer with status and body.
func (l *ledger) remember(c *call, status int, body []byte) {
	if c.acct == nil || c.rt == nil {
		return
	}
	if len(body) > recoilhttp.MaxErrorBody {
		body = body[:recoilhttp.MaxErrorBody]
	}
	k := c.key()
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expire(now)
	if _, ok := l.byKey[k]; !ok {
		l.order = append(l.order, k)
	}
	l.byKey[k] = &entry{acct: c.acct, status: status, body: append([]byte(nil), body...), at: now}
	for len(l.byKey) > maxLedger && len(l.order) > 0 {
		delete(l.byKey, l.order[0])
		l.order = l.order[1:]
	}
}

// find returns the entry of the request c repeats, or nil.
func (l *ledger) find(c *call) *entry {
	k := c.key()
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expire(now)
	return l.byKey[k]
}

// expire forgets the entries older than the ledger's ttl.
func (l *ledger) expire(now time.Time) {
	n := 0
	for n < len(l.order) {
		e, ok := l.byKey[l.order[n]]
		if ok && now.Sub(e.at) < l.ttl {
			break
		}
		if ok {
			delete(l.byKey, l.order[n])
		}
		n++
	}
	if n > 0 {
		l.order = l.order[n:]
	}
}

// size returns how many requests are remembered.
func (l *ledger) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.byKey)
}
