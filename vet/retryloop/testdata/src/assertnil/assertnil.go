// want package:"offline"

// Package assertnil holds, written anew, retry loops that classify by a
// comma-ok type assertion of the attempt's error to an interface that
// carries a code (as the AWS SDK's awserr.Error does), then switch on the
// code. A success asserts nothing: nil is of no type, so it leaves.
package assertnil

import (
	"math/rand/v2"
	"time"
)

// codedError is an error with a service's code.
type codedError interface {
	error
	Code() string
}

// groups deletes security groups at a cloud provider.
type groups interface {
	Delete(id string) error
}

// remove deletes a group, trying again while something still depends on
// it, every three seconds: every caller that failed together comes back
// together.
//
// case: flag nojitter
func remove(g groups, id string) error {
	for i := 0; i < 60; i++ {
		err := g.Delete(id)
		if cerr, ok := err.(codedError); ok {
			switch cerr.Code() {
			case "DependencyViolation":
				time.Sleep(3 * time.Second) // want `nojitter: this wait in a retry loop`
				continue
			default:
				return err
			}
		}
		return err
	}
	return nil
}

// removeJittered is remove's twin with a full-jitter wait.
//
// case: clean
func removeJittered(g groups, id string) error {
	for i := 0; i < 60; i++ {
		err := g.Delete(id)
		if cerr, ok := err.(codedError); ok {
			switch cerr.Code() {
			case "DependencyViolation":
				time.Sleep(rand.N(3 * time.Second))
				continue
			default:
				return err
			}
		}
		return err
	}
	return nil
}
