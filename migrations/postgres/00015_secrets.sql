-- +goose Up
-- secrets: one row per secret; version is its newest. template_key is how a template names it
-- ({{.Secrets.app_db}} for app/db), unique so that no two secrets share a key.
CREATE TABLE secrets (
    name         TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    template_key TEXT COLLATE "C" NOT NULL UNIQUE,
    version      BIGINT  NOT NULL,
    created_at   TEXT COLLATE "C" NOT NULL,
    updated_at   TEXT COLLATE "C" NOT NULL
);

-- secret_versions: every value a secret was given, kept as ciphertext alone: age, armored,
-- encrypted to the controller's key in HQ_SECRETS_KEY_FILE (recipient is that key's public
-- half, so a rekey knows what it has done). digest is the value's sha256.
CREATE TABLE secret_versions (
    name       TEXT COLLATE "C" NOT NULL REFERENCES secrets (name) ON DELETE CASCADE,
    version    BIGINT  NOT NULL,
    digest     TEXT COLLATE "C" NOT NULL,
    ciphertext TEXT COLLATE "C" NOT NULL,
    recipient  TEXT COLLATE "C" NOT NULL,
    created_at TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (name, version)
);
CREATE INDEX secret_versions_by_recipient ON secret_versions (recipient);

-- module_revision_secrets: the version of each secret a revision pins (a resource's
-- secret_pins, gathered): what a new version moves, and what a delete must not take away.
CREATE TABLE module_revision_secrets (
    module   TEXT COLLATE "C" NOT NULL,
    revision BIGINT  NOT NULL,
    name     TEXT COLLATE "C" NOT NULL,
    version  BIGINT  NOT NULL,
    PRIMARY KEY (module, revision, name),
    FOREIGN KEY (module, revision) REFERENCES module_revisions (module, revision) ON DELETE CASCADE
);
CREATE INDEX module_revision_secrets_by_name ON module_revision_secrets (name, version);

-- node_secret_keys: the public half of each node's own age key, which its hostd registers;
-- the values of its declaration are sealed to it.
CREATE TABLE node_secret_keys (
    node          TEXT COLLATE "C" NOT NULL PRIMARY KEY REFERENCES nodes (name) ON DELETE CASCADE,
    public_key    TEXT COLLATE "C" NOT NULL,
    registered_at TEXT COLLATE "C" NOT NULL
);

-- secret_seals: a secret version sealed to a node's key, kept so that composing the node's
-- declaration again seals nothing again and its digest stays the same (age is randomized).
CREATE TABLE secret_seals (
    node     TEXT COLLATE "C" NOT NULL REFERENCES nodes (name) ON DELETE CASCADE,
    name     TEXT COLLATE "C" NOT NULL,
    version  BIGINT  NOT NULL,
    node_key TEXT COLLATE "C" NOT NULL,
    sealed   TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (node, node_key, name, version),
    FOREIGN KEY (name, version) REFERENCES secret_versions (name, version) ON DELETE CASCADE
);
CREATE INDEX secret_seals_by_version ON secret_seals (name, version);

-- +goose Down
DROP TABLE secret_seals;
DROP TABLE node_secret_keys;
DROP TABLE module_revision_secrets;
DROP TABLE secret_versions;
DROP TABLE secrets;
