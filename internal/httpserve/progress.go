package httpserve

import (
	"io"
	"net/http"
	"time"
)

// Once its request is read, a handler's connection still carries the
// server's read deadline: net/http reads on in the background to notice
// the client leaving, and when that read times out it cancels the
// request's context. So every handler that runs past the read limit moves
// it. Errors are ignored: a writer without deadlines (a test recorder)
// has nothing to move.

// Extend gives the answer up to d from now, for a handler that
// legitimately waits longer than the server's limits (a power query
// queued behind a dead BMC).
func Extend(w http.ResponseWriter, d time.Duration) {
	t := time.Now().Add(d)
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(t)
	_ = rc.SetWriteDeadline(t)
}

// Stream returns the writer for a long or long-lived answer (server-sent
// events, an image, a kernel). The read deadline is lifted, so the answer
// lasts until its request's context ends; each write and flush may take
// up to the server's write limit, so a slow but steady client gets the
// whole of it, and one that stops reading is cut off one limit after its
// kernel buffers fill. Handlers must write through the returned writer:
// a write deadline is absolute, and only the wrapper moves it.
func Stream(w http.ResponseWriter, r *http.Request) *Writer {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	return &Writer{ResponseWriter: w, rc: rc, limit: LimitsFrom(r.Context()).Write}
}

// Upload replaces r's body with one whose every read may take up to the
// server's read limit: a slow but steady upload of a large image works,
// a stalled one ends. The answer then has the write limit from the last
// byte read.
func Upload(w http.ResponseWriter, r *http.Request) {
	l := LimitsFrom(r.Context())
	r.Body = &progressReader{ReadCloser: r.Body, rc: http.NewResponseController(w), read: l.Read, write: l.Write}
}

// Writer moves the write deadline before every write and flush.
type Writer struct {
	http.ResponseWriter
	rc    *http.ResponseController
	limit time.Duration
}

func (p *Writer) extend() {
	if p.limit > 0 {
		_ = p.rc.SetWriteDeadline(time.Now().Add(p.limit))
	}
}

func (p *Writer) Write(b []byte) (int, error) {
	p.extend()
	return p.ResponseWriter.Write(b)
}

// Flush sends what is buffered, within one write limit.
func (p *Writer) Flush() {
	p.extend()
	_ = p.rc.Flush()
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (p *Writer) Unwrap() http.ResponseWriter { return p.ResponseWriter }

type progressReader struct {
	io.ReadCloser
	rc          *http.ResponseController
	read, write time.Duration
}

func (p *progressReader) Read(b []byte) (int, error) {
	if p.read > 0 {
		now := time.Now()
		_ = p.rc.SetReadDeadline(now.Add(p.read))
		_ = p.rc.SetWriteDeadline(now.Add(p.read + p.write))
	}
	return p.ReadCloser.Read(b)
}
