// Package middleware stands in for github.com/go-pkgz/requester's
// middleware: Repeater re-sends a request through a repeater, on every
// status of 400 and above unless it is handed the statuses to re-send on.
package middleware

import (
	"context"
	"errors"
	"net/http"
)

// RepeaterSvc is what Repeater re-sends through.
type RepeaterSvc interface {
	Do(ctx context.Context, fun func() error, errs ...error) error
}

// RoundTripperHandler wraps a transport.
type RoundTripperHandler func(http.RoundTripper) http.RoundTripper

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Repeater re-sends failed requests through rpt.
func Repeater(rpt RepeaterSvc, failOnCodes ...int) RoundTripperHandler {
	return func(next http.RoundTripper) http.RoundTripper {
		return rtFunc(func(req *http.Request) (*http.Response, error) {
			var resp *http.Response
			err := rpt.Do(req.Context(), func() error {
				var err error
				if resp, err = next.RoundTrip(req); err != nil {
					return err
				}
				if len(failOnCodes) == 0 && resp.StatusCode >= 400 {
					return errors.New(resp.Status)
				}
				for _, c := range failOnCodes {
					if resp.StatusCode == c {
						return errors.New(resp.Status)
					}
				}
				return nil
			})
			return resp, err
		})
	}
}
