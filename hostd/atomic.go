package hostd

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// writeFileAtomic replaces name with data so that a crash leaves either the old or the new
// file, never a torn one: temp file beside it, fsync, rename, fsync the directory.
func writeFileAtomic(name string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(name)
	f, err := os.CreateTemp(dir, ".hostd-*-"+filepath.Base(name))
	if err != nil {
		return err
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Chmod(perm); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, name); err != nil {
		os.Remove(tmp)
		return err
	}
	return fsyncPath(dir)
}

func writeJSONAtomic(name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(name, append(b, '\n'), 0o600)
}

// readJSON decodes name into v; it reports false, nil when the file does not exist.
func readJSON(name string, v any) (bool, error) {
	b, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, &os.PathError{Op: "decode", Path: name, Err: err}
	}
	return true, nil
}
