package agent

import (
	"bufio"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ulikunitz/xz"

	"github.com/anvilmetal/anvil/internal/agentapi"
)

// Image file types.
const (
	FileTypeRaw = "ddraw"
	FileTypeGz  = "ddgz"
	FileTypeXz  = "ddxz"
)

// writeChunk is the size of one write to the disk.
const writeChunk = 4 * MiB

// downloadRetries is how many times a dropped image download is resumed.
const downloadRetries = 5

// stallTimeout ends a download that has sent nothing for that long (it is
// then resumed).
var stallTimeout = 60 * time.Second

// Deploy is the deploying phase: the task's image written to disk and
// verified, a cloud-init NoCloud seed with the first-boot settings beside
// it, INSTALLED signalled, then a reboot into the installed system. A
// deployment to memory (task.Ephemeral) is deployToMemory's.
func Deploy(ctx context.Context, a *Agent, _ agentapi.HelloResponse) error {
	task, err := a.fetchTask(ctx)
	if err != nil {
		return err
	}
	if task.Image == nil {
		return errors.New("the task has no image to deploy")
	}
	img := *task.Image
	switch img.FileType {
	case FileTypeRaw, FileTypeGz, FileTypeXz, FileTypeTgz, FileTypeTbz, FileTypeTxz:
	default:
		return fmt.Errorf("unknown image file type %q", img.FileType)
	}
	src, err := a.imageURL(img.URL)
	if err != nil {
		return err
	}
	hc := imageHTTPClient()
	src = a.imageSource(ctx, hc, img, src)
	if task.Ephemeral {
		return a.deployToMemory(ctx, task, hc, src, img)
	}
	if task.Storage != nil && isTarball(img.FileType) {
		if err := a.deployLayout(ctx, task, hc, src, img); err != nil {
			return err
		}
		return a.installed(ctx, task)
	}
	need, exact := rawSize(ctx, hc, src, img)
	if isTarball(img.FileType) {
		need = rootfsMinSize + rootfsTail
	}
	disk, err := a.pickDisk(task.Disk, need)
	if err != nil {
		return err
	}
	a.Logf("deploy image filetype=%s size=%d raw_size=%d (%s) disk=%s disk_mib=%d", img.FileType, img.Size, need, map[bool]string{true: "known", false: "lower bound"}[exact], disk.Name, disk.Size/MiB)
	dev := filepath.Join(a.DevDir, disk.Name)

	start := time.Now()
	var written int64
	err = a.timed("download+write", func() error {
		stop := a.Heartbeat(ctx)
		defer stop()
		var err error
		if isTarball(img.FileType) {
			written, err = a.writeTarball(ctx, hc, src, img, dev, disk)
		} else {
			written, err = a.writeImage(ctx, hc, src, img, dev, disk)
		}
		return err
	})
	if err != nil {
		if werr := wipeHead(dev); werr != nil {
			a.Logf("deploy wiping the start of %s: %v", disk.Name, werr)
		} else {
			a.Logf("deploy wiped the first MiB of %s", disk.Name)
		}
		return err
	}
	secs := time.Since(start).Seconds()
	a.Logf("deploy wrote %d MiB in %.1f s (%.1f MB/s) to %s", written/MiB, secs, float64(written)/1e6/secs, disk.Name)

	err = a.timed("seed", func() error {
		off, size, err := WriteSeed(dev, disk.Size, seedFiles(task, a.id.BootMAC, a.Client.OSUpURL()))
		if errors.Is(err, errNoRoom) {
			return fmt.Errorf("no room on %s for the first-boot seed", disk.Name)
		}
		if err != nil {
			return fmt.Errorf("first-boot seed on %s: %w", disk.Name, err)
		}
		a.Logf("deploy seed partition CIDATA at %d MiB, %d MiB, on %s", off/MiB, size/MiB, disk.Name)
		return nil
	})
	if err != nil {
		if werr := wipeHead(dev); werr != nil {
			a.Logf("deploy wiping the start of %s: %v", disk.Name, werr)
		}
		return err
	}
	rereadPartitions(dev)
	return a.installed(ctx, task)
}

// installed signals INSTALLED and ends the phase with a reboot into the
// installed system.
func (a *Agent) installed(ctx context.Context, task agentapi.Task) error {
	err := a.timed("signal", func() error {
		return a.retry(ctx, "signal INSTALLED", func(ctx context.Context) error {
			return a.Client.Signal(ctx, agentapi.StatusInstalled, "", nil)
		})
	})
	if err != nil {
		return err
	}
	a.Logf("signal status=%s", agentapi.StatusInstalled)
	a.rebootAfter, a.waitBMC = true, task.RebootByBMC
	return nil
}

