package db

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db/driver"
	"github.com/meshhq/hq/seal"
)

// errNoSecretsKey is the error of a store asked to keep or seal a secret without the
// controller's key for secrets (Options.SecretsKey).
var errNoSecretsKey = hq.Errorf(hq.CodeUnavailable, "this controller has no secrets key (HQ_SECRETS_KEY_FILE): it can neither keep nor seal a secret")

// PutSecretResult says what a new version did: the secret as it is now, and the new
// revision of each module that uses it, which rolls the version out as any revision does.
type PutSecretResult struct {
	Secret  hq.SecretView     `json:"secret"`
	Modules map[string]int64  `json:"modules"`
	Errors  map[string]string `json:"errors,omitempty"`
}

// PutSecret stores value as a new version of the secret name, encrypted to the controller's
// key, and then makes a new revision of every module whose newest revision uses the secret,
// the same resources with the new version pinned, each in a transaction of its own. The value
// is never written, logged or returned.
func (s *Store) PutSecret(ctx context.Context, name string, value []byte) (PutSecretResult, error) {
	res := PutSecretResult{Modules: map[string]int64{}}
	switch {
	case !hq.ValidSecretName(name):
		return res, hq.SecretNameError(name)
	case len(value) == 0:
		return res, hq.Errorf(hq.CodeInvalid, "secret %s: the value is empty", name)
	case len(value) > hq.MaxSecret:
		return res, hq.Errorf(hq.CodeTooLarge, "secret %s: the value is %d bytes, more than %d", name, len(value), hq.MaxSecret)
	case s.opt.SecretsKey == nil:
		return res, errNoSecretsKey
	}
	sum := sha256.Sum256(value)
	digest := "sha256:" + hex.EncodeToString(sum[:])
	ck := s.opt.SecretsKey.Current()
	ciphertext, err := ck.Seal(value)
	if err != nil {
		return res, err
	}
	err = s.inTx(ctx, func(q driver.Queries) error {
		key := hq.SecretKey(name)
		all, err := q.SecretList(ctx)
		if err != nil {
			return err
		}
		for _, o := range all {
			if o.TemplateKey == key && o.Name != name {
				return hq.Errorf(hq.CodeConflict, "secret %s would be {{.Secrets.%s}} in a template, as secret %s is already", name, key, o.Name)
			}
		}
		now := s.now()
		version, err := q.SecretUpsert(ctx, driver.SecretUpsertParams{Name: name, TemplateKey: key, Now: now})
		if err != nil {
			return err
		}
		return q.SecretVersionInsert(ctx, driver.SecretVersionInsertParams{Name: name, Version: version, Digest: digest,
			Ciphertext: ciphertext, Recipient: ck.Public(), CreatedAt: now})
	})
	if err != nil {
		return res, err
	}
	modules, err := s.secretModules(ctx, name)
	if err != nil {
		return res, err
	}
	for _, m := range modules {
		moved, err := s.repin(ctx, m)
		if err != nil {
			if res.Errors == nil {
				res.Errors = map[string]string{}
			}
			res.Errors[m] = err.Error()
			continue
		}
		res.Modules[m] = moved.Revision
	}
	res.Secret, err = s.Secret(ctx, name)
	return res, err
}

// repin makes a new revision of module from its newest one, each secret pinned at its newest
// version; nothing when those are pinned already.
func (s *Store) repin(ctx context.Context, module string) (PutModuleResult, error) {
	v, err := s.GetModule(ctx, module)
	if err != nil {
		return PutModuleResult{}, err
	}
	return s.PutModule(ctx, module, v.Resources)
}

func (s *Store) secretModules(ctx context.Context, name string) ([]string, error) {
	var out []string
	err := s.inReadTx(ctx, func(q driver.Queries) (err error) {
		out, err = q.SecretModules(ctx, name)
		return err
	})
	return out, err
}

