// Package pgtest gives tests and benchmarks a fresh PostgreSQL database of
// their own on a server they are pointed at, and drops it afterwards.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Env names the variable holding the server URL for tests.
const Env = "ANVIL_TEST_POSTGRES"

// Available reports whether PostgreSQL tests can run.
func Available() bool { return os.Getenv(Env) != "" }

// Create makes a new empty database on the server at base (a URL whose
// role may CREATE DATABASE) and returns its URL and a function that drops it.
func Create(ctx context.Context, base string) (string, func() error, error) {
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "anvil_t_" + hex.EncodeToString(b[:])
	u, err := url.Parse(base)
	if err != nil {
		return "", nil, fmt.Errorf("postgres URL: %w", err)
	}
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return "", nil, fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", nil, fmt.Errorf("create database: %w", err)
	}
	drop := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, base)
		if err != nil {
			return fmt.Errorf("drop database %s: %w", name, err)
		}
		defer c.Close(ctx)
		_, err = c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		return err
	}
	u.Path = "/" + name
	return u.String(), drop, nil
}

// URL creates a database for one test and drops it when the test ends;
// without ANVIL_TEST_POSTGRES the test is skipped.
func URL(t testing.TB) string {
	t.Helper()
	base := os.Getenv(Env)
	if base == "" {
		t.Skip(Env + " is not set; PostgreSQL tests skipped (scripts/test.sh sets it)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	u, drop, err := Create(ctx, base)
	if err != nil {
		t.Fatalf("%s: %v", Env, err)
	}
	t.Cleanup(func() {
		if err := drop(); err != nil {
			t.Logf("%v", err)
		}
	})
	return u
}
