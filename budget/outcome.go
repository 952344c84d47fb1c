package budget

// Result is what one attempt came to, in the terms a retry budget counts.
type Result uint8

const (
	// Success: the attempt succeeded.
	Success Result = iota
	// Failure: the attempt failed in a way worth retrying (a transient error,
	// a timeout, a 5xx). The dependency may or may not have processed it.
	Failure
	// Overload: the dependency refused the attempt because it is overloaded or
	// the caller is over its allowance (429, 503, 529, Unavailable). The SRE
	// book's adaptive throttle counts these as not accepted.
	Overload
	// Permanent: the dependency answered and the answer will not change (a
	// validator's 400). It was accepted and processed; retrying cannot help.
	Permanent
	// Ignored: the outcome says nothing about the dependency (the caller
	// cancelled). Budgets count it for nothing.
	Ignored
)

// Outcome reports one attempt to a budget.
type Outcome struct {
	// Attempt is the attempt's number within its logical call; 1 is the first.
	Attempt int
	// Result is what the attempt came to.
	Result Result
	// After is the cause the retry that made this attempt was charged for
	// (see RetryAt), so a budget that refunds on success refunds what it
	// took. It is CauseError for first attempts.
	After Cause
}

// Cause is why a retry is wanted — what the failed attempt before it was —
// as a budget prices it. The AWS SDKs' standard mode charges a timeout more
// than an ordinary failure; its 2026 rules charge throttling less.
type Cause uint8

const (
	// CauseError: the attempt failed with a transient error.
	CauseError Cause = iota
	// CauseTimeout: the attempt timed out.
	CauseTimeout
	// CauseThrottle: the dependency throttled the attempt or was overloaded
	// (429, 503, 529).
	CauseThrottle
)
