// Package stacked holds retry layers stacked on each other.
package stacked

import (
	"net/http"

	"github.com/anthropics/anthropic-sdk-go"
	aopt "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"
	"github.com/recoil-go/recoil/recoilgrpc"
	"github.com/recoil-go/recoil/recoilhttp"
	"google.golang.org/grpc"
)

// case: flag stacked
func openaiDefaultRetries() openai.Client {
	hc := &http.Client{Transport: recoilhttp.ModelAPI(nil)}
	return openai.NewClient(option.WithAPIKey("k"), option.WithHTTPClient(hc)) // want `stacked: openai-go client keeps its default retries under a retrying recoilhttp\.Transport`
}

// case: flag stacked
func openaiExplicitRetries() openai.Client {
	rt := &recoilhttp.Transport{}
	hc := &http.Client{}
	hc.Transport = rt
	return openai.NewClient(option.WithHTTPClient(hc), option.WithMaxRetries(2)) // want `stacked: openai-go client retries 2 times under a retrying recoilhttp\.Transport`
}

// case: clean
func openaiRetriesOff() openai.Client {
	hc := &http.Client{Transport: recoilhttp.ModelAPI(nil)}
	return openai.NewClient(option.WithHTTPClient(hc), option.WithMaxRetries(0))
}

// case: clean
func openaiPlainTransport() openai.Client {
	return openai.NewClient(option.WithHTTPClient(&http.Client{Transport: http.DefaultTransport}))
}

// case: flag stacked
func anthropicOptsSlice() anthropic.Client {
	opts := []aopt.RequestOption{aopt.WithHTTPClient(&http.Client{Transport: &recoilhttp.Transport{}})}
	opts = append(opts, aopt.WithMaxRetries(3))
	return anthropic.NewClient(opts...) // want `stacked: anthropic-sdk-go client retries 3 times under a retrying recoilhttp\.Transport`
}

const retryingConfig = `{"methodConfig":[{"name":[{"service":"echo.Echo"}],"retryPolicy":{"maxAttempts":4,"initialBackoff":"0.1s","maxBackoff":"1s","backoffMultiplier":2,"retryableStatusCodes":["UNAVAILABLE"]}}]}`

// case: flag stacked
func grpcRetryPolicyOn(rc *recoilgrpc.Client) (*grpc.ClientConn, error) {
	return grpc.NewClient("dns:///echo:443", // want `stacked: grpc-go's retryPolicy is left on under a recoilgrpc interceptor`
		grpc.WithDefaultServiceConfig(retryingConfig),
		grpc.WithUnaryInterceptor(rc.UnaryClientInterceptor()))
}

// case: clean
func grpcRetryDisabled(rc *recoilgrpc.Client) (*grpc.ClientConn, error) {
	return grpc.NewClient("dns:///echo:443",
		grpc.WithDefaultServiceConfig(retryingConfig),
		grpc.WithDisableRetry(),
		grpc.WithUnaryInterceptor(rc.UnaryClientInterceptor()))
}

// case: clean
func grpcNoRecoil() (*grpc.ClientConn, error) {
	return grpc.NewClient("dns:///echo:443", grpc.WithDefaultServiceConfig(retryingConfig))
}

// case: flag stacked
func grpcChainedOpts() (*grpc.ClientConn, error) {
	rc := &recoilgrpc.Client{}
	opts := []grpc.DialOption{grpc.WithChainUnaryInterceptor(rc.UnaryClientInterceptor())}
	opts = append(opts, grpc.WithDefaultServiceConfig(retryingConfig))
	return grpc.NewClient("dns:///echo:443", opts...) // want `stacked: grpc-go's retryPolicy is left on under a recoilgrpc interceptor`
}
