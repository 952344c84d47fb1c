package pgstore

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/recoil-go/recoil/idempotency"
)

// DefaultTable is the table a Store uses when Config.Table is empty.
const DefaultTable = "recoil_idempotency"

// ErrNoClaim is returned by Phase when its context carries no claim (it
// is not inside a request the Middleware runs, nor a call Do runs).
var ErrNoClaim = errors.New("pgstore: no idempotency claim in the context")

// Config configures a Store. Zero fields mean their defaults.
type Config struct {
	// Table is the table's name, an unquoted lower-case SQL identifier
	// (letters, digits, underscores; at most 63 bytes); empty means
	// DefaultTable. Migrate creates it.
	Table string
	// Retention is how long a key is kept after it was first used or
	// finished (Reap removes it after that); zero means
	// idempotency.DefaultRetention.
	Retention time.Duration
}

// Store is an idempotency.Store in PostgreSQL, in the style of the
// "Rocket Rides" design (Brandur Leach, "Implementing Stripe-like
// Idempotency Keys in Postgres", 2017): one row per scope and key under a
// primary key, the first phase — claiming the key — in a transaction that
// serialises duplicates on that row, and recovery points: Phase runs a
// step of the work in the same transaction that records the step done, so
// a retry after a crash resumes after the last step instead of repeating
// it. Leases and retention are counted by the database's clock.
//
// Migrate creates the table; Reap removes expired rows (schedule it with
// idempotency.RunReaper). Make a Store with New; the zero Store is not
// usable. It is safe for concurrent use.
type Store struct {
	pool      *pgxpool.Pool
	table     string
	retention time.Duration
}

var ident = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// New returns a Store on pool, or an error naming a Config field that is
// not valid.
func New(pool *pgxpool.Pool, cfg Config) (*Store, error) {
	if cfg.Table == "" {
		cfg.Table = DefaultTable
	}
	switch {
	case !ident.MatchString(cfg.Table):
		return nil, fmt.Errorf("pgstore: Config.Table %q: want a lower-case identifier of letters, digits and underscores, at most 63 bytes", cfg.Table)
	case cfg.Retention < 0:
		return nil, errors.New("pgstore: Config.Retention is negative")
	}
	if cfg.Retention == 0 {
		cfg.Retention = idempotency.DefaultRetention
	}
	return &Store{pool: pool, table: cfg.Table, retention: cfg.Retention}, nil
}

// Migrate creates the store's table and its index if they do not exist,
// and brings a table an earlier version created to the layout of this
// one (scope and key as bytea, the header in MarshalHeader's encoding, a
// trailer column), keeping its rows. Run it once at start-up; it is safe
// to run again.
//
// Scope, key, header and body are bytea, so what is stored is exact to
// the byte: a scope or key that is not UTF-8, a header value in Latin-1.
func (s *Store) Migrate(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, fmt.Sprintf(`
CREATE TABLE IF NOT EXISTS %[1]s (
	scope        bytea       NOT NULL,
	key          bytea       NOT NULL,
	fingerprint  text        NOT NULL,
	token        text        NOT NULL,
	locked_until timestamptz,
	phases       text[]      NOT NULL DEFAULT '{}',
	status       integer,
	header       bytea,
	trailer      bytea,
	body         bytea,
	created_at   timestamptz NOT NULL DEFAULT now(),
	expires_at   timestamptz NOT NULL,
	PRIMARY KEY (scope, key)
);
CREATE INDEX IF NOT EXISTS %[1]s_expires_at ON %[1]s (expires_at);`, s.table))
	if err != nil {
		return fmt.Errorf("pgstore: migrate: %w", err)
	}
	if err := s.upgrade(ctx); err != nil {
		return fmt.Errorf("pgstore: migrate %s to bytea: %w", s.table, err)
	}
	return nil
}

// upgrade converts a table of the first layout (scope and key text, the
// header jsonb, no trailer): text to its UTF-8 bytes, the header to the
// bytes of its JSON, which idempotency.UnmarshalHeader still reads.
func (s *Store) upgrade(ctx context.Context) error {
	var old bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM information_schema.columns
WHERE table_schema = current_schema() AND table_name = $1 AND column_name = 'scope' AND data_type = 'text')`, s.table).Scan(&old)
	if err != nil || !old {
		return err
	}
	_, err = s.pool.Exec(ctx, fmt.Sprintf(`ALTER TABLE %s
	ALTER COLUMN scope TYPE bytea USING convert_to(scope, 'UTF8'),
	ALTER COLUMN key TYPE bytea USING convert_to(key, 'UTF8'),
	ALTER COLUMN header TYPE bytea USING convert_to(header::text, 'UTF8'),
	ADD COLUMN IF NOT EXISTS trailer bytea`, s.table))
	return err
}

// Begin implements idempotency.Store. A finished key (or one used with
// another fingerprint) is answered from one read, without a lock: such a
// row does not change until it expires. Otherwise, in one transaction, it
// inserts the key's row, or locks the row that is there and decides from
// it.
func (s *Store) Begin(ctx context.Context, scope, key, fingerprint string, lease time.Duration) (idempotency.Begun, error) {
	var r row
	err := s.pool.QueryRow(ctx, fmt.Sprintf(`SELECT fingerprint, status, header, trailer, body, false, expires_at <= now(), 0::float8
