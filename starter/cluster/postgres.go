package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// schemaDir is where make cluster-tools copies the server module's SQL schemas
// (go.temporal.io/server@v1.29.1/schema) next to the binaries.
const schemaDir = "temporal-schema"

// initPostgres creates the private PostgreSQL's data directory (--own-postgres) once: initdb
// as the postgres account, which owns the directory (PostgreSQL refuses to run as root).
func (c *cluster) initPostgres(ctx context.Context) error {
	if _, err := os.Stat(filepath.Join(c.pgData(), "PG_VERSION")); err == nil {
		return nil
	}
	if err := os.MkdirAll(c.pgData(), 0o700); err != nil {
		return err
	}
	cred, err := credential("postgres")
	if err != nil {
		return fmt.Errorf("--own-postgres needs the postgres account (apt-get install postgresql): %w", err)
	}
	for _, d := range []string{c.pgSocketDir(), c.pgData()} {
		if err := os.Chown(d, int(cred.Uid), int(cred.Gid)); err != nil {
			return err
		}
	}
	fmt.Fprintln(os.Stderr, "cluster: initdb", c.pgData())
	cmd := exec.CommandContext(ctx, pgBinary("initdb"), "-D", c.pgData(), "-U", "postgres", "-A", "trust", "-E", "UTF8")
	cmd.SysProcAttr = sysProcAs(cred)
	cmd.Dir = c.pgSocketDir()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %w\n%s", err, out)
	}
	return nil
}

// psql runs one SQL statement against db as postgres and returns its unaligned output.
func (c *cluster) psql(ctx context.Context, db, sql string) (string, error) {
	host, port, _ := net.SplitHostPort(c.pgAddr())
	out, err := exec.CommandContext(ctx, "psql", "-h", host, "-p", port, "-U", "postgres", "-d", db,
		"-v", "ON_ERROR_STOP=1", "-tAc", sql).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("psql %s: %w: %s", db, err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

func (c *cluster) postgresReady(ctx context.Context) error {
	_, err := c.psql(ctx, "postgres", "select 1")
	return err
}

// ensureSchemas creates the persistence and visibility databases and brings their schemas to
// the server's version with the server's own sql tool: create-database and setup-schema the
// first time, update-schema every time (it applies only the versions the database lacks).
func (c *cluster) ensureSchemas(ctx context.Context) error {
	for db, schema := range map[string]string{c.dbs().Temporal: "temporal", c.dbs().Visibility: "visibility"} {
		if err := c.ensureSchema(ctx, db, schema); err != nil {
			return err
		}
	}
	return nil
}

func (c *cluster) ensureSchema(ctx context.Context, db, schema string) error {
	exists, err := c.psql(ctx, "postgres", "select count(*) from pg_database where datname = '"+db+"'")
	if err != nil {
		return err
	}
	if exists != "0" && c.newState && !c.opts.OwnPostgres {
		// Its histories are encrypted with a key this directory no longer has, and its
		// schedules and namespace were set up by a cluster that is gone: refuse rather than run
		// a new cluster on an old one's state (e.g. after `make clean`).
		return fmt.Errorf("database %s holds an earlier cluster whose state directory %s is gone: run `make cluster-reset` to drop it and start clean", db, c.dir)
	}
	if exists == "0" {
		if _, err := c.sqlTool(ctx, db, "create-database"); err != nil {
			return err
		}
	}
	if _, err := c.psql(ctx, db, "select curr_version from schema_version"); err != nil {
		if _, err := c.sqlTool(ctx, db, "setup-schema", "--version", "0.0"); err != nil {
			return err
		}
	}
	dir := filepath.Join(c.bin, schemaDir, "postgresql", "v12", schema, "versioned")
	if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("the server's SQL schemas are missing (%s): run make cluster-tools", dir)
	}
	_, err = c.sqlTool(ctx, db, "update-schema", "--schema-dir", dir)
	return err
}

// sqlTool runs temporal-sql-tool against db.
func (c *cluster) sqlTool(ctx context.Context, db string, args ...string) ([]byte, error) {
	host, port, _ := net.SplitHostPort(c.pgAddr())
	argv := append([]string{filepath.Join(c.bin, "temporal-sql-tool"), "--plugin", "postgres12", "--endpoint", host,
		"--port", port, "--user", "postgres", "--database", db}, args...)
	return c.run(ctx, environ(), argv...)
}

// dropDatabases drops the cluster's databases on the machine's PostgreSQL (reset; a private
// PostgreSQL goes with CLUSTER_DIR).
func (c *cluster) dropDatabases(ctx context.Context) error {
	var errs []error
	for _, db := range []string{c.dbs().Temporal, c.dbs().Visibility} {
		if _, err := c.psql(ctx, "postgres", "drop database if exists "+db+" with (force)"); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
