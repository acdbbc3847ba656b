# sqlc runs pinned, never as a module dependency, so its own dependencies stay out of go.mod.
SQLC = CGO_ENABLED=0 go run github.com/sqlc-dev/sqlc/cmd/sqlc@v1.31.1

.PHONY: generate check-generated test demo

generate:
	$(SQLC) generate

# check-generated fails when db/ does not match what queries/ and migrations/ generate.
# sqlc diff misses a generated file whose query file was deleted, so regenerate from scratch.
check-generated:
	rm -f db/*_sqlc.go db/sqlc_db.go db/sqlc_models.go
	$(SQLC) generate
	@test -z "$$(git status --porcelain -- db/)" || { git status --porcelain -- db/; echo "db/ drifts from queries/ and migrations/: run make generate"; exit 1; }

test:
	go test ./...

demo:
	go run ./cmd/hq demo