FROM %s WHERE scope = $1 AND key = $2`, s.table), []byte(scope), []byte(key)).Scan(r.dest()...)
	switch {
	case err == nil && !r.expired && (r.fp != fingerprint || r.status != nil):
		b, err := r.settled(fingerprint)
		if err != nil {
			return idempotency.Begun{}, fmt.Errorf("pgstore: begin: %w", err)
		}
		return b, nil
	case err != nil && !errors.Is(err, pgx.ErrNoRows):
		return idempotency.Begun{}, fmt.Errorf("pgstore: begin: %w", err)
	}
	token := idempotency.NewToken()
	var b idempotency.Begun
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		b, err = s.begin(ctx, tx, []byte(scope), []byte(key), fingerprint, token, lease)
		return err
	})
	if err != nil {
		return idempotency.Begun{}, fmt.Errorf("pgstore: begin: %w", err)
	}
	return b, nil
}

// row is what Begin reads of a key's row.
type row struct {
	fp                    string
	status                *int32
	header, trailer, body []byte
	held, expired         bool
	retryMS               float64
}

func (r *row) dest() []any {
	return []any{&r.fp, &r.status, &r.header, &r.trailer, &r.body, &r.held, &r.expired, &r.retryMS}
}

// settled reports a row that is finished or used with another
// fingerprint than fp.
func (r *row) settled(fp string) (idempotency.Begun, error) {
	if r.fp != fp {
		return idempotency.Begun{State: idempotency.StateMismatch}, nil
	}
	header, err := idempotency.UnmarshalHeader(r.header)
	if err != nil {
		return idempotency.Begun{}, err
	}
	trailer, err := idempotency.UnmarshalHeader(r.trailer)
	if err != nil {
		return idempotency.Begun{}, err
	}
	resp := &idempotency.Response{Status: int(*r.status), Header: header, Body: r.body, Trailer: trailer}
	return idempotency.Begun{State: idempotency.StateDone, Response: resp}, nil
}

func (s *Store) begin(ctx context.Context, tx pgx.Tx, scope, key []byte, fp, token string, lease time.Duration) (idempotency.Begun, error) {
	leaseMS, keepMS := max(lease.Milliseconds(), 1), s.retention.Milliseconds()
	tag, err := tx.Exec(ctx, fmt.Sprintf(`INSERT INTO %s (scope, key, fingerprint, token, locked_until, expires_at)
VALUES ($1, $2, $3, $4, now() + $5 * interval '1 millisecond', now() + $6 * interval '1 millisecond')
ON CONFLICT (scope, key) DO NOTHING`, s.table), scope, key, fp, token, leaseMS, keepMS)
	if err != nil {
		return idempotency.Begun{}, err
	}
	if tag.RowsAffected() == 1 {
		return idempotency.Begun{State: idempotency.StateNew, Token: token}, nil
	}
	var r row
	err = tx.QueryRow(ctx, fmt.Sprintf(`SELECT fingerprint, status, header, trailer, body,
	COALESCE(locked_until > now(), false), expires_at <= now(),
	COALESCE(EXTRACT(EPOCH FROM locked_until - now()) * 1000, 0)
FROM %s WHERE scope = $1 AND key = $2 FOR UPDATE`, s.table), scope, key).Scan(r.dest()...)
	if errors.Is(err, pgx.ErrNoRows) {
		// Removed between the insert and the select (Release, Reap): the
		// caller's retry will find it free.
		return idempotency.Begun{}, errors.New("the key's row went away while it was read; try again")
	}
	if err != nil {
		return idempotency.Begun{}, err
	}
	switch {
	case r.expired:
		// Past its retention but not reaped yet: a fresh start.
		_, err = tx.Exec(ctx, fmt.Sprintf(`UPDATE %s SET fingerprint = $3, token = $4, locked_until = now() + $5 * interval '1 millisecond',
	phases = '{}', status = NULL, header = NULL, trailer = NULL, body = NULL, created_at = now(), expires_at = now() + $6 * interval '1 millisecond'
WHERE scope = $1 AND key = $2`, s.table), scope, key, fp, token, leaseMS, keepMS)
		return idempotency.Begun{State: idempotency.StateNew, Token: token}, err
	case r.fp != fp || r.status != nil:
		return r.settled(fp)
	case r.held:
		return idempotency.Begun{State: idempotency.StateRunning, RetryIn: time.Duration(r.retryMS * float64(time.Millisecond))}, nil
	}
	// The holder's lease ran out: take the key over, its recovery points
	// kept, so the work resumes after the last one.
	_, err = tx.Exec(ctx, fmt.Sprintf(`UPDATE %s SET token = $3, locked_until = now() + $4 * interval '1 millisecond'
