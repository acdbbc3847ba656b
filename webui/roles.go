package webui

import (
	"fmt"
	"strings"

	"github.com/meshhq/hq"
)

// RoleMap maps the values of a provider's role claim (groups, usually) to hq's roles, as
// HQ_OIDC_ROLES spells it: "hq-admins=admin,hq-deployers=deployer,*=viewer". "*" is the role
// of anyone the provider vouches for whose values match nothing; without it they are refused.
type RoleMap struct {
	roles    map[string]hq.Role
	fallback hq.Role
}

// ParseRoles reads a mapping, refusing anything it cannot read whole: an unknown role, an
// empty value, a value mapped twice. A mapping with no entry is refused too, as it would
// let nobody in.
func ParseRoles(s string) (RoleMap, error) {
	m := RoleMap{roles: map[string]hq.Role{}}
	for _, entry := range strings.Split(s, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		value, name, ok := strings.Cut(entry, "=")
		value, role := strings.TrimSpace(value), hq.Role(strings.TrimSpace(name))
		switch {
		case !ok || value == "":
			return RoleMap{}, fmt.Errorf("%q is not VALUE=ROLE", entry)
		case !role.Valid():
			return RoleMap{}, fmt.Errorf("%q: the role must be admin, deployer or viewer, not %q", entry, role)
		case value == "*" && m.fallback != "", m.roles[value] != "":
			return RoleMap{}, fmt.Errorf("%q is mapped twice", value)
		case value == "*":
			m.fallback = role
		default:
			m.roles[value] = role
		}
	}
	if len(m.roles) == 0 && m.fallback == "" {
		return RoleMap{}, fmt.Errorf("no VALUE=ROLE entries (e.g. hq-admins=admin,*=viewer)")
	}
	return m, nil
}

// Role is the strongest role any of values maps to, else the fallback; "" refuses.
func (m RoleMap) Role(values []string) hq.Role {
	var best hq.Role
	for _, v := range values {
		if r := m.roles[v]; r != "" && (best == "" || r.AtLeast(best)) {
			best = r
		}
	}
	if best == "" {
		return m.fallback
	}
	return best
}