// Secrets lists every secret as SecretView shows it.
func (s *Store) Secrets(ctx context.Context) ([]hq.SecretView, error) {
	var out []hq.SecretView
	err := s.inReadTx(ctx, func(q driver.Queries) error {
		rows, err := q.SecretList(ctx)
		if err != nil {
			return err
		}
		out = make([]hq.SecretView, 0, len(rows))
		for _, r := range rows {
			v, err := secretView(ctx, q, r, false)
			if err != nil {
				return err
			}
			out = append(out, v)
		}
		return nil
	})
	return out, err
}

// Secret is one secret with its versions, never a value.
func (s *Store) Secret(ctx context.Context, name string) (hq.SecretView, error) {
	var v hq.SecretView
	err := s.inReadTx(ctx, func(q driver.Queries) error {
		r, err := q.SecretGet(ctx, name)
		if err != nil {
			return notFound(err, "no secret %s", name)
		}
		v, err = secretView(ctx, q, r, true)
		return err
	})
	return v, err
}

func secretView(ctx context.Context, q driver.Queries, r driver.SecretRow, versions bool) (hq.SecretView, error) {
	v := hq.SecretView{Name: r.Name, Version: r.Version, UpdatedAt: hq.ParseTime(r.UpdatedAt)}
	cur, err := q.SecretVersionGet(ctx, driver.SecretVersionGetParams{Name: r.Name, Version: r.Version})
	if err != nil {
		return v, err
	}
	v.Digest = hq.ShortDigest(cur.Digest)
	if v.Modules, err = q.SecretModules(ctx, r.Name); err != nil {
		return v, err
	}
	if v.Nodes, err = q.SecretNodeCount(ctx, r.Name); err != nil {
		return v, err
	}
	if !versions {
		return v, nil
	}
	rows, err := q.SecretVersionList(ctx, r.Name)
	for _, x := range rows {
		v.Versions = append(v.Versions, hq.SecretVersionView{Version: x.Version, Digest: hq.ShortDigest(x.Digest), CreatedAt: hq.ParseTime(x.CreatedAt)})
	}
	return v, err
}

// DeleteSecret deletes a secret and every version of it, unless a module's newest revision
// or a node's pinned one uses it (conflict).
func (s *Store) DeleteSecret(ctx context.Context, name string) error {
	return s.inTx(ctx, func(q driver.Queries) error {
		if _, err := q.SecretGet(ctx, name); err != nil {
			return notFound(err, "no secret %s", name)
		}
		mods, err := q.SecretModules(ctx, name)
		if err != nil {
			return err
		}
		nodes, err := q.SecretNodeCount(ctx, name)
		if err != nil {
			return err
		}
		if len(mods) > 0 || nodes > 0 {
			return hq.Errorf(hq.CodeConflict, "secret %s is in use: by modules %v, on %d node(s); remove it from them first", name, mods, nodes)
		}
		return q.SecretDelete(ctx, name)
	})
}

// SetNodeSecretsKey registers the public half of the node's own key, to which its
// declaration's secrets are sealed. A new key moves the node's generation, so its declaration
// is composed again with the values sealed to it, and drops what was sealed to the old one;
// a node none of whose revisions uses a secret keeps its generation, as its declaration does.
func (s *Store) SetNodeSecretsKey(ctx context.Context, node, public string) (changed bool, err error) {
	if err := seal.ValidPublic(public); err != nil {
		return false, hq.Errorf(hq.CodeInvalid, "not an age X25519 public key (age1…)")
	}
	moved := false
	err = s.inTx(ctx, func(q driver.Queries) error {
		if _, err := q.NodeGet(ctx, node); err != nil {
			return notFound(err, "no node %s", node)
		}
		n, err := q.NodeSecretKeySet(ctx, driver.NodeSecretKeySetParams{Node: node, PublicKey: public, Now: s.now()})
		if err != nil || n == 0 {
			return err
		}
		changed = true
		if err := q.SecretSealDeleteOtherKeys(ctx, driver.SecretSealDeleteOtherKeysParams{Node: node, NodeKey: public}); err != nil {
			return err
		}
		// A declaration that uses no secret is the same with any key: its generation stays.
		used, err := q.NodeSecretUse(ctx, node)
		if err != nil || used == 0 {
			return err
		}
		moved = true
		_, err = q.NodeBumpGeneration(ctx, node)
		return err
	})
	if moved {
		s.bells.ring(node)
	}
	return changed, err
}