WHERE scope = $1 AND key = $2`, s.table), scope, key, token, leaseMS)
	return idempotency.Begun{State: idempotency.StateNew, Token: token}, err
}

// Complete implements idempotency.Store.
func (s *Store) Complete(ctx context.Context, scope, key, token string, resp *idempotency.Response) error {
	body := resp.Body
	if body == nil {
		body = []byte{}
	}
	var done bool
	err := s.pool.QueryRow(ctx, fmt.Sprintf(`WITH done AS (
	UPDATE %[1]s SET status = $4, header = $5, trailer = $6, body = $7, locked_until = NULL, expires_at = now() + $8 * interval '1 millisecond'
	WHERE scope = $1 AND key = $2 AND token = $3 AND status IS NULL
	RETURNING true
)
SELECT EXISTS (SELECT 1 FROM done) OR EXISTS (SELECT 1 FROM %[1]s WHERE scope = $1 AND key = $2 AND token = $3 AND status IS NOT NULL)`, s.table),
		[]byte(scope), []byte(key), token, resp.Status, idempotency.MarshalHeader(resp.Header), idempotency.MarshalHeader(resp.Trailer), body,
		s.retention.Milliseconds()).Scan(&done)
	switch {
	case err != nil:
		return fmt.Errorf("pgstore: complete: %w", err)
	case !done:
		return idempotency.ErrLeaseLost
	}
	return nil
}

// Release implements idempotency.Store. A key with recovery points is not
// forgotten: its lock is let go and its points kept, so the next request
// resumes after them rather than repeating a step that was done.
func (s *Store) Release(ctx context.Context, scope, key, token string) error {
	tag, err := s.pool.Exec(ctx, fmt.Sprintf(`WITH gone AS (
	DELETE FROM %[1]s WHERE scope = $1 AND key = $2 AND token = $3 AND status IS NULL AND cardinality(phases) = 0 RETURNING 1
), freed AS (
	UPDATE %[1]s SET locked_until = now() WHERE scope = $1 AND key = $2 AND token = $3 AND status IS NULL AND cardinality(phases) > 0 RETURNING 1
)
SELECT 1 FROM gone UNION ALL SELECT 1 FROM freed`, s.table), []byte(scope), []byte(key), token)
	switch {
	case err != nil:
		return fmt.Errorf("pgstore: release: %w", err)
	case tag.RowsAffected() == 0:
		return idempotency.ErrLeaseLost
	}
	return nil
}

// Reap deletes the rows whose retention ran out by now and returns how
// many it deleted. A key whose lease ran out is kept until its retention
// does, with its recovery points, for the retry that resumes it.
func (s *Store) Reap(ctx context.Context, now time.Time) (int, error) {
	tag, err := s.pool.Exec(ctx, fmt.Sprintf(`DELETE FROM %s WHERE expires_at <= $1`, s.table), now)
	if err != nil {
		return 0, fmt.Errorf("pgstore: reap: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// Phase runs one step of the work under the claim in ctx — a recovery
// point — unless a run before this one already finished it: fn runs in a
// transaction that also records the step's name against the key, so the
// step's writes and the record of it commit together or not at all. A
// retry after a crash skips the steps recorded and resumes with the first
// that is not. fn must do its work through tx (an effect outside the
// database, such as a call to a payment API, is not covered: give that
// call an idempotency key of its own, derived from this one).
//
// Phase returns nil for a step skipped, fn's error (and records nothing)
// if fn fails, idempotency.ErrLeaseLost if the claim no longer holds the
// key, and ErrNoClaim outside a claim. The claim comes from the
// idempotency Middleware or from idempotency.Do on a Store.
func (s *Store) Phase(ctx context.Context, name string, fn func(ctx context.Context, tx pgx.Tx) error) error {
	c, ok := idempotency.ClaimFrom(ctx)
	if !ok {
		return ErrNoClaim
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var phases []string
		err := tx.QueryRow(ctx, fmt.Sprintf(`SELECT phases FROM %s WHERE scope = $1 AND key = $2 AND token = $3 AND status IS NULL FOR UPDATE`, s.table),
			[]byte(c.Scope), []byte(c.Key), c.Token).Scan(&phases)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return idempotency.ErrLeaseLost
		case err != nil:
			return fmt.Errorf("pgstore: phase %s: %w", name, err)
		case slices.Contains(phases, name):
			return nil
		}
		if err := fn(ctx, tx); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, fmt.Sprintf(`UPDATE %s SET phases = array_append(phases, $3) WHERE scope = $1 AND key = $2`, s.table), []byte(c.Scope), []byte(c.Key), name)
		return err
	})
}

// Phases returns the recovery points recorded under the claim in ctx.
func (s *Store) Phases(ctx context.Context) ([]string, error) {
	c, ok := idempotency.ClaimFrom(ctx)
	if !ok {
		return nil, ErrNoClaim
	}
	var phases []string
	err := s.pool.QueryRow(ctx, fmt.Sprintf(`SELECT phases FROM %s WHERE scope = $1 AND key = $2`, s.table), []byte(c.Scope), []byte(c.Key)).Scan(&phases)
	if err != nil {
		return nil, fmt.Errorf("pgstore: phases: %w", err)
	}
	return phases, nil
}
