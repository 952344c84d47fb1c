package pgstore_test

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/recoil-go/recoil/idempotency"
	"github.com/recoil-go/recoil/idempotency/pgstore"
)

// A charge handler whose charge is a recovery point. (No Output: it needs
// a PostgreSQL; TestRecoveryPoints runs the same handler against a real
// one, crash included.)
func ExampleStore_Phase() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://postgres@127.0.0.1:5432/test")
	if err != nil {
		panic(err)
	}
	defer pool.Close()
	store, err := pgstore.New(pool, pgstore.Config{})
	if err != nil {
		panic(err)
	}
	if err := store.Migrate(ctx); err != nil {
		panic(err)
	}
	go func() { _ = idempotency.RunReaper(ctx, time.Hour, store, nil) }()

	charges := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := store.Phase(r.Context(), "charged", func(ctx context.Context, tx pgx.Tx) error {
			_, err := tx.Exec(ctx, "INSERT INTO charges (amount) VALUES (100)")
			return err
		})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintln(w, `{"status":"charged"}`)
	})
	h, err := idempotency.NewMiddleware(charges, idempotency.Config{Store: store, Required: true})
	if err != nil {
		panic(err)
	}
	_ = http.ListenAndServe("127.0.0.1:8080", h)
}

// New checks its Config before anything reaches the database: the table's
// name is spliced into SQL, so only a plain identifier is taken.
func ExampleNew() {
	// pgxpool.New connects lazily: nothing is dialled until the store is used.
	pool, err := pgxpool.New(context.Background(), "postgres://postgres@127.0.0.1:5432/test")
	if err != nil {
		panic(err)
	}
	defer pool.Close()
	if _, err := pgstore.New(pool, pgstore.Config{Table: "payments_keys", Retention: 48 * time.Hour}); err == nil {
		fmt.Println("store on payments_keys")
	}
	_, err = pgstore.New(pool, pgstore.Config{Table: "keys; DROP TABLE charges"})
	fmt.Println(err)
	// Output:
	// store on payments_keys
	// pgstore: Config.Table "keys; DROP TABLE charges": want a lower-case identifier of letters, digits and underscores, at most 63 bytes
}
