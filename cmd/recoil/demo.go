package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
)

// validatorError is the failing call of seed 000: a provider's validator
// rejects a field with a 400, the same answer every time.
type validatorError struct{ field string }

func (e *validatorError) Error() string {
	return "400 invalid_request_error: tools.0.input_schema: unknown field " + e.field
}

// demoPolicy is one policy the demo runs the failing call under.
type demoPolicy struct {
	name, about string
	p           *recoil.Policy
}

func runDemo(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("demo", stderr)
	attempt := fs.Duration("attempt", 210*time.Millisecond, "time one failing attempt takes (seed 000: 210ms)")
	rate := fs.Float64("rate", 140, "requests per minute to the failing endpoint (seed 000: 140)")
	pool := fs.Int("pool", 24, "workers shared by every endpoint (seed 000: 24)")
	seed := fs.Uint64("seed", 1, "seed for the jitter source")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *attempt <= 0 || *rate <= 0 || *pool <= 0 {
		return fmt.Errorf("%w: -attempt, -rate and -pool must be positive", errUsage)
	}
	rnd := rand.New(rand.NewPCG(*seed, *seed))
	retryEverything := func(error) recoil.Verdict {
		return recoil.Verdict{Class: recoil.ClassTransient, Reason: "not a 2xx"}
	}
	policies := []demoPolicy{
		{"seed 000 wrapper", "5 attempts, 1s doubling, retries anything that is not a 2xx",
			&recoil.Policy{MaxAttempts: 5, Backoff: backoff.Exponential{Base: time.Second}, Classify: retryEverything, Budget: recoil.NoBudget, Rand: rnd}},
		{"one retry for a 400", "seed 000's counter-proposal: 2 attempts, 1s wait",
			&recoil.Policy{MaxAttempts: 2, Backoff: backoff.Exponential{Base: time.Second}, Classify: retryEverything, Budget: recoil.NoBudget, Rand: rnd}},
		{"recoil default", "classifies first: a validator's 400 is permanent",
			&recoil.Policy{Rand: rnd}},
	}
	fmt.Fprintf(stdout, "recoil demo: one endpoint's call fails with a validator's 400 in %v, every time (seed 000).\n", *attempt)
	fmt.Fprintf(stdout, "Each policy below runs that call through recoil's real decision code on a virtual clock.\n\n")
	perSec := *rate / 60
	for _, dp := range policies {
		fmt.Fprintf(stdout, "%s (%s)\n", dp.name, dp.about)
		res := failingCall(dp.p, *attempt, stdout)
		workers := perSec * res.held.Seconds()
		fmt.Fprintf(stdout, "  => %d attempt(s), %v asleep, worker held %v\n", res.attempts, res.slept, res.held)
		fmt.Fprintf(stdout, "     at %.0f requests/min: %.0f attempts/min against the shared allowance; %.2f/s × %.2fs = %.2f workers of %d%s\n\n",
			*rate, *rate*float64(res.attempts), perSec, res.held.Seconds(), workers, *pool, overPool(workers, *pool))
	}
	fmt.Fprintln(stdout, "Workers in use = arrival rate × time held (Little's law); the pool is shared by every endpoint,")
	fmt.Fprintln(stdout, "and so is the allowance: separate code is not separate capacity.")
	return nil
}

type callResult struct {
	attempts    int
	slept, held time.Duration
}

// failingCall drives one logical call through p on a virtual clock, each
// attempt failing with the validator's 400 after d.
func failingCall(p *recoil.Policy, d time.Duration, w io.Writer) callResult {
	start := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	now := start
	c := p.Begin(now, time.Time{})
	for {
		if err := c.Start(now); err != nil {
			fmt.Fprintf(w, "  refused: %v\n", err)
			break
		}
		at := now.Sub(start)
		now = now.Add(d)
		// What an HTTP classifier says of a validator's 400 (package recoilhttp
		// does this from the response); the seed 000 wrapper ignores it.
		err := recoil.Mark(&validatorError{field: "strict"}, recoil.Verdict{
			Class: recoil.ClassPermanent, Reason: "validator rejected field tools.0.input_schema.strict",
		})
		wait, stop := c.Fail(now, err)
		if stop != nil {
			var re *recoil.Error
			errors.As(stop, &re)
			fmt.Fprintf(w, "  attempt %d at %6.2fs: 400 -> stop: %v (%s)\n", c.Attempts(), at.Seconds(), re.Reason, re.Verdict.Reason)
			break
		}
		fmt.Fprintf(w, "  attempt %d at %6.2fs: 400 -> wait %v\n", c.Attempts(), at.Seconds(), wait)
		now = now.Add(wait)
	}
	return callResult{attempts: c.Attempts(), slept: c.Waited(), held: now.Sub(start)}
}

func overPool(workers float64, pool int) string {
	if workers > float64(pool) {
		return " — more than the pool: the queue grows and every endpoint waits"
	}
	return ""
}
