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
// both deadlines. Errors are ignored: a writer without deadlines (a test
// recorder) has nothing to move.
func setDeadlines(rc *http.ResponseController, read, write time.Time) {
	_ = rc.SetReadDeadline(read)
	_ = rc.SetWriteDeadline(write)
}

// Extend gives the answer up to d from now, for a handler that
// legitimately waits longer than the server's limits (a power query
// queued behind a dead BMC).
func Extend(w http.ResponseWriter, d time.Duration) {
	t := time.Now().Add(d)
	setDeadlines(http.NewResponseController(w), t, t)
}

// Stream lifts the deadlines for a long-lived answer (server-sent
// events): the stream writes a heartbeat often enough that a peer that
// stopped reading fills the kernel's send buffer and the write fails, and
// it ends with its request's context.
func Stream(w http.ResponseWriter) {
	setDeadlines(http.NewResponseController(w), time.Time{}, time.Time{})
}

// Download returns a writer for a large answer (an image, a kernel): each
// write may take up to the server's write limit, so a slow but steady
// client finishes however long the whole transfer takes, and one that
// stops reading is cut off after one limit.
func Download(w http.ResponseWriter, r *http.Request) http.ResponseWriter {
	return &progressWriter{ResponseWriter: w, rc: http.NewResponseController(w), limit: LimitsFrom(r.Context()).Write}
}

// Upload replaces r's body with one whose every read may take up to the
// server's read limit: a slow but steady upload of a large image works,
// a stalled one ends. The answer then has the write limit from the last
// byte read.
func Upload(w http.ResponseWriter, r *http.Request) {
	l := LimitsFrom(r.Context())
	r.Body = &progressReader{ReadCloser: r.Body, rc: http.NewResponseController(w), read: l.Read, write: l.Write}
}

type progressWriter struct {
	http.ResponseWriter
	rc    *http.ResponseController
	limit time.Duration
}

func (p *progressWriter) Write(b []byte) (int, error) {
	if p.limit > 0 {
		t := time.Now().Add(p.limit)
		setDeadlines(p.rc, t, t)
	}
	return p.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (p *progressWriter) Unwrap() http.ResponseWriter { return p.ResponseWriter }

type progressReader struct {
	io.ReadCloser
	rc          *http.ResponseController
	read, write time.Duration
}

func (p *progressReader) Read(b []byte) (int, error) {
	if p.read > 0 {
		now := time.Now()
		setDeadlines(p.rc, now.Add(p.read), now.Add(p.read+p.write))
	}
	return p.ReadCloser.Read(b)
}
