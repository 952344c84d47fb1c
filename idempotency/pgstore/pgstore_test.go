package pgstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/recoil-go/recoil/idempotency"
	"github.com/recoil-go/recoil/idempotency/pgstore"
	"github.com/recoil-go/recoil/idempotency/storetest"
	"github.com/recoil-go/recoil/internal/leakcheck"
	"github.com/recoil-go/recoil/internal/testsvc"
)

func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }

// fixture is a store on a table of the test's own, over a pool whose
// connections carry an application_name of the test's own (so a test can
// kill exactly them).
type fixture struct {
	store *pgstore.Store
	pool  *pgxpool.Pool
	table string
	app   string
}

func unique() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func newFixture(t *testing.T, cfg pgstore.Config) *fixture {
	url := testsvc.Postgres(t)
	f := &fixture{table: "idem_test_" + unique(), app: "recoil-test-" + unique()}
	pc, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	pc.ConnConfig.RuntimeParams["application_name"] = f.app
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if f.pool, err = pgxpool.NewWithConfig(ctx, pc); err != nil {
		t.Fatal(err)
	}
	cfg.Table = f.table
	if f.store, err = pgstore.New(f.pool, cfg); err != nil {
		t.Fatal(err)
	}
	if err := f.store.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = f.pool.Exec(ctx, "DROP TABLE IF EXISTS "+f.table+", "+f.table+"_charges")
		f.pool.Close()
	})
	return f
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) idempotency.Store { return newFixture(t, pgstore.Config{}).store })
}

