package rack

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/anvilmetal/anvil/internal/boot"
	"github.com/anvilmetal/anvil/internal/images"
)

// ImageCache serves deployable images to machines as images/<sha256> on
// the boot servers (http://<rack>:5248/images/<sha256>, with Range). The
// first request for an image fetches it from the region
// (<region>/MAAS/api/2.0/images/<sha256>) into Dir, checks its SHA-256 and
// only then puts it in place; later requests are served from Dir. A
// cached file is hashed again before it is first served by this process
// and whenever its size or modification time changed since, so a file
// corrupted on disk is never served: it is dropped and fetched again.
// Every other name goes to Next.
//
// A rack in the region's process sets Local, the region's own store:
// images are served from there (verified as they arrived) and Dir is not
// used, so one process never keeps an image twice. One Local lacks is
// still asked of the region, which fetches it from a peer region into
// Local.
type ImageCache struct {
	Next   boot.Source
	Dir    string
	Local  *images.Store
	Region string // the region's base URL, "http://region:5240/MAAS/"
	// HTTP fetches from the region (http.DefaultClient when nil).
	HTTP *http.Client
	// FetchTimeout bounds one fetch (an hour when zero); machines waiting
	// for it give up with their own requests.
	FetchTimeout time.Duration
	Log          *slog.Logger

	mu       sync.Mutex
	verified map[string]stamp
	fetching map[string]*imageFetch
}

// stamp is what a verified file looked like.
type stamp struct {
	size int64
	mod  time.Time
}

type imageFetch struct {
	done chan struct{}
	err  error
}

const imagePrefix = "images/"

// Open implements boot.Source.
func (c *ImageCache) Open(ctx context.Context, name string, cl boot.Client) (boot.File, error) {
	sum, ok := strings.CutPrefix(name, imagePrefix)
	if !ok {
		return c.Next.Open(ctx, name, cl)
	}
	if !images.ValidSHA256(sum) {
		return boot.File{}, fmt.Errorf("%w: %s (images are named by their lower-case hex sha256)", boot.ErrNotFound, name)
	}
	if f, err := c.openVerified(sum); err == nil || !errors.Is(err, boot.ErrNotFound) {
		return f, err
	}
	if err := c.fetch(ctx, sum); err != nil {
		return boot.File{}, err
	}
	return c.openVerified(sum)
}

func (c *ImageCache) path(sum string) string { return filepath.Join(c.Dir, sum) }

func (c *ImageCache) log() *slog.Logger {
	if c.Log == nil {
		return slog.Default()
	}
	return c.Log
}

// openVerified opens the cached image, hashing it first unless this
// process already verified the file as it is now. A file that does not
// match is removed and reported as not found.
func (c *ImageCache) openVerified(sum string) (boot.File, error) {
	if c.Local != nil {
		f, fi, err := c.Local.Open(sum)
		if errors.Is(err, images.ErrNotFound) {
			return boot.File{}, fmt.Errorf("%w: images/%s", boot.ErrNotFound, sum)
		}
		if err != nil {
			return boot.File{}, err
		}
		return boot.File{ReadSeeker: f, Size: fi.Size(), ModTime: fi.ModTime(), Close: f.Close}, nil
	}
	f, err := os.Open(c.path(sum))
	if errors.Is(err, os.ErrNotExist) {
		return boot.File{}, fmt.Errorf("%w: images/%s", boot.ErrNotFound, sum)
	}
	if err != nil {
		return boot.File{}, err
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return boot.File{}, errors.Join(fmt.Errorf("%w: images/%s", boot.ErrNotFound, sum), err)
	}
	st := stamp{fi.Size(), fi.ModTime()}
	c.mu.Lock()
	known := c.verified[sum] == st
	c.mu.Unlock()
	if !known {
		h := sha256.New()
		_, err := io.Copy(h, f)
		if err == nil {
			_, err = f.Seek(0, io.SeekStart)
		}
		if err != nil {
			f.Close()
			return boot.File{}, err
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != sum {
			f.Close()
			c.log().Warn("cached image is corrupt; dropping it", "sha256", sum, "got", got)
			if err := os.Remove(c.path(sum)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return boot.File{}, err
			}
			return boot.File{}, fmt.Errorf("%w: images/%s", boot.ErrNotFound, sum)
		}
		c.mu.Lock()
		if c.verified == nil {
			c.verified = map[string]stamp{}
		}
		c.verified[sum] = st
		c.mu.Unlock()
	}
	return boot.File{ReadSeeker: f, Size: fi.Size(), ModTime: fi.ModTime(), Close: f.Close}, nil
}

// fetch downloads an image once however many machines ask for it at
// once; each waits until it is done or its own request ends.
func (c *ImageCache) fetch(ctx context.Context, sum string) error {
	c.mu.Lock()
	if c.fetching == nil {
		c.fetching = map[string]*imageFetch{}
	}
	f := c.fetching[sum]
	if f == nil {
		f = &imageFetch{done: make(chan struct{})}
		c.fetching[sum] = f
		timeout := c.FetchTimeout
		if timeout <= 0 {
			timeout = time.Hour
		}
		// The fetch outlives the request that started it: others wait.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		go func() {
			defer cancel()
			f.err = c.download(fctx, sum)
			c.mu.Lock()
			delete(c.fetching, sum)
			c.mu.Unlock()
			close(f.done)
		}()
	}
	c.mu.Unlock()
	select {
	case <-f.done:
		return f.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// download fetches the image into a temporary file in Dir and renames it
// into place once its SHA-256 matches.
func (c *ImageCache) download(ctx context.Context, sum string) error {
	if c.Local == nil {
		if err := os.MkdirAll(c.Dir, 0o755); err != nil {
			return err
		}
	}
	u := strings.TrimRight(c.Region, "/") + "/api/2.0/images/" + sum
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("fetch image %s: %w", sum, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return fmt.Errorf("%w: the region has no complete image %s", boot.ErrNotFound, sum)
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("fetch image %s: region answered %s", sum, resp.Status)
	}
	if c.Local != nil {
		// The region keeps what it fetched for this answer in Local.
		h := sha256.New()
		if _, err := io.Copy(h, resp.Body); err != nil {
			return fmt.Errorf("fetch image %s: %w", sum, err)
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != sum {
			return fmt.Errorf("fetch image %s: the region sent bytes with sha256 %s", sum, got)
		}
		return nil
	}
	tmp, err := os.CreateTemp(c.Dir, ".fetch-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	defer tmp.Close()
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(tmp, h), resp.Body); err != nil {
		return fmt.Errorf("fetch image %s: %w", sum, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sum {
		return fmt.Errorf("fetch image %s: the region sent bytes with sha256 %s", sum, got)
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	fi, err := tmp.Stat()
	if err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), c.path(sum)); err != nil {
		return err
	}
	// Just hashed on the way in: no need to hash it again to serve it.
	c.mu.Lock()
	if c.verified == nil {
		c.verified = map[string]stamp{}
	}
	c.verified[sum] = stamp{fi.Size(), fi.ModTime()}
	c.mu.Unlock()
	c.log().Info("image fetched from the region", "sha256", sum)
	return nil
}
