package hq

import "time"

// ModuleView is a module and its newest revision.
type ModuleView struct {
	Name      string     `json:"name"`
	Revision  int64      `json:"revision"`
	Digest    string     `json:"digest,omitempty"`
	Resources []Resource `json:"resources,omitempty"`
	Nodes     []string   `json:"nodes"`
	UpdatedAt time.Time  `json:"updated_at"`
}
