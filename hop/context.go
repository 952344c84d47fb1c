package hop

import "context"

type accountKey struct{}

type attemptKey struct{}

// WithAccount returns a copy of ctx that carries a. The server side of a
// transport puts the incoming request's Account in the handler's context;
// the client side finds it there with [AccountFrom] and spends from it.
func WithAccount(ctx context.Context, a *Account) context.Context {
	return context.WithValue(ctx, accountKey{}, a)
}

// AccountFrom returns the Account ctx carries, or nil if it carries none. A
// caller with none is an edge: it makes its own with [NewAccount] from its
// own budget.
func AccountFrom(ctx context.Context) *Account {
	a, _ := ctx.Value(accountKey{}).(*Account)
	return a
}

// WithAttempt returns a copy of ctx that records that the code below runs
// as attempt n of a retrying layer in the same process. A transport that
// finds it (with [AttemptFrom]) knows an outer layer already retries, so it
// need not retry too, and can send the outer attempt number as
// HeaderAttempt.
func WithAttempt(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, attemptKey{}, n)
}

// AttemptFrom returns the attempt number recorded by [WithAttempt], or 0 if
// ctx carries none.
func AttemptFrom(ctx context.Context) int {
	n, _ := ctx.Value(attemptKey{}).(int)
	return n
}
