// want package:"offline"

// Package pacedpolls holds, written anew, configuration polls over gRPC
// that wait after a failure as after an answer, beside one whose failures
// keep a schedule of their own.
package pacedpolls

import (
	"context"
	"time"

	"example.com/pb"
)

type poller struct {
	client   pb.GreeterClient
	interval time.Duration
	apply    func(*pb.HelloReply)
	closed   bool
}

func newPoller(c pb.GreeterClient) *poller {
	return &poller{client: c, interval: 20 * time.Second}
}

// poll waits its interval after a failed fetch as after an answer: the
// failures are paced like the successes, a poll, not a retry.
//
// case: clean
func (p *poller) poll() {
	for !p.closed {
		reply, err := p.client.SayHello(context.Background(), &pb.HelloRequest{Name: "config"})
		if err != nil {
			time.Sleep(p.interval)
			continue
		}
		p.apply(reply)
		time.Sleep(p.interval)
	}
}

// pollRetrying retries a failed fetch a constant second later, on a
// schedule of its own, shared by every client.
//
// case: flag nojitter
func (p *poller) pollRetrying() {
	for !p.closed {
		reply, err := p.client.SayHello(context.Background(), &pb.HelloRequest{Name: "config"})
		if err != nil {
			time.Sleep(time.Second) // want `nojitter: this wait in a retry loop`
			continue
		}
		p.apply(reply)
		time.Sleep(p.interval)
	}
}

// pollMoved waits the same backoff after a failed call as after an
// answer that says to look elsewhere: both are retries, neither the
// poll's own pace (it has none but the backoff).
//
// case: flag nojitter
func (p *poller) pollMoved() {
	for !p.closed {
		reply, err := p.client.SayHello(context.Background(), &pb.HelloRequest{Name: "config"})
		if err != nil {
			time.Sleep(p.interval) // want `nojitter: this wait in a retry loop`
			continue
		}
		if reply.Message == "moved" {
			time.Sleep(p.interval)
			continue
		}
		p.apply(reply)
	}
}

var _ = newPoller