// fetchTask asks the region what the phase is to do, as a timed stage.
func (a *Agent) fetchTask(ctx context.Context) (task agentapi.Task, err error) {
	err = a.timed("task", func() error {
		return a.retry(ctx, "task", func(ctx context.Context) (err error) {
			task, err = a.Client.Task(ctx)
			return err
		})
	})
	return task, err
}

// imageURL resolves the image's URL against the metadata URL, so the
// region may give a path alone.
func (a *Agent) imageURL(s string) (string, error) {
	if s == "" {
		return "", errors.New("the task's image has no URL")
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("image URL: %w", err)
	}
	if u.IsAbs() {
		return s, nil
	}
	base, err := url.Parse(a.Client.Base)
	if err != nil {
		return "", err
	}
	return base.ResolveReference(u).String(), nil
}

func imageHTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ResponseHeaderTimeout: 60 * time.Second,
		ReadBufferSize:        256 << 10,
	}}
}

// pickDisk chooses the target: the task's disk, or the first writable,
// non-removable disk that holds need bytes plus the seed.
func (a *Agent) pickDisk(name string, need int64) (Disk, error) {
	fits := func(d Disk) error {
		if d.Size < need {
			return fmt.Errorf("disk %s is %d MiB, the image needs %d MiB", d.Name, d.Size/MiB, mib(need))
		}
		if alignUp(need, MiB)+seedMinSize+MiB > d.Size {
			return fmt.Errorf("no room on %s for the first-boot seed", d.Name)
		}
		return nil
	}
	if name != "" {
		d, err := diskByName(a.BlockDir, name)
		if err != nil {
			return d, err
		}
		return d, fits(d)
	}
	disks, err := ListDisks(a.BlockDir)
	if err != nil {
		return Disk{}, fmt.Errorf("listing disks: %w", err)
	}
	if len(disks) == 0 {
		return Disk{}, errors.New("no disk to deploy to")
	}
	var first error
	for _, d := range disks {
		err := fits(d)
		if err == nil {
			return d, nil
		}
		if first == nil {
			first = err
		}
	}
	return Disk{}, first
}

// rawSize is how many bytes the image writes, or a lower bound of it
// (exact false) when the image does not say.
func rawSize(ctx context.Context, hc *http.Client, src string, img agentapi.Image) (n int64, exact bool) {
	switch img.FileType {
	case FileTypeRaw:
		return img.Size, true
	case FileTypeGz:
		if img.RawSize > 0 {
			return img.RawSize, true
		}
		// Deflate never shrinks data by more than its stored blocks'
		// overhead (5 bytes in 64 KiB), so the raw size is at least about
		// the compressed one; the trailer's ISIZE is the raw size mod 2^32,
		// a lower bound too.
		low := img.Size - img.Size/4096 - 64
		if b, err := rangeGet(ctx, hc, src, "bytes=-4", 4); err == nil {
			low = max(low, int64(binary.LittleEndian.Uint32(b)))
		}
		return max(low, 0), false
	case FileTypeXz:
		if img.RawSize > 0 {
			return img.RawSize, true
		}
		if n, err := xzRawSize(ctx, hc, src, img.Size); err == nil {
			return n, true
		}
	}
	return 0, false
}

// xzRawSize reads the uncompressed size from the xz stream's index: the
// footer (last 12 bytes) says how long the index before it is.
func xzRawSize(ctx context.Context, hc *http.Client, src string, size int64) (int64, error) {
	if size < 32 {
		return 0, errors.New("xz: too short")
	}
	foot, err := rangeGet(ctx, hc, src, fmt.Sprintf("bytes=%d-%d", size-12, size-1), 12)
	if err != nil {
		return 0, err
	}
	if string(foot[10:12]) != "YZ" || crc32.ChecksumIEEE(foot[4:10]) != binary.LittleEndian.Uint32(foot[0:4]) {
		return 0, errors.New("xz: no stream footer at the end")
	}
	isz := (int64(binary.LittleEndian.Uint32(foot[4:8])) + 1) * 4
	if isz > 16*MiB || isz > size-24 {
		return 0, errors.New("xz: index too large")
	}
	idx, err := rangeGet(ctx, hc, src, fmt.Sprintf("bytes=%d-%d", size-12-isz, size-13), int(isz))
	if err != nil {
		return 0, err
	}
	if idx[0] != 0 || crc32.ChecksumIEEE(idx[:isz-4]) != binary.LittleEndian.Uint32(idx[isz-4:]) {
		return 0, errors.New("xz: bad index")
	}
	p := idx[1 : isz-4]
	uvar := func() (uint64, error) {
		v, n := binary.Uvarint(p)
		if n <= 0 {
			return 0, errors.New("xz: bad index record")
		}
		p = p[n:]
		return v, nil
	}
	count, err := uvar()
	if err != nil {
		return 0, err
	}
	var total int64
	for range count {
		if _, err := uvar(); err != nil {
			return 0, err
		}
		u, err := uvar()
		if err != nil {
			return 0, err
		}
		total += int64(u)
	}
	return total, nil
}

