// Package attempts is a stand-in for a small retry library built in
// steps (attempts.Times(3).Every(5*time.Second).Run(op)): its loop goes on
// while the first round has not run or the last one failed, and sleeps
// the same fixed wait before every round but the first through a
// sleeper interface whose default is time.Sleep.
package attempts

import (
	"errors"
	"time"
)

// Op is one attempt; stop ends the retries whatever err is.
type Op func(attempt uint) (err error, stop bool)

// Sleeper waits.
type Sleeper interface {
	Sleep(d time.Duration)
}

type realSleeper struct{}

func (realSleeper) Sleep(d time.Duration) { time.Sleep(d) }

// Plan is how many times to retry and how long to wait between.
type Plan struct {
	retries uint
	every   time.Duration
	sleeper Sleeper
}

func newPlan(retries uint, every time.Duration, s Sleeper) *Plan {
	if s == nil {
		s = realSleeper{}
	}
	return &Plan{retries: retries, every: every, sleeper: s}
}

// Times starts a plan of n retries.
func Times(n uint) *Plan { return newPlan(n, 0, nil) }

// Every sets the wait between attempts.
func (p *Plan) Every(d time.Duration) *Plan {
	p.every = d
	return p
}

// Run calls op until it succeeds, asks to stop, or the retries run out.
func (p *Plan) Run(op Op) error {
	if op == nil {
		return errors.New("attempts: no op")
	}
	var err error
	var stop bool
	for n := uint(0); (0 == n || err != nil) && n <= p.retries; n++ {
		if n > 0 && p.every > 0 {
			p.sleeper.Sleep(p.every)
		}
		if err, stop = op(n); stop {
			break
		}
	}
	return err
}