// NodeSecretsKey is the node's registered public key, "" when it has none.
func (s *Store) NodeSecretsKey(ctx context.Context, node string) (string, error) {
	var key string
	err := s.inReadTx(ctx, func(q driver.Queries) error {
		k, err := q.NodeSecretKeyGet(ctx, node)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		key = k
		return err
	})
	return key, err
}

// pinSecrets pins, in each resource that uses secrets, the newest version of each, and gives a
// file that holds one mode 0600 unless it declares its own. A secret that does not exist, or a
// template key no secret has, refuses the upload.
func pinSecrets(ctx context.Context, q driver.Queries, resources []hq.Resource) ([]hq.Resource, error) {
	out := slices.Clone(resources)
	var byKey map[string]driver.SecretRow
	var errs []hq.FieldError
	for i := range out {
		r := &out[i]
		r.SecretPins = nil
		if !r.UsesSecrets() {
			continue
		}
		if byKey == nil {
			all, err := q.SecretList(ctx)
			if err != nil {
				return nil, err
			}
			byKey = make(map[string]driver.SecretRow, len(all))
			planned, _ := ctx.Value(planPinsKey{}).(secretVersion)
			for _, x := range all {
				if x.Name == planned.name {
					x.Version = planned.version
				}
				byKey["key:"+x.TemplateKey], byKey["name:"+x.Name] = x, x
			}
		}
		pins := map[string]int64{}
		for _, n := range r.SecretNamesNamed() {
			if x, ok := byKey["name:"+n]; ok {
				pins[n] = x.Version
			} else {
				errs = append(errs, hq.FieldError{Field: fmt.Sprintf("resources[%d]", i), Message: fmt.Sprintf("no secret %s: put it first (hq secret put %s)", n, n)})
			}
		}
		for _, k := range r.SecretKeys() {
			if x, ok := byKey["key:"+k]; ok {
				pins[x.Name] = x.Version
			} else {
				errs = append(errs, hq.FieldError{Field: fmt.Sprintf("resources[%d].content", i), Message: fmt.Sprintf("no secret is {{.Secrets.%s}}: put it first", k)})
			}
		}
		r.SecretPins = pins
		if r.Kind == hq.KindFile && r.Mode == "" {
			r.Mode = "0600"
		}
	}
	if len(errs) > 0 {
		return nil, &hq.Error{Code: hq.CodeInvalid, Message: fmt.Sprintf("%d secret(s) the module uses do not exist", len(errs)), Details: errs}
	}
	return out, nil
}

// writeRevisionSecrets records the versions a revision pins, gathered from its resources.
func writeRevisionSecrets(ctx context.Context, q driver.Queries, module string, revision int64, resources []hq.Resource) error {
	pins := map[string]int64{}
	for _, r := range resources {
		maps.Copy(pins, r.SecretPins)
	}
	for _, n := range slices.Sorted(maps.Keys(pins)) {
		if err := q.ModuleRevisionSecretInsert(ctx, driver.ModuleRevisionSecretInsertParams{Module: module, Revision: revision, Name: n, Version: pins[n]}); err != nil {
			return err
		}
	}
	return nil
}

// secretVersion is one version of a secret that a declaration's resources pin.
type secretVersion struct {
	name    string
	version int64
}

// secretPinsOf are the versions the declaration's resources pin.
func secretPinsOf(modules []hq.DeclaredModule) map[secretVersion]bool {
	var pins map[secretVersion]bool
	for _, m := range modules {
		for _, r := range m.Resources {
			for n, v := range r.SecretPins {
				if pins == nil {
					pins = map[secretVersion]bool{}
				}
				pins[secretVersion{n, v}] = true
			}
		}
	}
	return pins
}

