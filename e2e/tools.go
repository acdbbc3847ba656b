//go:build tools

// The provider TestMain builds lives under testdata, which go mod tidy does not read; this
// import, never built (no build sets the tag, and tidy reads every tag), keeps its module in
// go.mod.
package e2e

import _ "github.com/zitadel/oidc/v3/pkg/op"
