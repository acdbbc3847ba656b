package hostd

import (
	"io/fs"
	"syscall"
)

// fingerprint is what stat says about a file. The change time cannot be set by a writer, so
// an equal fingerprint means the file was not written since hostd last looked at it.
type fingerprint struct {
	Ino   uint64 `json:"ino"`
	Size  int64  `json:"size"`
	Mode  uint32 `json:"mode"`
	Mtime int64  `json:"mtime_ns"`
	Ctime int64  `json:"ctime_ns"`
}

func fingerprintOf(fi fs.FileInfo) *fingerprint {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	return &fingerprint{
		Ino:   st.Ino,
		Size:  st.Size,
		Mode:  st.Mode,
		Mtime: st.Mtim.Nano(),
		Ctime: st.Ctim.Nano(),
	}
}

func (f *fingerprint) equal(g *fingerprint) bool {
	return f != nil && g != nil && *f == *g
}
