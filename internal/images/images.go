// Package images keeps the bytes of boot resources (deployable images) on
// disk, named by their SHA-256: DATA/images/<sha256>. A file appears under
// that name only once its bytes were checked against the SHA-256 and size
// the uploader declared, so a name present is an image complete and
// verified; everything on the way there lives in files no reader looks at:
//
//	DATA/images/<sha256>          complete, verified images
//	DATA/images/.tmp-*            one-request uploads being received
//	DATA/images/.partial/<id>     chunked uploads of file <id>, resumable
//
// Renames within one directory are atomic, so two uploads of the same
// bytes, each in its own temporary file, can finish in any order and a
// reader sees one whole image or none. The metadata (which resource names
// which bytes) lives in the database; see the API's boot-resources.
package images

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/anvilmetal/anvil/internal/httpserve"
)

// DefaultMaxSize bounds one image unless Store.MaxSize says otherwise.
const DefaultMaxSize = 256 << 30

var (
	// ErrNotFound is an image that is not (or not yet completely) here.
	ErrNotFound = errors.New("image not found")
	// ErrTooLarge is an image over the size limit or the free space.
	ErrTooLarge = errors.New("image too large")
	// ErrBeyondSize is a chunk that would carry an upload past its size.
	ErrBeyondSize = errors.New("too much data received")
	// ErrShort is a chunk whose body was shorter than its Content-Length.
	ErrShort = errors.New("chunk shorter than its Content-Length")
)

// MismatchError is an upload whose bytes are not the declared ones.
type MismatchError struct {
	What      string // "sha256" or "size"
	Want, Got string
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("%s mismatch: expected %s, got %s", e.What, e.Want, e.Got)
}

// Store is the image directory.
type Store struct {
	dir string
	// MaxSize bounds one image (DefaultMaxSize when zero).
	MaxSize int64

	mu    sync.Mutex
	locks map[string]*keyLock
}

type keyLock struct {
	sync.Mutex
	users int
}

// Open makes DATA/images and clears one-request uploads a stopped
// process left half received. Chunked uploads are kept: they resume.
func Open(dataDir string) (*Store, error) {
	s := &Store{dir: filepath.Join(dataDir, "images"), locks: map[string]*keyLock{}}
	if err := os.MkdirAll(filepath.Join(s.dir, ".partial"), 0o755); err != nil {
		return nil, fmt.Errorf("image directory: %w", err)
	}
	stale, _ := filepath.Glob(filepath.Join(s.dir, ".tmp-*"))
	for _, p := range stale {
		_ = os.Remove(p)
	}
	return s, nil
}

// Dir is where the images are.
func (s *Store) Dir() string { return s.dir }

func (s *Store) maxSize() int64 {
	if s.MaxSize > 0 {
		return s.MaxSize
	}
	return DefaultMaxSize
}

