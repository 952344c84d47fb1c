// want package:"offline"

// Package ignores holds //recoil:ignore comments, well and badly formed.
package ignores

import (
	"context"
	"time"
)

// case: clean
func ignoredOnLine(ctx context.Context) {
	time.Sleep(time.Millisecond) //recoil:ignore deafwait a millisecond at startup, before ctx matters
}

// case: clean
func ignoredAbove(ctx context.Context) {
	//recoil:ignore deafwait the test harness's clock is fake
	time.Sleep(time.Millisecond)
}

func ignoreWithoutReason(ctx context.Context) {
	/* want `ignore: //recoil:ignore deafwait needs a reason` */ //recoil:ignore deafwait
	time.Sleep(time.Millisecond)                                 // want `deafwait: time\.Sleep ignores ctx`
}

func ignoreUnknownCheck(ctx context.Context) {
	/* want `ignore: //recoil:ignore names unknown check "sleepy"` */ //recoil:ignore sleepy because
	time.Sleep(time.Millisecond)                                      // want `deafwait: time\.Sleep ignores ctx`
}

func ignoreOtherCheck(ctx context.Context) {
	//recoil:ignore nojitter not the finding here
	time.Sleep(time.Millisecond) // want `deafwait: time\.Sleep ignores ctx`
}

func ignoreTooFarAbove(ctx context.Context) {
	//recoil:ignore deafwait two lines above does not count

	time.Sleep(time.Millisecond) // want `deafwait: time\.Sleep ignores ctx`
}
