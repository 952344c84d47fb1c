// Package recoilsdk classifies the errors of the official model SDKs —
// github.com/anthropics/anthropic-sdk-go and github.com/openai/openai-go —
// for recoil, so that recoil.Do around an SDK call retries what the HTTP
// status table says is worth retrying, and nothing else.
//
// An SDK call that fails with an HTTP status returns an *anthropic.Error or
// an *openai.Error. Both hold the status in a field, StatusCode, not behind
// a method such as StatusCode() int or HTTPStatusCode() int, which is all
// recoil's core can see of an error type it does not import. Without this
// package such an error is unclassified, and a validator's 400, a revoked
// key's 401 and a retired model's 404 are each tried MaxAttempts times.
// Classify finds the SDK error and classifies the response it carries with
// recoilhttp.Classify, the table recoilhttp.Transport applies under the SDK,
// so the verdict does not depend on where recoil sits. The package is a
// module of its own so that the SDKs never become dependencies of recoil's
// users.
//
// # Usage
//
// Set the Policy's Classify to Classify, and turn the SDK's own retries off
// with option.WithMaxRetries(0), so there is one retry layer and not two:
// each SDK retries twice by default (see WithMaxRetries in its option
// package), which under recoil's three attempts sends a failing request up
// to nine times.
//
//	client := anthropic.NewClient(option.WithMaxRetries(0))
//	models := &recoil.Policy{Classify: recoilsdk.Classify}
//
//	msg, err := recoil.Get(ctx, models, func(ctx context.Context) (*anthropic.Message, error) {
//		return client.Messages.New(ctx, params)
//	})
//
// The same works for openai.NewClient and client.Chat.Completions.New. A
// permanent failure (400, 401, 403, 404, 413, 422, a 429 for an exhausted
// quota) ends the call after one attempt with recoil.ErrPermanent; a 429 is
// retried after the wait its Retry-After asks for; 500 is transient, 503 and
// 529 overloaded. The *recoil.Error returned unwraps to the SDK's error, and
// its Verdict carries the diagnosis: Code is recoilhttp.CodeNotFound for a
// retired model, the provider's error code or type otherwise.
//
// Classify needs no wrapping to combine with other rules: it has no opinion
// (the zero Verdict) about errors that are not the SDKs' and about errors
// marked with recoil.Mark, so recoil's built-in rules decide those.
//
// # Limits
//
// Only what the SDKs report with a status can be classified. The OpenAI SDK
// reports an error body whose "error" is a string ({"error":"…"}) as a bare
// JSON decoding error, and an error inside a stream as an
// *ssestream.StreamError, neither with a status, so the policy's Unknown
// class applies to them. Under the SDK, recoilhttp.Transport sees the
// response itself: it classifies the first by its status, and the second
// when it comes before any content.
//
// This module needs Go 1.26, which the OpenAI SDK requires.
package recoilsdk
