// Package errgroup stands in for golang.org/x/sync/errgroup: the API
// only, written anew for the tests.
package errgroup

import "context"

// A Group is a collection of goroutines working on one task.
type Group struct {
	cancel func()
	errc   chan error
}

// WithContext returns a Group and a context cancelled when a goroutine of
// the group fails, or when Wait returns.
func WithContext(ctx context.Context) (*Group, context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	return &Group{cancel: cancel, errc: make(chan error, 1)}, ctx
}

// Go runs f in a goroutine of the group.
func (g *Group) Go(f func() error) {
	go func() {
		if err := f(); err != nil {
			select {
			case g.errc <- err:
				g.cancel()
			default:
			}
		}
	}()
}

// Wait returns the first error of the group's goroutines.
func (g *Group) Wait() error {
	select {
	case err := <-g.errc:
		return err
	default:
		return nil
	}
}