// rangeGet fetches a byte range that must come back as exactly n bytes.
func rangeGet(ctx context.Context, hc *http.Client, src, spec string, n int) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Range", spec)
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent {
		return nil, fmt.Errorf("range %s: %s", spec, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, int64(n)+1))
	if err != nil {
		return nil, err
	}
	if len(b) != n {
		return nil, fmt.Errorf("range %s: %d bytes, want %d", spec, len(b), n)
	}
	return b, nil
}

// downloadError is the download failing for good (not the image's content).
type downloadError struct{ err error }

func (e *downloadError) Error() string { return "download: " + e.err.Error() }
func (e *downloadError) Unwrap() error { return e.err }

// download reads an image over HTTP, resuming with Range requests when
// the connection drops or stalls.
type download struct {
	ctx     context.Context
	hc      *http.Client
	url     string
	size    int64 // expected length, 0 when unknown
	backoff time.Duration
	logf    func(string, ...any)

	off     int64
	eof     bool
	retries int
	body    io.ReadCloser
	cancel  context.CancelFunc
	timer   *time.Timer
}

func (d *download) open() error {
	ctx, cancel := context.WithCancel(d.ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.url, nil)
	if err != nil {
		cancel()
		return err
	}
	if d.off > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", d.off))
	}
	resp, err := d.hc.Do(req)
	if err != nil {
		cancel()
		return err
	}
	switch {
	case d.off > 0 && resp.StatusCode == http.StatusRequestedRangeNotSatisfiable &&
		resp.Header.Get("Content-Range") == fmt.Sprintf("bytes */%d", d.off):
		// Everything was read already; the end just came as an error.
		resp.Body.Close()
		cancel()
		d.eof = true
		return nil
	case d.off == 0 && resp.StatusCode == http.StatusOK:
	case d.off > 0 && resp.StatusCode == http.StatusPartialContent &&
		strings.HasPrefix(resp.Header.Get("Content-Range"), fmt.Sprintf("bytes %d-", d.off)):
	default:
		resp.Body.Close()
		cancel()
		return fmt.Errorf("GET at offset %d: %s", d.off, resp.Status)
	}
	d.body, d.cancel = resp.Body, cancel
	d.timer = time.AfterFunc(stallTimeout, cancel)
	return nil
}

func (d *download) close() {
	if d.body != nil {
		d.timer.Stop()
		d.body.Close()
		d.cancel()
		d.body = nil
	}
}

func (d *download) Read(p []byte) (int, error) {
	for {
		if d.eof || (d.size > 0 && d.off >= d.size && d.body == nil) {
			return 0, io.EOF
		}
		if d.body == nil {
			if err := d.open(); err != nil {
				if err := d.again(err); err != nil {
					return 0, err
				}
				continue
			}
			if d.eof {
				return 0, io.EOF
			}
		}
		n, err := d.body.Read(p)
		d.off += int64(n)
		if n > 0 {
			d.timer.Reset(stallTimeout)
		}
		if err == io.EOF && (d.size == 0 || d.off >= d.size) {
			d.eof = true
			d.close()
			return n, io.EOF
		}
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			d.close()
			if err := d.again(err); err != nil {
				return n, err
			}
		}
		if n > 0 {
			return n, nil
		}
	}
}

// again decides whether a failed request is resumed, waiting before it.
func (d *download) again(err error) error {
	if d.ctx.Err() != nil {
		return &downloadError{d.ctx.Err()}
	}
	if d.retries >= downloadRetries {
		return &downloadError{fmt.Errorf("gave up at byte %d after %d attempts: %w", d.off, d.retries+1, err)}
	}
	d.retries++
	wait := d.backoff << (d.retries - 1)
	d.logf("deploy download interrupted at byte %d (%v), resuming in %s", d.off, err, wait)
	select {
	case <-time.After(wait):
		return nil
	case <-d.ctx.Done():
		return &downloadError{d.ctx.Err()}
	}
}

