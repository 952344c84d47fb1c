// Package worklits holds, written anew, loops whose attempt is a call of a
// local variable given a function literal (work := func() … ; work()).
package worklits

import (
	"context"
	"errors"
	"net/http"
	"os"
	"time"

	"example.com/pb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

var errTooMany = errors.New("too many tries")

// greet asks again while the server says the precondition does not hold
// yet, each wait a second longer than the last, with no randomness; each
// call makes its own timeout, nothing for the wait to hear.
//
// case: flag nojitter
func greet(client pb.GreeterClient, name string, tries int) (*pb.HelloReply, error) {
	work := func() (*pb.HelloReply, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		return client.SayHello(ctx, &pb.HelloRequest{Name: name})
	}
	for i := 0; i < tries; i++ {
		reply, err := work()
		switch {
		case err == nil:
			return reply, nil
		case status.Code(err) == codes.FailedPrecondition:
			time.Sleep(time.Duration(i+1) * time.Second) // want `nojitter: this wait in a retry loop`
		default:
			return nil, err
		}
	}
	return nil, errTooMany
}

// ask is greet without the literal: a case of a tagless switch is
// reached only when the cases before it did not hold.
//
// case: flag nojitter
func ask(client pb.GreeterClient, name string, tries int) (*pb.HelloReply, error) {
	for i := 0; i < tries; i++ {
		reply, err := client.SayHello(context.Background(), &pb.HelloRequest{Name: name})
		switch {
		case err == nil:
			return reply, nil
		case status.Code(err) == codes.Unavailable:
			time.Sleep(time.Duration(i+1) * time.Second) // want `nojitter: this wait in a retry loop`
		default:
			return nil, err
		}
	}
	return nil, errTooMany
}

// download sends again on every transport error and every status but 200
// (404 too), a constant two seconds apart, Retry-After unread.
//
// case: flag unclassified nojitter retryafter
func download(hc *http.Client, url string) (*http.Response, error) {
	get := func() (*http.Response, error) {
		return hc.Get(url)
	}
	for try := 0; try < 5; try++ { // want `unclassified: retry loop around get retries on every error and on every non-2xx status`
		resp, err := get()
		if err == nil && resp.StatusCode == http.StatusOK {
			return resp, nil
		}
		if err == nil {
			resp.Body.Close()
		}
		time.Sleep(2 * time.Second) // want `nojitter: this wait in a retry loop` `retryafter: retry loop retries 429 and 503`
	}
	return nil, errTooMany
}

// move renames a file, again while another process holds it: nothing
// remote is tried.
//
// case: clean
func move(from, to string) error {
	rename := func() error { return os.Rename(from, to) }
	var err error
	for try := 0; try < 3; try++ {
		if err = rename(); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

// fetch calls the client's method through a variable, again on a
// transport error or a 5xx, a constant second apart, deaf to ctx,
// Retry-After unread.
//
// case: flag nojitter deafwait retryafter
func fetch(ctx context.Context, hc *http.Client, url string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	send := hc.Do
	for try := 0; try < 3; try++ {
		resp, err := send(req)
		if err == nil && resp.StatusCode < 500 {
			return resp, nil
		}
		if err == nil {
			resp.Body.Close()
		}
		time.Sleep(time.Second) // want `nojitter: this wait in a retry loop` `deafwait: time.Sleep ignores ctx` `retryafter: retry loop retries 503`
	}
	return nil, errTooMany
}
