package recoil_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
)

// codeError reports its status through a StatusCode() method, as many API
// clients' error types do.
type codeError struct{ code int }

func (e codeError) Error() string   { return fmt.Sprintf("status %d", e.code) }
func (e codeError) StatusCode() int { return e.code }

// awsError reports it the AWS SDK's way.
type awsError struct{ code int }

func (e awsError) Error() string       { return fmt.Sprintf("aws status %d", e.code) }
func (e awsError) HTTPStatusCode() int { return e.code }

// An error that reports an HTTP status is classified by the status table
// whichever way it reports it and however deeply it is wrapped; a verdict
// marked on it still wins, and so does cancellation.
func TestClassifyStatusCarryingErrors(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want recoil.Class
		code string
	}{
		{"StatusCode 400", codeError{400}, recoil.ClassPermanent, ""},
		{"StatusCode 401", codeError{401}, recoil.ClassPermanent, "unauthorized"},
		{"StatusCode 404", codeError{404}, recoil.ClassPermanent, "not_found"},
		{"StatusCode 408", codeError{408}, recoil.ClassTransient, ""},
		{"StatusCode 429", codeError{429}, recoil.ClassThrottled, ""},
		{"StatusCode 500", codeError{500}, recoil.ClassTransient, ""},
		{"StatusCode 501", codeError{501}, recoil.ClassPermanent, ""},
		{"StatusCode 503", codeError{503}, recoil.ClassOverloaded, ""},
		{"StatusCode 529", codeError{529}, recoil.ClassOverloaded, ""},
		{"HTTPStatusCode 403", awsError{403}, recoil.ClassPermanent, "forbidden"},
		{"HTTPStatusCode 502", awsError{502}, recoil.ClassTransient, ""},
		{"wrapped", fmt.Errorf("calling the model: %w", codeError{400}), recoil.ClassPermanent, ""},
		{"joined", errors.Join(errors.New("x"), codeError{404}), recoil.ClassPermanent, "not_found"},
		{"a status below 400 says nothing", codeError{200}, recoil.ClassTransient, ""},
		{"a status out of range says nothing", codeError{-1}, recoil.ClassTransient, ""},
		{"a mark wins", recoil.Transient(codeError{400}), recoil.ClassTransient, ""},
		{"cancellation wins", fmt.Errorf("%w: %w", context.Canceled, codeError{500}), recoil.ClassCanceled, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := recoil.Classify(tt.err, recoil.ClassTransient)
			if v.Class != tt.want || v.Code != tt.code {
				t.Errorf("Classify(%v) = %v (code %q), want %v (code %q)", tt.err, v, v.Code, tt.want, tt.code)
			}
		})
	}
}

// recoil.Do around a client whose 400 carries its status tries it once.
func TestDoStatusCarryingError(t *testing.T) {
	n := 0
	p := &recoil.Policy{Budget: recoil.NoBudget, Backoff: backoff.None{}}
	err := recoil.Do(t.Context(), p, func(context.Context) error { n++; return codeError{400} })
	if n != 1 || !errors.Is(err, recoil.ErrPermanent) {
		t.Errorf("Do() = %v after %d attempts, want ErrPermanent after 1", err, n)
	}
}