// sealFor returns the values the pins name, each sealed to the node's key, by SecretRef: the
// seals kept in secret_seals, and for each version not sealed to this key yet, a new seal,
// kept before it is used, so that every compose of one declaration has one digest. nil when
// the node has registered no key: hostd then holds what uses a secret, and nothing is sent.
func (s *Store) sealFor(ctx context.Context, node string, pins map[secretVersion]bool) (map[string]string, error) {
	if len(pins) == 0 {
		return nil, nil
	}
	var key string
	sealed := map[string]string{}
	read := func(q driver.Queries) error {
		k, err := q.NodeSecretKeyGet(ctx, node)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		key = k
		rows, err := q.SecretSealListByNode(ctx, driver.SecretSealListByNodeParams{Node: node, NodeKey: k})
		for _, r := range rows {
			sealed[hq.SecretRef(r.Name, r.Version)] = r.Sealed
		}
		return err
	}
	if err := s.inReadTx(ctx, read); err != nil || key == "" {
		return nil, err
	}
	var missing []driver.SecretSealInsertParams
	for p := range pins {
		if _, ok := sealed[hq.SecretRef(p.name, p.version)]; !ok {
			missing = append(missing, driver.SecretSealInsertParams{Node: node, Name: p.name, Version: p.version, NodeKey: key})
		}
	}
	if len(missing) > 0 {
		if err := s.sealMissing(ctx, missing); err != nil {
			return nil, err
		}
		clear(sealed)
		if err := s.inReadTx(ctx, read); err != nil {
			return nil, err
		}
	}
	out := make(map[string]string, len(pins))
	for p := range pins {
		ref := hq.SecretRef(p.name, p.version)
		c, ok := sealed[ref]
		if !ok {
			return nil, fmt.Errorf("secret %s v%d was not sealed to node %s", p.name, p.version, node)
		}
		out[ref] = c
	}
	return out, nil
}

// sealMissing opens each version with the controller's key and seals it to the node's, in
// memory, and keeps the seals; a seal another compose kept first is the one kept.
func (s *Store) sealMissing(ctx context.Context, missing []driver.SecretSealInsertParams) error {
	if s.opt.SecretsKey == nil {
		return errNoSecretsKey
	}
	err := s.inReadTx(ctx, func(q driver.Queries) error {
		for i, m := range missing {
			v, err := q.SecretVersionGet(ctx, driver.SecretVersionGetParams{Name: m.Name, Version: m.Version})
			if err != nil {
				return notFound(err, "secret %s v%d no longer exists", m.Name, m.Version)
			}
			value, err := s.opt.SecretsKey.Open(v.Recipient, v.Ciphertext)
			if err != nil {
				return hq.Errorf(hq.CodeUnavailable, "secret %s v%d does not open: %v", m.Name, m.Version, err)
			}
			missing[i].Sealed, err = seal.To(m.NodeKey, value)
			clear(value)
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return s.inTx(ctx, func(q driver.Queries) error {
		for _, m := range missing {
			if err := q.SecretSealInsert(ctx, m); err != nil {
				return err
			}
		}
		return nil
	})
}

// SecretPlan is what a new version of a secret would move: the plan of each module that uses
// it, as an upload of its resources with the new version pinned would be.
type SecretPlan struct {
	Secret  string          `json:"secret"`
	Version int64           `json:"version"`
	Modules []hq.ModulePlan `json:"modules"`
}

// planPinsKey carries, in a plan's context, the version a secret would be pinned at.
type planPinsKey struct{}

// PlanSecret says what PutSecret of name would move, writing nothing.
func (s *Store) PlanSecret(ctx context.Context, name string) (SecretPlan, error) {
	plan := SecretPlan{Secret: name, Version: 1, Modules: []hq.ModulePlan{}}
	if !hq.ValidSecretName(name) {
		return plan, hq.SecretNameError(name)
	}
	cur, err := s.Secret(ctx, name)
	if hq.ErrorCode(err) == hq.CodeNotFound {
		return plan, nil
	}
	if err != nil {
		return plan, err
	}
	plan.Version = cur.Version + 1
	ctx = context.WithValue(ctx, planPinsKey{}, secretVersion{name, plan.Version})
	for _, m := range cur.Modules {
		v, err := s.GetModule(ctx, m)
		if err != nil {
			return plan, err
		}
		p, err := s.PlanModule(ctx, m, v.Resources)
		if err != nil {
			return plan, err
		}
		plan.Modules = append(plan.Modules, p)
	}
	return plan, nil
}
