// Package httpboot is the rack's HTTP boot server (MAAS's port 5248):
// GET and HEAD of any path, resolved by a boot.Source. Firmware (UEFI
// HTTP boot, iPXE, GRUB) fetches kernels, initrds and configs here, and
// Range requests let it resume or fetch in pieces.
package httpboot

import (
	"errors"
	"io"
	"net/http"
	"net/netip"
	"path"
	"strings"
	"time"

	"github.com/anvilmetal/anvil/internal/boot"
	"github.com/anvilmetal/anvil/internal/httpserve"
)

// Handler serves GET and HEAD of /<name> from src and tells obs (which
// may be nil) of every request.
func Handler(src boot.Source, obs boot.Observer) http.Handler {
	if obs == nil {
		obs = func(string, boot.Client, int64, time.Duration, error) {}
	}
	return &handler{src: src, obs: obs}
}

type handler struct {
	src boot.Source
	obs boot.Observer
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	start := time.Now()
	c := boot.Client{Proto: "http", UserAgent: r.UserAgent()}
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		c.Addr = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	// URL.Path is already unescaped, so "%2e%2e" and "%00" are caught too.
	name, err := boot.CleanName(r.URL.Path)
	var f boot.File
	if err == nil {
		f, err = h.src.Open(r.Context(), name, c)
	} else {
		name = r.URL.Path
	}
	if err != nil {
		h.obs(name, c, 0, time.Since(start), err)
		switch {
		case errors.Is(err, boot.ErrNotFound):
			http.Error(w, "not found", http.StatusNotFound)
		case errors.Is(err, boot.ErrBadName):
			http.Error(w, "bad file name", http.StatusBadRequest)
		case errors.Is(err, boot.ErrBusy):
			http.Error(w, "too many requests", http.StatusTooManyRequests)
		default:
			http.Error(w, "server error", http.StatusInternalServerError)
		}
		return
	}
	if f.Close != nil {
		defer f.Close()
	}
	w.Header().Set("Content-Type", contentType(name))
	// Kernels, initrds and images take long on a slow link: the write
	// limit applies to each write, not to the whole transfer.
	cw := &counter{ResponseWriter: httpserve.Stream(w, r)}
	// ServeContent does Range, HEAD, Content-Length and Last-Modified
	// (left out when ModTime is zero, as for a config rendered now).
	http.ServeContent(cw, r, "", f.ModTime, f.ReadSeeker)
	h.obs(name, c, cw.n, time.Since(start), cw.err)
}

// contentType is text/plain for the configs firmware reads (some iPXE and
// GRUB builds check it), and bytes for everything else: the extension of
// a kernel or initrd says nothing reliable.
func contentType(name string) string {
	base := path.Base(name)
	if strings.HasPrefix(base, "ipxe.cfg") || strings.HasPrefix(base, "grub.cfg") ||
		strings.HasPrefix(name, "pxelinux.cfg/") || strings.Contains(name, "/pxelinux.cfg/") {
		return "text/plain"
	}
	return "application/octet-stream"
}

// counter counts the body bytes written, and keeps the first write error
// (the client went away), for the Observer.
type counter struct {
	http.ResponseWriter
	n   int64
	err error
}

func (c *counter) Write(b []byte) (int, error) {
	n, err := c.ResponseWriter.Write(b)
	c.n += int64(n)
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

// ReadFrom keeps the server's own ReadFrom in reach of io.Copy, so a
// file on disk still goes out by sendfile.
func (c *counter) ReadFrom(r io.Reader) (int64, error) {
	n, err := io.Copy(c.ResponseWriter, r)
	c.n += n
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

// Unwrap lets http.ResponseController reach the real writer.
func (c *counter) Unwrap() http.ResponseWriter { return c.ResponseWriter }
