// Package fixes holds findings with a mechanical fix.
package fixes

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"
	"github.com/recoil-go/recoil/recoilgrpc"
	"github.com/recoil-go/recoil/recoilhttp"
	"google.golang.org/grpc"
)

type result struct{ n int }

func valueAndError(ctx context.Context, d time.Duration) (result, *http.Response, int, error) {
	time.Sleep(d) // want `deafwait: time\.Sleep ignores ctx`
	return result{}, nil, 0, nil
}

func noResults(ctx context.Context) {
	for i := 0; i < 3; i++ {
		time.Sleep(time.Duration(i) * time.Millisecond) // want `deafwait: time\.Sleep ignores ctx`
	}
}

func noFix(ctx context.Context) string {
	time.Sleep(time.Millisecond) // want `deafwait: time\.Sleep ignores ctx`
	return ""
}

func sdkDefault() openai.Client {
	hc := &http.Client{Transport: &recoilhttp.Transport{}}
	return openai.NewClient(option.WithHTTPClient(hc)) // want `stacked: openai-go client keeps its default retries`
}

func sdkTwo() openai.Client {
	hc := &http.Client{Transport: &recoilhttp.Transport{}}
	return openai.NewClient(option.WithHTTPClient(hc), option.WithMaxRetries(2)) // want `stacked: openai-go client retries 2 times`
}

func grpcOn(rc *recoilgrpc.Client) (*grpc.ClientConn, error) {
	return grpc.NewClient("dns:///x", grpc.WithDefaultServiceConfig(`{"methodConfig":[{"retryPolicy":{}}]}`), grpc.WithUnaryInterceptor(rc.UnaryClientInterceptor())) // want `stacked: grpc-go's retryPolicy is left on`
}

func nilOnCancel(ctx context.Context, tick func() bool) error {
	for i := 0; i < 3; i++ {
		if !tick() {
			time.Sleep(time.Second) // want `deafwait: time\.Sleep ignores ctx`
		}
		select {
		case <-ctx.Done():
			return nil
		default:
		}
	}
	return nil
}

func constantRetry(try func() error) error {
	var err error
	for i := 0; i < 3; i++ {
		if err = try(); err == nil {
			return nil
		}
		time.Sleep(2 * time.Second) // want `nojitter: this wait in a retry loop has a constant`
	}
	return err
}

func forever(ctx context.Context, try func(context.Context) error) error {
	for { // want `unbounded: retry loop has no bound`
		err := try(ctx)
		if err == nil {
			return nil
		}
		if !errors.Is(err, errBusy) {
			return err
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(rand.Int64N(int64(time.Second)))):
		}
	}
}

var errBusy = errors.New("busy")