func TestNew(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  pgstore.Config
		ok   bool
	}{
		{"default", pgstore.Config{}, true},
		{"lower case", pgstore.Config{Table: "my_keys_2"}, true},
		{"upper case", pgstore.Config{Table: "Keys"}, false},
		{"injection", pgstore.Config{Table: "k; DROP TABLE x"}, false},
		{"too long", pgstore.Config{Table: strings.Repeat("k", 64)}, false},
		{"negative retention", pgstore.Config{Retention: -time.Second}, false},
	} {
		if _, err := pgstore.New(nil, tt.cfg); (err == nil) != tt.ok {
			t.Errorf("New(%s) error = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}

func TestMigrateTwice(t *testing.T) {
	f := newFixture(t, pgstore.Config{})
	if err := f.store.Migrate(context.Background()); err != nil {
		t.Fatalf("Migrate again: %v", err)
	}
}

// TestMigrateFromFirstLayout: a table of the first layout (scope and key
// text, header jsonb) is brought to bytea by Migrate, and a key it held
// still replays, its header read from the JSON it was stored as.
func TestMigrateFromFirstLayout(t *testing.T) {
	f := newFixture(t, pgstore.Config{})
	ctx := context.Background()
	_, err := f.pool.Exec(ctx, `DROP TABLE `+f.table+`;
CREATE TABLE `+f.table+` (
	scope text NOT NULL, key text NOT NULL, fingerprint text NOT NULL, token text NOT NULL,
	locked_until timestamptz, phases text[] NOT NULL DEFAULT '{}', status integer, header jsonb, body bytea,
	created_at timestamptz NOT NULL DEFAULT now(), expires_at timestamptz NOT NULL, PRIMARY KEY (scope, key));
INSERT INTO `+f.table+` VALUES ('client-1', 'k1', 'fp', 'tok', NULL, '{}', 201, '{"Content-Type":["application/json"],"X-Two":["a","b"]}', 'body',
	now(), now() + interval '1 hour');`)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second Migrate finds the new layout and changes nothing
		if err := f.store.Migrate(ctx); err != nil {
			t.Fatalf("Migrate on the first layout: %v", err)
		}
	}
	b, err := f.store.Begin(ctx, "client-1", "k1", "fp", time.Minute)
	if err != nil || b.State != idempotency.StateDone || b.Response.Status != 201 || string(b.Response.Body) != "body" ||
		b.Response.Header.Get("Content-Type") != "application/json" || strings.Join(b.Response.Header.Values("X-Two"), ",") != "a,b" {
		t.Fatalf("a key stored before the migration = %+v, %v; want its 201 replayed", b, err)
	}
	var scopeType string
	if err := f.pool.QueryRow(ctx, `SELECT data_type FROM information_schema.columns WHERE table_name = $1 AND column_name = 'scope'`, f.table).Scan(&scopeType); err != nil || scopeType != "bytea" {
		t.Fatalf("scope's type after Migrate = %q, %v; want bytea", scopeType, err)
	}
}

func TestReap(t *testing.T) {
	f := newFixture(t, pgstore.Config{Retention: time.Hour})
	ctx := context.Background()
	b, _ := f.store.Begin(ctx, "", "done", "fp", time.Minute)
	if err := f.store.Complete(ctx, "", "done", b.Token, &idempotency.Response{Status: 200}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.Begin(ctx, "", "running", "fp", time.Millisecond); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		at   time.Duration
		want int
	}{{0, 0}, {59 * time.Minute, 0}, {61 * time.Minute, 2}} {
		if n, err := f.store.Reap(ctx, time.Now().Add(tt.at)); err != nil || n != tt.want {
			t.Fatalf("Reap(now+%v) = %d, %v; want %d (rows go after the retention, not the lease)", tt.at, n, err, tt.want)
		}
	}
	if b, _ := f.store.Begin(ctx, "", "done", "other", time.Minute); b.State != idempotency.StateNew {
		t.Fatalf("after Reap the key is %v, want new", b.State)
	}
}

// TestRecoveryPoints: a handler charges in a recovery point (its insert and
// the record of the point commit together), then dies before answering.
// After the lease, the retry resumes after the point: the charge is not
// made again, and the response the retry stores says so. Without the
// point (storetest's crash case) the charge would be made twice.
func TestRecoveryPoints(t *testing.T) {
	f := newFixture(t, pgstore.Config{})
	ctx := context.Background()
	if _, err := f.pool.Exec(ctx, "CREATE TABLE "+f.table+"_charges (key text NOT NULL, amount int NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	var crash atomic.Bool
	crash.Store(true)
	var runs atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		runs.Add(1)
		c, _ := idempotency.ClaimFrom(r.Context())
		err := f.store.Phase(r.Context(), "charged", func(ctx context.Context, tx pgx.Tx) error {
			_, err := tx.Exec(ctx, "INSERT INTO "+f.table+"_charges VALUES ($1, 100)", c.Key)
			return err
		})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		if crash.Load() {
			panic(http.ErrAbortHandler) // dies between the charge and the answer
		}
		phases, _ := f.store.Phases(r.Context())
		var n int
		_ = f.pool.QueryRow(r.Context(), "SELECT count(*) FROM "+f.table+"_charges WHERE key = $1", c.Key).Scan(&n)
		fmt.Fprintf(w, "charges %d, phases %v", n, phases)
	})
	// The lease is both how long the retry waits for the crashed run's
	// claim to lapse and how long the retry has to run and store its
	// answer (the store's deadline never passes the lease): long enough
	// for a busy machine, where 300 ms was not.
	m, err := idempotency.NewMiddleware(h, idempotency.Config{Store: f.store, Lease: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(m)
	defer srv.Close()
	post := func() (int, string, error) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader("x"))
		req.Header.Set("Idempotency-Key", `"rp-1"`)
		req.Header.Set("Authorization", "Bearer client-a")
		resp, err := srv.Client().Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		var b strings.Builder
		_, _ = fmt.Fprint(&b, readAll(resp))
		return resp.StatusCode, b.String(), nil
	}
	if _, _, err := post(); err == nil {
		t.Fatal("the crashed request got a response")
	}
	crash.Store(false)
	var status int
	var body string
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for range tick.C {
		status, body, err = post()
		if err == nil && status != http.StatusConflict {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the retry never ran: %d %q %v", status, body, err)
		}
	}
	if status != http.StatusOK || body != "charges 1, phases [charged]" || runs.Load() != 2 {
		t.Fatalf("retry after the lease = %d %q after %d runs; want the handler resumed past the charge: %q", status, body, runs.Load(), "charges 1, phases [charged]")
	}
	if status, again, _ := post(); status != http.StatusOK || again != body || runs.Load() != 2 {
		t.Fatalf("a later retry = %d %q, %d runs; want the replay", status, again, runs.Load())
	}
}

func TestPhaseOutsideAClaim(t *testing.T) {
	f := newFixture(t, pgstore.Config{})
	err := f.store.Phase(context.Background(), "x", func(context.Context, pgx.Tx) error { return nil })
	if !errors.Is(err, pgstore.ErrNoClaim) {
		t.Fatalf("Phase without a claim = %v, want ErrNoClaim", err)
	}
}

// TestPhaseInDo: recovery points work under idempotency.Do too, and a
// phase whose lease was taken over does not run.
func TestPhaseInDo(t *testing.T) {
	f := newFixture(t, pgstore.Config{})
	ctx := context.Background()
	var ran int
	v, err := idempotency.Do(ctx, f.store, "job-1", func(ctx context.Context) (int, error) {
		err := f.store.Phase(ctx, "step", func(context.Context, pgx.Tx) error { ran++; return nil })
		return 7, err
	})
	if err != nil || v != 7 || ran != 1 {
		t.Fatalf("Do = %d, %v, ran %d", v, err, ran)
	}
	stale := idempotency.WithClaim(ctx, idempotency.Claim{Scope: "do", Key: "job-1", Token: "stale"})
	if err := f.store.Phase(stale, "other", func(context.Context, pgx.Tx) error { ran++; return nil }); !errors.Is(err, idempotency.ErrLeaseLost) || ran != 1 {
		t.Fatalf("Phase under a stale claim = %v (ran %d), want ErrLeaseLost and no run", err, ran)
	}
}

// TestTerminatedConnections kills every connection of the store's pool
// with pg_terminate_backend, from a connection of another pool, twice
// while requests are in flight: no side effect runs twice, and requests
// whose store call was cut get a problem+json error or finish once the
// pool has reconnected.
func TestTerminatedConnections(t *testing.T) {
	f := newFixture(t, pgstore.Config{})
	admin, err := pgx.Connect(context.Background(), testsvc.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	kill := func(t *testing.T) int {
		var n int
		err := admin.QueryRow(context.Background(),
			"SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1", f.app).Scan(&n)
		if err != nil {
			t.Fatalf("pg_terminate_backend: %v", err)
		}
		return n
	}
	storetest.Interrupted(t, f.store, func(t *testing.T, _ string) {
		n := kill(t)
		tm := time.NewTimer(50 * time.Millisecond) // let the pool reconnect and be cut again mid-run
		<-tm.C
		n += kill(t)
		t.Logf("terminated %d connections of the store's pool", n)
		if n == 0 {
			t.Error("no connection of the store's pool was found to terminate")
		}
	})
}

func readAll(resp *http.Response) string {
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String()
		}
	}
}
