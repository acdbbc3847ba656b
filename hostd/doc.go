// Package hostd is the host daemon: it fetches its node's declaration from the controller,
// verifies and fences it, applies it to the machine under a root, and reports every resource's
// outcome after every reconcile. It knows the controller only through HTTP.
//
// Apply is split per resource into check, stage, commit and undo steps (see step in step.go)
// so that a group of resources can be staged together and committed or rolled back as one
// (group.go), with a journal that carries the rollback across a crash (journal.go).
package hostd
