# sqlc runs pinned, never as a module dependency, so its own dependencies stay out of go.mod.
SQLC = CGO_ENABLED=0 go run github.com/sqlc-dev/sqlc/cmd/sqlc@v1.31.1

.PHONY: generate check-generated test demo

generate:
	$(SQLC) generate

# check-generated fails when db/internal/dbsqlc/ does not match what queries/ and migrations/ generate.
# sqlc diff misses a generated file whose query file was deleted, so regenerate from scratch.
check-generated:
	rm -f db/internal/dbsqlc/*.go
	$(SQLC) generate
	@test -z "$$(git status --porcelain -- db/internal/dbsqlc/)" || { git status --porcelain -- db/internal/dbsqlc/; echo "db/internal/dbsqlc/ drifts from queries/ and migrations/: run make generate"; exit 1; }

test:
	go test -race ./...

demo:
	go run ./cmd/hq demo
