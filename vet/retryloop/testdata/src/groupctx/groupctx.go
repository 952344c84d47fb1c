// Package groupctx holds, written anew, a service's start-up: a context
// for its errgroup made from context.Background(), and a wait for its
// broker before the group starts anything. Until the first g.Go nothing
// can cancel that context, so a sleep that does not hear it misses
// nothing; once a goroutine of the group runs, its failure does.
package groupctx

import (
	"context"
	"math/rand"
	"net"
	"time"

	"golang.org/x/sync/errgroup"
)

func dialBroker(addr string) error {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	return conn.Close()
}

func serve(ctx context.Context) error {
	<-ctx.Done()
	return nil
}

// start waits for the broker, then starts serving.
//
// case: clean
func start(addr string) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g, ctx := errgroup.WithContext(ctx)
	for attempt := 0; attempt < 5; attempt++ {
		if err := dialBroker(addr); err == nil {
			break
		}
		time.Sleep(time.Duration(rand.Int63n(int64(time.Second))))
	}
	g.Go(func() error { return serve(ctx) })
	return g.Wait()
}

// restart is start's twin: it waits for the broker once the group's
// server runs, whose failure cancels ctx.
//
// case: flag deafwait
func restart(addr string) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return serve(ctx) })
	for attempt := 0; attempt < 5; attempt++ {
		if err := dialBroker(addr); err == nil {
			break
		}
		time.Sleep(time.Duration(rand.Int63n(int64(time.Second)))) // want `deafwait: time.Sleep`
	}
	return g.Wait()
}
