// Package recoilsdk classifies the errors of the official model SDKs —
// github.com/anthropics/anthropic-sdk-go and github.com/openai/openai-go —
// for recoil, so that recoil.Do around an SDK call retries what the HTTP
// status table says is worth retrying, and nothing else.
//
// An SDK call that fails with an HTTP status returns an *anthropic.Error or
// an *openai.Error. Both carry the status as a field, StatusCode, not as a
// method, so recoil's core, which recognises an error with a
// StatusCode() int or HTTPStatusCode() int method, cannot see it: without
// this package such an error is unclassified, and a validator's 400, a
// revoked key's 401 and a retired model's 404 are each tried MaxAttempts
// times. Classify finds the SDK error and classifies the response it carries
// with recoilhttp.Classify, the table recoilhttp.Transport uses under the
// SDK, so the verdict does not depend on where recoil sits. It lives in its
// own module so that the SDKs never become dependencies of recoil's users.
//
// # Usage
//
// Set the Policy's Classify to Classify, and turn the SDK's own retries off
// with option.WithMaxRetries(0), so there is one retry layer and not two
// (each SDK retries twice by default, which under recoil's three attempts
// would send a failing request up to nine times):
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
// its Verdict carries the diagnosis (Code "not_found" for a retired model,
// the provider's type or code otherwise).
//
// Classify needs no wrapping to combine with other rules: it has no opinion
// (the zero Verdict) about errors that are not the SDKs' and about errors
// marked with recoil.Mark, so recoil's built-in rules decide those.
//
// This module needs Go 1.26, which the OpenAI SDK requires.
package recoilsdk
