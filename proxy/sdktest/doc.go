// Package sdktest runs the official model SDKs — openai-go here, the npm
// openai and @anthropic-ai/sdk packages under Node — against recoil proxy
// and a fake provider answering 529, and counts the attempts that reach
// the provider with the proxy and without it. It is a module of its own so
// that the proxy's users never have the SDKs in their module graph; it has
// tests only.
package sdktest
