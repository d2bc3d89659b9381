package clickhouse

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// DefaultDatabase is the database the tables live in (API.md section 3).
const DefaultDatabase = "idstream"

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migration is one embedded, versioned schema change: migrations/<version>_<name>.sql.
type Migration struct {
	Version uint32
	Name    string
	SQL     string // statements separated by ";", with ${db} for the database name
}

// Migrations returns the embedded migrations in version order. It returns an error only if
// a file is misnamed or two files share a version (the package's tests rule that out).
func Migrations() ([]Migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	var out []Migration
	seen := map[uint32]string{}
	for _, e := range entries {
		m := migrationName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("migration file %q: want <version>_<name>.sql", e.Name())
		}
		v, err := strconv.ParseUint(m[1], 10, 32)
		if err != nil || v == 0 {
			return nil, fmt.Errorf("migration file %q: bad version", e.Name())
		}
		if other, dup := seen[uint32(v)]; dup {
			return nil, fmt.Errorf("migrations %q and %q share version %d", other, e.Name(), v)
		}
		seen[uint32(v)] = e.Name()
		b, err := migrationFiles.ReadFile(path.Join("migrations", e.Name()))
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", e.Name(), err)
		}
		out = append(out, Migration{Version: uint32(v), Name: m[2], SQL: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

var (
	migrationName = regexp.MustCompile(`^(\d+)_([a-z0-9_]+)\.sql$`)
	databaseName  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// Statements splits a migration's SQL into statements for database db: "--" comment lines
// are dropped, statements are separated by ";" (migrations must not put ";" inside string
// literals) and ${db} is replaced by db.
func (m Migration) Statements(db string) []string {
	var b strings.Builder
	for _, line := range strings.Split(m.SQL, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "--") {
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	var out []string
	for _, st := range strings.Split(b.String(), ";") {
		if st = strings.TrimSpace(st); st != "" {
			out = append(out, strings.ReplaceAll(st, "${db}", db))
		}
	}
	return out
}

// MigrateOption configures Migrate.
type MigrateOption func(*migrateConfig)

type migrateConfig struct{ db string }

// MigrateDatabase sets the database to migrate (default DefaultDatabase; tests use their own).
func MigrateDatabase(db string) MigrateOption { return func(c *migrateConfig) { c.db = db } }

// Migrate creates the database and the migrations table if missing, then applies, in
// version order, every embedded migration not yet recorded in <db>.schema_migrations,
// recording each once its statements succeeded. It is idempotent: running it again applies
// nothing, and a migration interrupted before it was recorded runs again safely (every
// statement is written to be repeatable). Valid on ClickHouse 18.16 and current ClickHouse.
func Migrate(ctx context.Context, conn driver.Conn, opts ...MigrateOption) error {
	cfg := migrateConfig{db: DefaultDatabase}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if !databaseName.MatchString(cfg.db) {
		return fmt.Errorf("migrate: invalid database name %q", cfg.db)
	}
	migs, err := Migrations()
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for _, st := range []string{
		"CREATE DATABASE IF NOT EXISTS " + cfg.db,
		"CREATE TABLE IF NOT EXISTS " + cfg.db + ".schema_migrations (version UInt32, name String, applied_at DateTime) ENGINE = ReplacingMergeTree() ORDER BY version",
	} {
		if err := conn.Exec(ctx, st); err != nil {
			return fmt.Errorf("migrate %s: bootstrap: %w", cfg.db, err)
		}
	}
	applied, err := appliedVersions(ctx, conn, cfg.db)
	if err != nil {
		return err
	}
	for _, m := range migs {
		if applied[m.Version] {
			continue
		}
		for i, st := range m.Statements(cfg.db) {
			if err := execStatement(ctx, conn, st); err != nil {
				return fmt.Errorf("migrate %s: %04d_%s statement %d: %w", cfg.db, m.Version, m.Name, i+1, err)
			}
		}
		batch, err := conn.PrepareBatch(ctx, "INSERT INTO "+cfg.db+".schema_migrations (version, name, applied_at)")
		if err != nil {
			return fmt.Errorf("migrate %s: record %04d: %w", cfg.db, m.Version, err)
		}
		if err := batch.Append(m.Version, m.Name, time.Now().UTC()); err != nil {
			_ = batch.Abort()
			return fmt.Errorf("migrate %s: record %04d: %w", cfg.db, m.Version, err)
		}
		if err := batch.Send(); err != nil {
			return fmt.Errorf("migrate %s: record %04d: %w", cfg.db, m.Version, err)
		}
	}
	return nil
}

// addColumnIfMissing matches "ALTER TABLE <db>.<table> ADD COLUMN IF NOT EXISTS <column>
// <rest>", which ClickHouse 18.16 does not parse.
var addColumnIfMissing = regexp.MustCompile(`(?is)^ALTER\s+TABLE\s+([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*)\s+ADD\s+COLUMN\s+IF\s+NOT\s+EXISTS\s+([A-Za-z_][A-Za-z0-9_]*)\s+(.+)$`)

// execStatement runs one migration statement. An "ADD COLUMN IF NOT EXISTS" runs as a plain
// ADD COLUMN when system.columns does not list the column, and not at all when it does:
// repeatable on ClickHouse 18.16 as on current ClickHouse.
func execStatement(ctx context.Context, conn driver.Conn, st string) error {
	m := addColumnIfMissing.FindStringSubmatch(st)
	if m == nil {
		return conn.Exec(ctx, st)
	}
	var n uint64
	row := conn.QueryRow(ctx, "SELECT count() FROM system.columns WHERE database = '"+m[1]+"' AND table = '"+m[2]+"' AND name = '"+m[3]+"'")
	if err := row.Scan(&n); err != nil {
		return fmt.Errorf("look for column %s.%s.%s: %w", m[1], m[2], m[3], err)
	}
	if n > 0 {
		return nil
	}
	return conn.Exec(ctx, "ALTER TABLE "+m[1]+"."+m[2]+" ADD COLUMN "+m[3]+" "+m[4])
}

// AppliedVersions returns the migration versions recorded in db.schema_migrations.
func AppliedVersions(ctx context.Context, conn driver.Conn, db string) ([]uint32, error) {
	m, err := appliedVersions(ctx, conn, db)
	if err != nil {
		return nil, err
	}
	out := make([]uint32, 0, len(m))
	for v := range m {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

func appliedVersions(ctx context.Context, conn driver.Conn, db string) (map[uint32]bool, error) {
	rows, err := conn.Query(ctx, "SELECT DISTINCT version FROM "+db+".schema_migrations")
	if err != nil {
		return nil, fmt.Errorf("migrate %s: read applied versions: %w", db, err)
	}
	defer rows.Close()
	out := map[uint32]bool{}
	for rows.Next() {
		var v uint32
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("migrate %s: read applied versions: %w", db, err)
		}
		out[v] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("migrate %s: read applied versions: %w", db, err)
	}
	return out, nil
}
