package driver

import "context"

// SecretQueries are the statements of secrets, their versions (ciphertext alone), the nodes'
// keys and what is sealed to them.
type SecretQueries interface {
	SecretList(ctx context.Context) ([]SecretRow, error)
	SecretGet(ctx context.Context, name string) (SecretRow, error)
	SecretUpsert(ctx context.Context, arg SecretUpsertParams) (int64, error)
	SecretDelete(ctx context.Context, name string) error
	SecretVersionInsert(ctx context.Context, arg SecretVersionInsertParams) error
	SecretVersionGet(ctx context.Context, arg SecretVersionGetParams) (SecretVersion, error)
	SecretVersionList(ctx context.Context, name string) ([]SecretVersionListRow, error)
	SecretVersionListNotTo(ctx context.Context, arg SecretVersionListNotToParams) ([]SecretVersion, error)
	SecretVersionReencrypt(ctx context.Context, arg SecretVersionReencryptParams) (int64, error)
	SecretModules(ctx context.Context, name string) ([]string, error)
	SecretNodeCount(ctx context.Context, name string) (int64, error)
	NodeSecretUse(ctx context.Context, node string) (int64, error)
	ModuleRevisionSecretInsert(ctx context.Context, arg ModuleRevisionSecretInsertParams) error
	NodeSecretKeyGet(ctx context.Context, node string) (string, error)
	NodeSecretKeySet(ctx context.Context, arg NodeSecretKeySetParams) (int64, error)
	SecretSealListByNode(ctx context.Context, arg SecretSealListByNodeParams) ([]SecretSealListByNodeRow, error)
	SecretSealInsert(ctx context.Context, arg SecretSealInsertParams) error
	SecretSealDeleteOtherKeys(ctx context.Context, arg SecretSealDeleteOtherKeysParams) error
}

type SecretRow struct {
	Name        string
	TemplateKey string
	Version     int64
	UpdatedAt   string
}

type SecretUpsertParams struct {
	Name        string
	TemplateKey string
	Now         string
}

type SecretVersion struct {
	Name       string
	Version    int64
	Digest     string
	Ciphertext string
	Recipient  string
	CreatedAt  string
}

type SecretVersionInsertParams struct {
	Name       string
	Version    int64
	Digest     string
	Ciphertext string
	Recipient  string
	CreatedAt  string
}

type SecretVersionGetParams struct {
	Name    string
	Version int64
}

type SecretVersionListRow struct {
	Version   int64
	Digest    string
	CreatedAt string
}

type SecretVersionListNotToParams struct {
	Recipient string
	Max       int64
}

type SecretVersionReencryptParams struct {
	Ciphertext string
	Recipient  string
	Name       string
	Version    int64
	Was        string
}

type ModuleRevisionSecretInsertParams struct {
	Module   string
	Revision int64
	Name     string
	Version  int64
}

type NodeSecretKeySetParams struct {
	Node      string
	PublicKey string
	Now       string
}

type SecretSealListByNodeParams struct {
	Node    string
	NodeKey string
}

type SecretSealListByNodeRow struct {
	Name    string
	Version int64
	Sealed  string
}

type SecretSealInsertParams struct {
	Node    string
	Name    string
	Version int64
	NodeKey string
	Sealed  string
}

type SecretSealDeleteOtherKeysParams struct {
	Node    string
	NodeKey string
}
