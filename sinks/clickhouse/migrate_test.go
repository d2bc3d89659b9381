package clickhouse

import (
	"context"
	"fmt"
	"testing"
)

func TestMigrationsEmbedded(t *testing.T) {
	migs, err := Migrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(migs) == 0 || migs[0].Version != 1 {
		t.Fatalf("migrations = %+v", migs)
	}
	for i, m := range migs {
		if i > 0 && m.Version <= migs[i-1].Version {
			t.Errorf("migration %d out of order", m.Version)
		}
		if len(m.Statements("x")) == 0 {
			t.Errorf("migration %d has no statements", m.Version)
		}
	}
}

func TestMigrateTwiceIsIdempotent(t *testing.T) {
	conn, db := newDB(t) // first run
	ctx := context.Background()
	if err := Migrate(ctx, conn, MigrateDatabase(db)); err != nil {
		t.Fatalf("second run: %v", err)
	}
	vs, err := AppliedVersions(ctx, conn, db)
	if err != nil {
		t.Fatal(err)
	}
	migs, _ := Migrations()
	if len(vs) != len(migs) {
		t.Fatalf("applied %v, want %d migrations", vs, len(migs))
	}
	if n := queryInt(t, conn, "SELECT count() FROM "+db+".schema_migrations"); n != int64(len(migs)) {
		t.Fatalf("schema_migrations has %d rows after two runs, want %d", n, len(migs))
	}
	for _, table := range []string{"decisions", "checks", "consents", "webhook_deliveries", "face_index", "review_actions"} {
		q := fmt.Sprintf("SELECT count() FROM system.tables WHERE database = '%s' AND name = '%s'", db, table)
		if queryInt(t, conn, q) != 1 {
			t.Errorf("table %s missing", table)
		}
	}
	// Every insert column exists in its table.
	for table, cols := range map[string][]string{"decisions": decisionColumns, "checks": checkColumns, "consents": consentColumns, "webhook_deliveries": webhookColumns, "review_actions": reviewColumns} {
		for _, c := range cols {
			q := fmt.Sprintf("SELECT count() FROM system.columns WHERE database = '%s' AND table = '%s' AND name = '%s'", db, table, c)
			if queryInt(t, conn, q) != 1 {
				t.Errorf("%s.%s missing", table, c)
			}
		}
	}
}

func TestMigrateRejectsBadDatabaseName(t *testing.T) {
	conn := dial(t, server(t).Addr())
	if err := Migrate(context.Background(), conn, MigrateDatabase("x; DROP")); err == nil {
		t.Fatal("want an error")
	}
}

// TestAddColumnIfMissingRepeats: an "ADD COLUMN IF NOT EXISTS" (which ClickHouse 18.16 does
// not parse) adds a missing column and leaves an existing one, so an interrupted migration
// runs again.
func TestAddColumnIfMissingRepeats(t *testing.T) {
	conn, db := newDB(t)
	ctx := context.Background()
	st := "ALTER TABLE " + db + ".consents ADD COLUMN IF NOT EXISTS extra_col String DEFAULT 'x'"
	for range 2 {
		if err := execStatement(ctx, conn, st); err != nil {
			t.Fatal(err)
		}
	}
	if n := queryInt(t, conn, "SELECT count() FROM system.columns WHERE database = '"+db+"' AND table = 'consents' AND name = 'extra_col'"); n != 1 {
		t.Fatalf("extra_col listed %d times", n)
	}
}
