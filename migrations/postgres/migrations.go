// Package postgres holds the PostgreSQL schema as goose SQL files: the same tables, columns and
// views as the SQLite migrations in the parent directory, written for PostgreSQL. sqlc reads
// these files for the PostgreSQL engine's queries.
package postgres

import "embed"

// FS holds every migration; its root is this directory.
//
//go:embed *.sql
var FS embed.FS
