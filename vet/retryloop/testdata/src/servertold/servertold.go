// want package:"offline"

// Package servertold holds, written anew, loops whose wait the server
// names in its error's text (a chat API's flood wait), beside one whose
// wait a setting named "retryAfter" gives, and download workers that make
// a context per attempt.
package servertold

import (
	"context"
	"errors"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"example.com/pb"
)

var floodWait = regexp.MustCompile(`FLOOD_WAIT_(\d+)`)

// floodSeconds reads the seconds the server asked for out of its error.
func floodSeconds(err error) int {
	if m := floodWait.FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}

// waitFlood sleeps what the server asked for, if it asked.
func waitFlood(err error) bool {
	if !strings.Contains(err.Error(), "FLOOD_WAIT_") {
		return false
	}
	if s := floodSeconds(err); s > 0 {
		time.Sleep(time.Duration(s) * time.Second)
		return true
	}
	return false
}

// sendParts re-sends a part the server refused with a flood wait after
// the seconds it named: the server's wait, not a schedule of the client's.
//
// case: clean
func sendParts(c pb.GreeterClient, parts []string) error {
	for _, part := range parts {
		for try := 0; try < 3; try++ {
			_, err := c.SayHello(context.Background(), &pb.HelloRequest{Name: part})
			if err == nil {
				break
			}
			if waitFlood(err) {
				continue
			}
			return err
		}
	}
	return nil
}

// pauseSetting is the pause an operator writes in the environment.
func pauseSetting() int {
	n, _ := strconv.Atoi(os.Getenv("FLOOD_PAUSE"))
	return n
}

// sendPartsPaused waits a pause of its own setting after a flood answer:
// the same for every client.
//
// case: flag nojitter
func sendPartsPaused(c pb.GreeterClient, parts []string) error {
	for _, part := range parts {
		for try := 0; try < 3; try++ {
			_, err := c.SayHello(context.Background(), &pb.HelloRequest{Name: part})
			if err == nil {
				break
			}
			if strings.Contains(err.Error(), "FLOOD_WAIT_") {
				time.Sleep(time.Duration(pauseSetting()) * time.Second) // want `nojitter: this wait in a retry loop`
				continue
			}
			return err
		}
	}
	return nil
}

type poller struct {
	client     pb.GreeterClient
	retryAfter time.Duration
	handle     func(*pb.HelloReply)
}

// Option sets a poller's setting.
type Option func(*poller)

// WithRetryAfter sets how long the poller waits after a failed fetch.
func WithRetryAfter(d time.Duration) Option { return func(p *poller) { p.retryAfter = d } }

func newPoller(c pb.GreeterClient, opts ...Option) *poller {
	p := &poller{client: c, retryAfter: 5 * time.Second}
	for _, o := range opts {
		o(p)
	}
	return p
}

// run long-polls for updates; after any failure it waits its
// retryAfter, a setting five seconds by default despite its name: the
// client's own constant wait. (A poll, so its retrying every error is
// not reported.)
//
// case: flag nojitter
func (p *poller) run(ctx context.Context) {
	for ctx.Err() == nil {
		reply, err := p.client.SayHello(ctx, &pb.HelloRequest{Name: "updates"})
		if err != nil {
			select {
			case <-time.After(p.retryAfter): // want `nojitter: this wait in a retry loop has a constant or purely exponential duration by default`
			case <-ctx.Done():
				return
			}
			continue
		}
		p.handle(reply)
	}
}

// download fetches each part in a worker that gives every attempt a
// deadline of its own, from a context it makes and cancels itself: no one
// else can cancel it, so the pause between attempts has nothing to hear.
//
// case: flag nojitter
func download(c pb.GreeterClient, parts []string) {
	var wg sync.WaitGroup
	for _, part := range parts {
		wg.Add(1)
		go func(part string) {
			defer wg.Done()
			for try := 0; try < 3; try++ {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				if _, err := c.SayHello(ctx, &pb.HelloRequest{Name: part}); err != nil {
					if errors.Is(err, context.DeadlineExceeded) {
						time.Sleep(10 * time.Millisecond) // want `nojitter: this wait in a retry loop`
						continue
					}
					return
				}
				return
			}
		}(part)
	}
	wg.Wait()
}

// downloadFor does the same under its caller's context: the pause is deaf
// to that context.
//
// case: flag nojitter deafwait
func downloadFor(ctx context.Context, c pb.GreeterClient, parts []string) {
	var wg sync.WaitGroup
	for _, part := range parts {
		wg.Add(1)
		go func(part string) {
			defer wg.Done()
			for try := 0; try < 3; try++ {
				actx, cancel := context.WithTimeout(ctx, 5*time.Second)
				defer cancel()
				if _, err := c.SayHello(actx, &pb.HelloRequest{Name: part}); err != nil {
					if errors.Is(err, context.DeadlineExceeded) {
						time.Sleep(10 * time.Millisecond) // want `nojitter: this wait in a retry loop` `deafwait: time.Sleep ignores`
						continue
					}
					return
				}
				return
			}
		}(part)
	}
	wg.Wait()
}

var _ = newPoller
