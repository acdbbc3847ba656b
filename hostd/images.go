package hostd

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/meshhq/hq"
)

// imagesFile is, in the state dir, the images hostd created a container or a job from: the
// only images it ever removes.
const imagesFile = "images.json"

// imageGCEvery is how often, at most, hostd looks for images to remove: a look lists every
// container of the engine, which a reconcile that changes nothing must not pay.
const imageGCEvery = time.Hour

// imageUse is one image hostd brought, by its pinned reference.
type imageUse struct {
	// ID is the engine's id of the image when hostd last created a container from it.
	ID string `json:"id,omitempty"`
	// LastUsedMS is when a declared container or job last used it (unix milliseconds): when
	// hostd created one from it, or when an image collection found it declared or in use.
	LastUsedMS int64 `json:"last_used_ms"`
}

// imageBook is images.json.
type imageBook struct {
	Images map[string]*imageUse `json:"images"`
}

// loadImages reads the images hostd brought; a file it cannot read is logged and taken as
// empty, which only means that no image it names is ever removed.
func (e *Engine) loadImages() {
	var b imageBook
	if _, err := readJSON(filepath.Join(e.cfg.StateDir, imagesFile), &b); err != nil {
		e.log.Warn("the images hostd brought are unreadable: none of them will be removed", "err", err)
		b.Images = nil
	}
	if b.Images == nil {
		b.Images = map[string]*imageUse{}
	}
	e.images = b.Images
}

func (e *Engine) saveImages() {
	if err := writeJSONAtomic(filepath.Join(e.cfg.StateDir, imagesFile), imageBook{Images: e.images}); err != nil {
		e.log.Warn("saving the images hostd brought", "err", err)
	}
}

// imageUsed records that hostd created a container or a job from image (its pinned
// reference), whose id is id, now.
func (e *Engine) imageUsed(image, id string) {
	now := e.cfg.Now().UnixMilli()
	if u := e.images[image]; u != nil && u.ID == id && u.LastUsedMS == now {
		return
	}
	e.images[image] = &imageUse{ID: id, LastUsedMS: now}
	e.saveImages()
}

// ImagesRemoved counts the images this engine removed since it started.
func (e *Engine) ImagesRemoved() int { return e.imagesRemoved }

// collectImages removes the images hostd brought that no declared container or job of d has
// used for ImageGCAfter, at the first reconcile and then at most once an hour. An image is
// kept while d declares it, for a container of a module not taken too, and while any container
// of the engine, hostd's or another's, was created from it: one kept aside, one another hostd
// runs. An image hostd did not bring is never looked at.
func (e *Engine) collectImages(ctx context.Context, d *hq.Declaration) {
	after, now := e.cfg.ImageGCAfter, e.cfg.Now()
	if after <= 0 || e.cfg.Masterless || len(e.images) == 0 || e.ctrs.cli.path == "" ||
		!e.lastImageGC.IsZero() && now.Sub(e.lastImageGC) < imageGCEvery {
		return
	}
	e.lastImageGC = now
	inUse := map[string]bool{}
	for _, m := range d.Modules {
		for _, r := range m.Resources {
			if r.Kind == hq.KindContainer || r.Kind == hq.KindJob {
				inUse[r.Image] = true
			}
		}
	}
	cts, err := e.ctrs.cli.all(ctx)
	if err != nil {
		e.log.Warn("not removing unused images: the containers could not be listed", "err", err)
		return
	}
	for _, ct := range cts {
		inUse[ct.Image] = true
		if ct.ImageID != "" {
			inUse[ct.ImageID] = true
		}
	}
	changed := false
	for _, image := range slices.Sorted(maps.Keys(e.images)) {
		u := e.images[image]
		if inUse[image] || u.ID != "" && inUse[u.ID] {
			u.LastUsedMS, changed = now.UnixMilli(), true
			continue
		}
		last := time.UnixMilli(u.LastUsedMS)
		if now.Sub(last) < after {
			continue
		}
		// By its pinned reference, never forced: an image another name also holds keeps that
		// name, and one a container uses after all stays.
		_, err := e.ctrs.cli.run(ctx, time.Minute, "rmi", image)
		if err != nil && !imageGone(err) {
			e.log.Warn("removing an unused image; the next look tries again", "image", image, "err", err)
			continue
		}
		delete(e.images, image)
		changed = true
		if err == nil {
			e.imagesRemoved++
			e.log.Info(fmt.Sprintf("removed an image no declared container has used for %s", after),
				"image", image, "last_used", hq.FormatTime(last))
		}
	}
	if changed {
		e.saveImages()
	}
}

// imageGone reports whether the CLI failed for an image that is not in the store: someone
// removed it already.
func imageGone(err error) bool {
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "image not known") || strings.Contains(msg, "no such image")
}