// counter counts the bytes read through it.
type counter struct {
	r io.Reader
	n int64
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// errDiskFull is the image not fitting the disk, found while writing.
type errDiskFull struct {
	disk Disk
}

func (e *errDiskFull) Error() string {
	return fmt.Sprintf("disk %s is %d MiB, the image is larger", e.disk.Name, e.disk.Size/MiB)
}

// writeImage streams the image to dev, verifying the downloaded bytes'
// SHA-256 and length at the end. It returns the bytes written.
func (a *Agent) writeImage(ctx context.Context, hc *http.Client, src string, img agentapi.Image, dev string, disk Disk) (int64, error) {
	f, err := os.OpenFile(dev, os.O_WRONLY, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()

	dl := &download{ctx: ctx, hc: hc, url: src, size: img.Size, backoff: a.Backoff, logf: a.Logf}
	defer dl.close()
	sum := sha256.New()
	cnt := &counter{r: io.TeeReader(dl, sum)}
	br := bufio.NewReaderSize(cnt, 1*MiB)

	// The reader fills buffers while the writer empties them.
	type chunk struct {
		b   []byte
		err error // set on the last chunk: nil means the end of the image
	}
	free := make(chan []byte, 2)
	full := make(chan chunk, 2)
	done := make(chan struct{})
	defer close(done)
	free <- make([]byte, writeChunk)
	free <- make([]byte, writeChunk)
	go func() {
		var r io.Reader
		var err error
		switch img.FileType {
		case FileTypeGz:
			r, err = gzip.NewReader(br)
		case FileTypeXz:
			r, err = xz.NewReader(br)
		default:
			r = br
		}
		for err == nil {
			var b []byte
			select {
			case b = <-free:
			case <-done:
				return
			}
			var n int
			n, err = io.ReadFull(r, b)
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				err = io.EOF
			}
			if n > 0 {
				select {
				case full <- chunk{b: b[:n]}:
				case <-done:
					return
				}
			}
		}
		if err == io.EOF {
			// Hash whatever follows the compressed stream too.
			_, err = io.Copy(io.Discard, br)
		}
		select {
		case full <- chunk{err: err}:
		case <-done:
		}
	}()

	var off int64
	last := time.Now()
	for c := range full {
		if c.b == nil {
			if c.err != nil {
				return off, a.readFailure(c.err, img, br, sum, cnt)
			}
			break
		}
		if off+int64(len(c.b)) > disk.Size {
			return off, &errDiskFull{disk}
		}
		if _, err := f.WriteAt(c.b, off); err != nil {
			return off, fmt.Errorf("writing %s: %w", disk.Name, err)
		}
		off += int64(len(c.b))
		free <- c.b[:cap(c.b)]
		if time.Since(last) >= 10*time.Second {
			last = time.Now()
			a.Logf("deploy progress downloaded=%d MiB written=%d MiB", cnt.n/MiB, off/MiB)
		}
	}
	if err := f.Sync(); err != nil {
		return off, fmt.Errorf("syncing %s: %w", disk.Name, err)
	}
	if err := verify(img, sum, cnt.n); err != nil {
		return off, err
	}
	return off, nil
}

// readFailure explains a failed read: a download that failed for good, or
// content that did not decompress, in which case the checksum (over the
// rest of the download) says whether the image is not the one expected.
func (a *Agent) readFailure(err error, img agentapi.Image, rest io.Reader, sum io.Writer, cnt *counter) error {
	var de *downloadError
	if errors.As(err, &de) {
		return err
	}
	if _, derr := io.Copy(io.Discard, rest); derr == nil {
		if verr := verify(img, sum.(interface{ Sum([]byte) []byte }), cnt.n); verr != nil {
			return verr
		}
	}
	return fmt.Errorf("decompressing the %s image: %w", img.FileType, err)
}

func verify(img agentapi.Image, sum interface{ Sum([]byte) []byte }, n int64) error {
	got := hex.EncodeToString(sum.Sum(nil))
	if !strings.EqualFold(got, img.SHA256) {
		return fmt.Errorf("checksum mismatch: expected %s, got %s", img.SHA256, got)
	}
	if img.Size > 0 && n != img.Size {
		return fmt.Errorf("size mismatch: expected %d bytes, got %d", img.Size, n)
	}
	return nil
}

// wipeHead zeroes the first MiB of dev, so a half-written image never
// boots.
func wipeHead(dev string) error {
	f, err := os.OpenFile(dev, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.WriteAt(make([]byte, MiB), 0); err != nil {
		return err
	}
	return f.Sync()
}

// alignUp rounds n up to a multiple of to.
func alignUp(n, to int64) int64 { return (n + to - 1) / to * to }
