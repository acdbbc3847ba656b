# sqlc runs pinned, never as a module dependency, so its own dependencies stay out of go.mod.
SQLC = CGO_ENABLED=0 go run github.com/sqlc-dev/sqlc/cmd/sqlc@v1.31.1

.PHONY: generate check-generated test demo

generate:
	$(SQLC) generate

# check-generated fails when the generated packages do not match what queries/ and migrations/
# generate, for either engine. sqlc diff misses a generated file whose query file was deleted,
# so regenerate from scratch.
GENERATED = db/sqlite/internal/sqlitesqlc/ db/postgres/internal/pgsqlc/
check-generated:
	rm -f $(addsuffix *.go,$(GENERATED))
	$(SQLC) generate
	@test -z "$$(git status --porcelain -- $(GENERATED))" || { git status --porcelain -- $(GENERATED); echo "generated code drifts from queries/ and migrations/: run make generate"; exit 1; }

test:
	go test -race -timeout 20m ./...

demo:
	go run ./cmd/hq demo
