// Package pgstore is an idempotency.Store in PostgreSQL (pgx v5), with
// recovery points for work in several steps, in the style of the "Rocket
// Rides" design (Brandur Leach, "Implementing Stripe-like Idempotency Keys
// in Postgres", 2017):
//
//	store, err := pgstore.New(pool, pgstore.Config{Table: "idempotency_keys"})
//	err = store.Migrate(ctx) // creates the table (or upgrades an earlier layout); never assumes one
//	go idempotency.RunReaper(ctx, time.Hour, store, nil)
//	h, err := idempotency.NewMiddleware(charges, idempotency.Config{Store: store})
//
// Inside the handler, each step that writes to the same database runs in a
// recovery point, committed with the record that it is done:
//
//	err := store.Phase(r.Context(), "charged", func(ctx context.Context, tx pgx.Tx) error {
//		_, err := tx.Exec(ctx, "INSERT INTO charges (order_id, amount) VALUES ($1, $2)", id, amount)
//		return err
//	})
//
// A retry after a crash (once the lease has run out) skips the steps that
// were recorded, so the charge above is made once even if the process died
// before the response was stored.
//
// Scope, key, headers, trailer and body are stored as bytea, so a replay is
// the original to the byte (a header value need not be UTF-8).
package pgstore
