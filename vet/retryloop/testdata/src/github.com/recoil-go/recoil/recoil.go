// Package recoil is a stub of recoil's core package.
package recoil

import "context"

type Policy struct{ MaxAttempts int }

func Do(ctx context.Context, p *Policy, op func(context.Context) error) error { return op(ctx) }
