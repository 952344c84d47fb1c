package recoil_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
)

// failDriver fails every attempt with err, its own verdict being own, and
// gives the call budget as its request budget.
type failDriver struct {
	err      error
	own      recoil.Verdict
	budget   recoil.Budget
	attempts int
}

func (d *failDriver) Attempt(context.Context, int, time.Time) (int, error) {
	d.attempts++
	return d.attempts, d.err
}

func (d *failDriver) Verdict(p *recoil.Policy, _ int, err error) (recoil.Verdict, error) {
	return p.Verdict(err, d.own), err
}

func (d *failDriver) Discard(int)                  {}
func (d *failDriver) RequestBudget() recoil.Budget { return d.budget }

// A driver hands Drive its request's budget by being a RequestBudgeter, not
// through the context: the loop asks it after the policy's, before every
// retry.
func TestDriveRequestBudget(t *testing.T) {
	req := &refuse{}
	d := &failDriver{err: errors.New("500"), own: recoil.StatusVerdict(500), budget: req}
	p := &recoil.Policy{Backoff: backoff.None{}, Budget: recoil.NoBudget}
	last, err := recoil.Drive(context.Background(), p, d)
	if !errors.Is(err, recoil.ErrBudget) || d.attempts != 1 || req.asked != 1 || last != 1 {
		t.Errorf("Drive() = %d, %v after %d attempts, request budget asked %d times; want attempt 1's outcome, ErrBudget, 1 attempt, asked once", last, err, d.attempts, req.asked)
	}
}

// The policy's Classify is asked first, then the driver's own verdict: the
// order Driver.Verdict combines them in, through Policy.Verdict.
func TestDriveClassifiesOnce(t *testing.T) {
	d := &failDriver{err: errors.New("500"), own: recoil.StatusVerdict(500)}
	p := &recoil.Policy{Backoff: backoff.None{}, Budget: recoil.NoBudget,
		Classify: func(error) recoil.Verdict {
			return recoil.Verdict{Class: recoil.ClassPermanent, Reason: "the policy says so"}
		}}
	_, err := recoil.Drive(context.Background(), p, d)
	var re *recoil.Error
	if !errors.As(err, &re) || re.Reason != recoil.ReasonPermanent || re.Verdict.Reason != "the policy says so" || d.attempts != 1 {
		t.Errorf("Drive() = %v after %d attempts, want the policy's permanent verdict after 1", err, d.attempts)
	}
	d = &failDriver{err: errors.New("500"), own: recoil.StatusVerdict(500)}
	p.Classify = nil
	if _, err = recoil.Drive(context.Background(), p, d); !errors.Is(err, recoil.ErrAttemptsExhausted) || d.attempts != 3 {
		t.Errorf("Drive() = %v after %d attempts, want the driver's transient verdict retried to 3", err, d.attempts)
	}
}
