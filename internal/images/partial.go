package images

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// Chunked uploads, as MAAS's clients send them: the file is declared with
// its SHA-256 and size, then its bytes arrive in order, chunk after chunk,
// into DATA/images/.partial/<id> (id is the file's database id). A chunk
// is applied whole or not at all, so a client that lost an answer can ask
// how far the upload got (Received) and go on from there. When the last
// byte arrives the file is hashed and, if it matches, renamed into place.

func (s *Store) partialPath(id int64) string {
	return filepath.Join(s.dir, ".partial", strconv.FormatInt(id, 10))
}

func partialKey(id int64) string { return "partial/" + strconv.FormatInt(id, 10) }

// Received is how many bytes of upload id have arrived.
func (s *Store) Received(id int64) int64 {
	fi, err := os.Stat(s.partialPath(id))
	if err != nil {
		return 0
	}
	return fi.Size()
}

// DropPartial forgets upload id's bytes.
func (s *Store) DropPartial(id int64) error {
	defer s.Lock(partialKey(id))()
	if err := os.Remove(s.partialPath(id)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// Append adds one chunk, read from r, to upload id of total bytes.
// length is the chunk's declared length (its Content-Length), or -1 when
// unknown. A chunk that would pass total is ErrBeyondSize; one that ends
// early (the client went away) or disagrees with length is an error; in
// both cases the upload is left as it was before the chunk. It returns
// the bytes received so far. Chunks to one upload are applied one at a
// time.
func (s *Store) Append(id int64, r io.Reader, length, total int64) (int64, error) {
	defer s.Lock(partialKey(id))()
	f, err := os.OpenFile(s.partialPath(id), os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	have := fi.Size()
	switch {
	case have >= total:
		return have, fmt.Errorf("%w: the upload already has all %d bytes", ErrBeyondSize, total)
	case length >= 0 && have+length > total:
		return have, fmt.Errorf("%w: a chunk of %d bytes at offset %d passes the size of %d", ErrBeyondSize, length, have, total)
	}
	if _, err := f.Seek(have, io.SeekStart); err != nil {
		return have, err
	}
	n, err := io.Copy(f, io.LimitReader(r, total-have+1))
	switch {
	case err != nil:
	case have+n > total:
		err = fmt.Errorf("%w: more than the %d bytes left of %d", ErrBeyondSize, total-have, total)
	case length >= 0 && n != length:
		err = fmt.Errorf("%w: %d bytes received of %d", ErrShort, n, length)
	}
	if err != nil {
		// Undo the partial chunk so that the upload resumes cleanly.
		return have, errors.Join(err, f.Truncate(have))
	}
	return have + n, nil
}

// Finish verifies a fully received upload against sum and total and
// renames it into place as image sum. On a mismatch its bytes are dropped
// (the upload starts again from nothing) and a *MismatchError says what
// differed. Callers hold Lock(sum).
func (s *Store) Finish(id int64, sum string, total int64) error {
	defer s.Lock(partialKey(id))()
	f, err := os.OpenFile(s.partialPath(id), os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return &MismatchError{What: "size", Want: strconv.FormatInt(total, 10), Got: "0"}
	}
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return err
	}
	if err := check(hex.EncodeToString(h.Sum(nil)), n, sum, total); err != nil {
		f.Close()
		return errors.Join(err, os.Remove(f.Name()))
	}
	return s.install(f, sum)
}
