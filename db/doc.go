// Package db is the controller's store: one database — a SQLite file, or PostgreSQL shared by
// several controllers — whose tables and triggers are the resource lifecycle, and the
// transactions that move it. It knows no HTTP; the API and the status pages are two faces of
// it. It starts no goroutine of its own: its background work is Workers, run by its owner.
//
// Errors are the coded errors of package hq (hq.Error), so every face answers them alike:
//   - invalid: a name, module or report that could not be right (with per-field details);
//   - not_found: no such node (a deleted one says so, and when), module, resource or revision;
//   - conflict: If-Match did not hold (with the node's generation), a path another module
//     declares on the node, a retry of what is not failed or stuck, a name already registered;
//   - unavailable: the database's disk is full, so nothing was written (see Trouble).
//
// Any other error is the database failing and is not meant for a client. Methods say which of
// these they return when it is not plain from their names.
package db
