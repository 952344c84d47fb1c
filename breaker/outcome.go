package breaker

// Outcome is what one attempt came to, as a circuit breaker counts it.
type Outcome uint8

const (
	// Success: the dependency answered (including a definitive refusal such as
	// a validator's 400: the dependency is up and judging).
	Success Outcome = iota
	// Failure: the dependency failed or is overloaded (timeouts, 5xx, 503/529).
	Failure
	// Ignored: the outcome says nothing about the dependency's health (the
	// caller cancelled). It counts for nothing, but frees a half-open probe slot.
	Ignored
)
