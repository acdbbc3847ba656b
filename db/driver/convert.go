package driver

import "encoding/json"

// Each converts the rows of a query, or passes its error on.
func Each[S, D any](rows []S, err error, f func(S) D) ([]D, error) {
	if err != nil {
		return nil, err
	}
	out := make([]D, len(rows))
	for i, r := range rows {
		out[i] = f(r)
	}
	return out, nil
}

// JSONList is a list of names as a JSON array, [] when there are none: how both engines'
// queries take a set of names (json_each, json_array_elements_text).
func JSONList(names []string) string {
	if len(names) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(names) // a []string always marshals
	return string(b)
}

// Flag is a boolean as both engines' schemas keep it: 1 or 0 in an integer column, which a
// CHECK holds to those two.
func Flag(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
