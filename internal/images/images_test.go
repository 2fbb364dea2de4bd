package images

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
)

func sumOf(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func TestCommitVerifies(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("anvil"), 1000)
	tmp, err := s.Receive(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var me *MismatchError
	if err := s.Commit(tmp, strings.Repeat("0", 64), -1); !errors.As(err, &me) || me.What != "sha256" || me.Got != sumOf(data) {
		t.Fatalf("Commit with a wrong sum = %v", err)
	}
	if s.Has(sumOf(data)) {
		t.Fatal("a refused upload is in place")
	}
	if left, _ := os.ReadDir(s.Dir()); len(left) != 1 { // .partial only
		t.Fatalf("left behind: %v", left)
	}
	tmp, _ = s.Receive(bytes.NewReader(data))
	if err := s.Commit(tmp, "", int64(len(data))); err != nil || !s.Has(sumOf(data)) {
		t.Fatalf("Commit = %v", err)
	}
}

func TestReceiveLimit(t *testing.T) {
	s, _ := Open(t.TempDir())
	s.MaxSize = 10
	if _, err := s.Receive(strings.NewReader("01234567890")); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Receive over the limit = %v", err)
	}
	for _, size := range []int64{0, -1, 11, 1 << 62} {
		if s.CheckSize(size) == nil {
			t.Errorf("size %d accepted", size)
		}
	}
}

// failing reads n bytes then fails, as a client that goes away.
type failing struct {
	r io.Reader
}

func (f failing) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, io.ErrUnexpectedEOF
	}
	return n, err
}

func TestChunks(t *testing.T) {
	s, _ := Open(t.TempDir())
	data := []byte("0123456789abcdefghij")
	total := int64(len(data))
	if n, err := s.Append(7, bytes.NewReader(data[:8]), 8, total); err != nil || n != 8 {
		t.Fatalf("Append = %d, %v", n, err)
	}
	// A chunk cut short leaves the upload as it was.
	if _, err := s.Append(7, failing{bytes.NewReader(data[8:12])}, 8, total); err == nil {
		t.Fatal("a broken chunk was accepted")
	}
	if got := s.Received(7); got != 8 {
		t.Fatalf("Received after a broken chunk = %d", got)
	}
	if _, err := s.Append(7, bytes.NewReader(data[8:]), 100, total); !errors.Is(err, ErrBeyondSize) {
		t.Fatalf("oversized chunk = %v", err)
	}
	if _, err := s.Append(7, bytes.NewReader(append(data[8:], 'x')), -1, total); !errors.Is(err, ErrBeyondSize) {
		t.Fatalf("chunk passing the size = %v", err)
	}
	if n, err := s.Append(7, bytes.NewReader(data[8:]), -1, total); err != nil || n != total {
		t.Fatalf("last chunk = %d, %v", n, err)
	}
	if _, err := s.Append(7, bytes.NewReader([]byte("x")), 1, total); !errors.Is(err, ErrBeyondSize) {
		t.Fatalf("chunk after the end = %v", err)
	}
	var me *MismatchError
	if err := s.Finish(7, strings.Repeat("a", 64), total); !errors.As(err, &me) {
		t.Fatalf("Finish with a wrong sum = %v", err)
	}
	if s.Received(7) != 0 || s.Has(sumOf(data)) {
		t.Fatal("a refused upload left bytes")
	}
	s.Append(7, bytes.NewReader(data), total, total)
	if err := s.Finish(7, sumOf(data), total); err != nil || !s.Has(sumOf(data)) {
		t.Fatalf("Finish = %v", err)
	}
}

// Two uploads of the same bytes at once each finish into one whole image.
func TestConcurrentSameImage(t *testing.T) {
	s, _ := Open(t.TempDir())
	data := bytes.Repeat([]byte{1, 2, 3}, 1<<16)
	sum := sumOf(data)
	var wg sync.WaitGroup
	for id := range int64(4) {
		wg.Go(func() {
			for off := 0; off < len(data); off += 4096 {
				end := min(off+4096, len(data))
				if _, err := s.Append(id, bytes.NewReader(data[off:end]), int64(end-off), int64(len(data))); err != nil {
					t.Error(err)
					return
				}
			}
			unlock := s.Lock(sum)
			defer unlock()
			if err := s.Finish(id, sum, int64(len(data))); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got, _ := os.ReadFile(s.path(sum))
	if !bytes.Equal(got, data) {
		t.Fatal("image corrupted")
	}
}

func TestServeRange(t *testing.T) {
	s, _ := Open(t.TempDir())
	data := make([]byte, 1000)
	for i := range data {
		data[i] = byte(i)
	}
	tmp, _ := s.Receive(bytes.NewReader(data))
	s.Commit(tmp, "", -1)
	for rng, want := range map[string][]byte{"bytes=10-99": data[10:100], "bytes=-50": data[950:], "bytes=990-": data[990:]} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Header.Set("Range", rng)
		w := httptest.NewRecorder()
		s.Serve(w, req, sumOf(data))
		if w.Code != http.StatusPartialContent || !bytes.Equal(w.Body.Bytes(), want) {
			t.Errorf("%s: %d, %d bytes", rng, w.Code, w.Body.Len())
		}
	}
	w := httptest.NewRecorder()
	s.Serve(w, httptest.NewRequest(http.MethodGet, "/", nil), strings.Repeat("e", 64))
	if w.Code != http.StatusNotFound {
		t.Errorf("missing image: %d", w.Code)
	}
}