// ValidSHA256 reports whether sum is 64 lower-case hex digits, the only
// names the directory holds.
func ValidSHA256(sum string) bool {
	if len(sum) != 64 {
		return false
	}
	for i := 0; i < len(sum); i++ {
		c := sum[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Lock serialises work on one image (by SHA-256) within this process:
// callers hold it from putting bytes in place until the database says
// so, and from checking that nothing names an image until removing it,
// so that a removal can never take bytes a new upload just claimed.
func (s *Store) Lock(sum string) (unlock func()) {
	s.mu.Lock()
	l := s.locks[sum]
	if l == nil {
		l = &keyLock{}
		s.locks[sum] = l
	}
	l.users++
	s.mu.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		s.mu.Lock()
		if l.users--; l.users == 0 {
			delete(s.locks, sum)
		}
		s.mu.Unlock()
	}
}

// CheckSize refuses sizes that are not positive, over MaxSize, or over
// the free space of the image directory.
func (s *Store) CheckSize(size int64) error {
	switch {
	case size <= 0:
		return fmt.Errorf("size %d is not a positive number of bytes", size)
	case size > s.maxSize():
		return fmt.Errorf("%w: %d bytes is over the limit of %d", ErrTooLarge, size, s.maxSize())
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(s.dir, &st); err == nil {
		if free := int64(st.Bavail) * int64(st.Bsize); size > free {
			return fmt.Errorf("%w: %d bytes is more than the %d free in %s", ErrTooLarge, size, free, s.dir)
		}
	}
	return nil
}

func (s *Store) path(sum string) string { return filepath.Join(s.dir, sum) }

// Has reports whether the complete image is here.
func (s *Store) Has(sum string) bool {
	if !ValidSHA256(sum) {
		return false
	}
	fi, err := os.Stat(s.path(sum))
	return err == nil && fi.Mode().IsRegular()
}

// Open opens a complete image.
func (s *Store) Open(sum string) (*os.File, os.FileInfo, error) {
	if !ValidSHA256(sum) {
		return nil, nil, ErrNotFound
	}
	f, err := os.Open(s.path(sum))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, ErrNotFound
	}
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, errors.Join(ErrNotFound, err)
	}
	return f, fi, nil
}

// Serve answers a GET or HEAD of a complete image, with Range (and
// If-Range on its ETag, the SHA-256): a machine or rack can resume.
func (s *Store) Serve(w http.ResponseWriter, r *http.Request, sum string) {
	f, fi, err := s.Open(sum)
	if errors.Is(err, ErrNotFound) {
		http.Error(w, "no complete image with sha256 "+truncate(sum, 64), http.StatusNotFound)
		return
	}
	if err != nil {
		http.Error(w, "cannot open image", http.StatusInternalServerError)
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("ETag", `"`+sum+`"`)
	// An image is gigabytes: the write limit applies to each write, not
	// to the whole transfer.
	http.ServeContent(httpserve.Stream(w, r), r, "", fi.ModTime(), f)
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// Remove deletes a complete image; a missing one is no error. Callers
// hold Lock(sum) and have checked nothing names it.
func (s *Store) Remove(sum string) error {
	if !ValidSHA256(sum) {
		return nil
	}
	if err := os.Remove(s.path(sum)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// Temp is a one-request upload received into a temporary file.
type Temp struct {
	f    *os.File
	Sum  string // lower-case hex SHA-256 of what was received
	Size int64
}

// Receive copies r into a temporary file in the image directory, hashing
// it on the way; more than MaxSize bytes is ErrTooLarge. The caller ends
// with Commit or Discard.
func (s *Store) Receive(r io.Reader) (*Temp, error) {
	f, err := os.CreateTemp(s.dir, ".tmp-*")
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(r, s.maxSize()+1))
	t := &Temp{f: f, Sum: hex.EncodeToString(h.Sum(nil)), Size: n}
	if err == nil && n > s.maxSize() {
		err = fmt.Errorf("%w: more than %d bytes", ErrTooLarge, s.maxSize())
	}
	if err != nil {
		t.Discard()
		return nil, err
	}
	return t, nil
}

// Discard removes the temporary file.
func (t *Temp) Discard() {
	if t.f != nil {
		t.f.Close()
		os.Remove(t.f.Name())
		t.f = nil
	}
}

// Commit checks what was received against the declared SHA-256 and size
// (either may be empty or negative: not declared) and renames it into
// place; on a mismatch the temporary file is removed and nothing changes.
// Callers hold Lock(t.Sum).
func (s *Store) Commit(t *Temp, wantSum string, wantSize int64) error {
	defer t.Discard()
	if err := check(t.Sum, t.Size, wantSum, wantSize); err != nil {
		return err
	}
	return s.install(t.f, t.Sum)
}

func check(sum string, size int64, wantSum string, wantSize int64) error {
	if wantSize >= 0 && size != wantSize {
		return &MismatchError{What: "size", Want: strconv.FormatInt(wantSize, 10), Got: strconv.FormatInt(size, 10)}
	}
	if wantSum != "" && sum != strings.ToLower(wantSum) {
		return &MismatchError{What: "sha256", Want: wantSum, Got: sum}
	}
	return nil
}

// install makes f, whose content has been verified, the image sum: data
// and name reach the disk before the caller records it complete.
func (s *Store) install(f *os.File, sum string) error {
	if err := f.Sync(); err != nil {
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), s.path(sum)); err != nil {
		return err
	}
	return syncDir(s.dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// CheckDeclared compares what was received with the declared SHA-256 and
// size (empty or negative: not declared), without touching the file.
func CheckDeclared(t *Temp, wantSum string, wantSize int64) error {
	return check(t.Sum, t.Size, wantSum, wantSize)
}
