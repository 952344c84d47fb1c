// Package failovers holds, written anew, discovery loops that try each
// seed in turn and, when all fail, wait and try the list again.
package failovers

import (
	"errors"
	"math/rand/v2"
	"net"
	"sync"
	"time"
)

// Config says how often and how long discovery tries.
type Config struct {
	Seeds       []string
	MaxAttempts int
	IntervalMS  int
}

// Every seed tried, then a constant pause before the next pass.
//
// case: flag nojitter
func discover(conf Config) (net.Conn, error) {
	var last error
	for attempt := 0; attempt < conf.MaxAttempts; attempt++ {
		for _, seed := range conf.Seeds {
			conn, err := net.Dial("tcp", seed)
			if err != nil {
				last = err
				continue
			}
			return conn, nil
		}
		time.Sleep(time.Duration(conf.IntervalMS) * time.Millisecond) // want `nojitter: this wait in a retry loop`
	}
	return nil, errors.Join(errors.New("no seed answered"), last)
}

// The same passes, each pause drawn at random.
//
// case: clean
func discoverSpread(conf Config) (net.Conn, error) {
	var last error
	for attempt := 0; attempt < conf.MaxAttempts; attempt++ {
		for _, seed := range conf.Seeds {
			conn, err := net.Dial("tcp", seed)
			if err != nil {
				last = err
				continue
			}
			return conn, nil
		}
		time.Sleep(time.Duration(rand.Int64N(int64(time.Second) << attempt)))
	}
	return nil, errors.Join(errors.New("no seed answered"), last)
}

// One pass over the seeds, no waiting: failover, not a retry.
//
// case: clean
func firstAnswering(seeds []string) (net.Conn, error) {
	var last error
	for _, seed := range seeds {
		conn, err := net.Dial("tcp", seed)
		if err != nil {
			last = err
			continue
		}
		return conn, nil
	}
	return nil, last
}

const giveBackPause = 100 * time.Millisecond

type producer struct {
	send   func(string) error
	failed chan error
}

// giveBack hands a failed message's error back after a pause.
func (p *producer) giveBack(err error) {
	time.Sleep(giveBackPause)
	p.failed <- err
}

// Each message taken from the channel is sent once; a failed one is handed
// back (after giveBack's pause) and the next one taken: nothing is tried
// again.
//
// case: clean
func (p *producer) dispatch(in <-chan string) {
	for m := range in {
		if err := p.send(m); err != nil {
			p.giveBack(err)
			continue
		}
	}
}

// An event loop taking messages from a channel: a message that fails its
// check is handed back (after giveBack's pause) and the next one taken.
//
// case: clean
func (p *producer) run(in <-chan string, stop <-chan struct{}) {
	for {
		select {
		case m, ok := <-in:
			if !ok {
				return
			}
			if err := p.send(m); err != nil {
				p.giveBack(err)
				continue
			}
		case <-stop:
			return
		}
	}
}

// A flush that hands the batch back and gives up when the leader cannot
// be found: the pause is on the way out, not before another round.
//
// case: clean
func (p *producer) flush(batches [][]string, leader func() error) {
	for i := len(batches) - 1; ; i-- {
		if err := leader(); err != nil {
			p.giveBack(err)
			return
		}
		if i == 0 {
			return
		}
	}
}

type dnsCache struct {
	mu    sync.RWMutex
	names map[string]string
}

func (c *dnsCache) lookup(id string) (string, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if name, ok := c.names[id]; ok {
		return name, nil
	}
	return "", errors.New("not cached")
}

// Another caller's request for the same id is in flight: re-read the
// cache it fills every constant interval. A poll of this process's
// memory, not a retry of a dependency.
//
// case: clean
func (c *dnsCache) awaitName(id string) (string, error) {
	for i := 0; i < 20; i++ {
		time.Sleep(250 * time.Millisecond)
		if name, err := c.lookup(id); err == nil {
			return name, nil
		}
	}
	return "", errors.New("never filled")
}

type conn struct {
	mu  sync.Mutex
	out chan string
	in  chan string
}

// request hands m to the connection's writer goroutine and waits for the
// reply its reader hands back: a remote request, though it calls nothing
// but sync and channels.
func (c *conn) request(m string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.out <- m
	if r := <-c.in; r != "" {
		return r, nil
	}
	return "", errors.New("no responders")
}

// A publish retried on a constant pause: the request reaches the server.
//
// case: flag nojitter
func (c *conn) publish(m string) (string, error) {
	var err error
	for r := 0; r < 3; r++ {
		var resp string
		if resp, err = c.request(m); err == nil {
			return resp, nil
		}
		time.Sleep(250 * time.Millisecond) // want `nojitter: this wait in a retry loop`
	}
	return "", err
}
