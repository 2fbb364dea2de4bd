package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/anvilmetal/anvil/internal/httpserve"
	"github.com/anvilmetal/anvil/internal/images"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

// Boot resources: MAAS's uploaded images.
//
//	GET    boot-resources/                      list (type=all|uploaded|synced)
//	POST   boot-resources/                      create; with content (multipart) in one request,
//	                                            or sha256 + size now and the bytes in chunks:
//	PUT    boot-resources/<id>/upload/<file>/   one chunk (application/octet-stream), in order
//	GET    boot-resources/<id>/                 one resource with its sets and files
//	DELETE boot-resources/<id>/
//	GET    images/<sha256>                      the bytes of a complete image, with Range
//
// The bytes live in package images (DATA/images/<sha256>), the rest in the
// store. A file is complete only once its bytes were verified and put in
// place; an upload that does not match its sha256 and size is refused
// with 400 and leaves nothing. images/<sha256> is anonymous, as MAAS's
// image downloads on port 5248 are: racks fetch from it, and machines
// fetch from their rack.

// bootFiletypes are MAAS's upload file types.
var bootFiletypes = []string{"tgz", "tbz", "txz", "ddtgz", "ddtbz", "ddtxz", "ddtar", "ddbz2", "ddgz", "ddxz", "ddraw"}

// bootOSes are the operating systems a "<os>/<release>" name may give
// (MAAS's registry); their names are reserved for custom images.
var bootOSes = []string{"ubuntu", "centos", "rhel", "ol", "rocky", "windows", "esxi", "suse", "opensuse", "sles", "debian", "custom"}

var bootArches = []string{"amd64", "arm64", "i386", "armhf", "ppc64el", "s390x", "riscv64"}

var (
	bootNamePart = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$`)
	bootSubarch  = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,31}$`)
)

func (s *Server) bootResourcesRoutes() []route {
	return []route{
		get("", authenticated, s.listBootResources),
		// create reads its body itself: an image of any size.
		{method: http.MethodPost, access: adminOnly, stream: s.createBootResource},
		get("is_importing", authenticated, func(w http.ResponseWriter, r *request) error {
			writeJSON(w, http.StatusOK, false)
			return nil
		}),
	}
}

func (s *Server) bootResourceRoutes() []route {
	return []route{
		get("", authenticated, s.showBootResource),
		put(adminOnly, s.updateBootResource),
		del(adminOnly, s.deleteBootResource),
	}
}

// bootResourceStreams registers the chunked upload, which reads bodies of
// any size itself, and the anonymous image download: neither is one of
// the API's described resources (MAAS hides its upload handler too).
func (s *Server) bootResourceStreams() {
	s.mux.HandleFunc("PUT "+Prefix+"boot-resources/{id}/upload/{file}/{$}", s.uploadBootResourceChunk)
	s.mux.HandleFunc("GET "+Prefix+"images/{sha256}", s.downloadImage)
}

func (s *Server) imagesOrUnavailable(w http.ResponseWriter) *images.Store {
	if s.opts.Images == nil {
		writeText(w, http.StatusServiceUnavailable, "this server keeps no images (no image directory configured)")
	}
	return s.opts.Images
}

func bootResourceURI(id int64) string { return Prefix + "boot-resources/" + itoa(id) + "/" }

// bootResourceJSON is MAAS's boot_resource_to_dict.
func (s *Server) bootResourceJSON(b store.BootResource, withSets bool) map[string]any {
	out := map[string]any{
		"id": b.ID, "type": "Uploaded", "name": b.Name, "architecture": b.Architecture,
		"resource_uri": bootResourceURI(b.ID), "last_deployed": nil, "title": b.Title,
	}
	if !b.LastDeployed.IsZero() {
		out["last_deployed"] = b.LastDeployed.UTC().Format(time.RFC3339)
	}
	if _, sub, ok := strings.Cut(b.Architecture, "/"); ok {
		out["subarches"] = sub
	}
	if b.BaseImage != "" {
		out["base_image"] = b.BaseImage
	}
	out["deployed_at"], _ = machine.ParseDeployedAt(string(b.DeployedAt))
	if !withSets {
		return out
	}
	sets := map[string]any{}
	for _, f := range b.Files {
		fj := s.bootFileJSON(b.ID, f)
		set := map[string]any{
			"version": f.Version, "label": f.Label, "size": f.Size, "complete": f.Complete,
			"files": map[string]any{f.Filename: fj},
		}
		if !f.Complete {
			set["progress"] = fj["progress"]
		}
		sets[f.Version] = set
	}
	out["sets"] = sets
	return out
}

func (s *Server) bootFileJSON(resourceID int64, f store.BootResourceFile) map[string]any {
	out := map[string]any{
		"filename": f.Filename, "filetype": f.Filetype, "sha256": f.SHA256, "filename_on_disk": f.SHA256,
		"size": f.Size, "complete": f.Complete,
	}
	if !f.Complete {
		var got int64
		if s.opts.Images != nil {
			got = s.opts.Images.Received(f.ID)
		}
		out["progress"] = 100 * float64(got) / float64(max(f.Size, 1))
		// received is Anvil's: the exact offset the next chunk goes to.
		out["received"] = got
		out["upload_uri"] = bootResourceURI(resourceID) + "upload/" + itoa(f.ID) + "/"
	}
	return out
}

func (s *Server) listBootResources(w http.ResponseWriter, r *request) error {
	switch t := r.form.Get("type"); t {
	case "", "all", "uploaded":
	case "synced":
		writeJSON(w, http.StatusOK, []any{})
		return nil
	default:
		return badField("type", "%q is not a valid boot resource type. Available types: synced, uploaded", truncate(t, 40))
	}
	list, err := s.store.ListBootResources(r.Context())
	if err != nil {
		return err
	}
	out := make([]map[string]any, 0, len(list))
	for _, b := range list {
		out = append(out, s.bootResourceJSON(b, false))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// bootResourceID parses a path id; anything else is not found.
func (s *Server) bootResource(ctx context.Context, id string) (store.BootResource, error) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n <= 0 {
		return store.BootResource{}, fmt.Errorf("boot resource %q %w", truncate(id, 40), store.ErrNotFound)
	}
	return s.store.GetBootResource(ctx, n)
}

func (s *Server) showBootResource(w http.ResponseWriter, r *request) error {
	b, err := s.bootResource(r.Context(), r.id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.bootResourceJSON(b, true))
	return nil
}

// updateBootResource changes an image's deployed_at, the one setting that
// is not part of its bytes.
func (s *Server) updateBootResource(w http.ResponseWriter, r *request) error {
	b, err := s.bootResource(r.Context(), r.id)
	if err != nil {
		return err
	}
	if !r.form.Has("deployed_at") {
		return badField("deployed_at", "nothing to change: only deployed_at can be updated")
	}
	d, err := deployedAtField(r)
	if err != nil {
		return err
	}
	if b, err = s.store.SetBootResourceDeployedAt(r.Context(), b.ID, d); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.bootResourceJSON(b, true))
	return nil
}

func deployedAtField(r *request) (machine.DeployedAt, error) {
	v := strings.TrimSpace(r.form.Get("deployed_at"))
	d, err := machine.ParseDeployedAt(v)
	if err != nil {
		return "", badField("deployed_at", "%v", err)
	}
	if v == "" {
		return "", nil // an upload without it keeps the stored setting
	}
	return d, nil
}

func (s *Server) deleteBootResource(w http.ResponseWriter, r *request) error {
	imgs := s.imagesOrUnavailable(w)
	if imgs == nil {
		return nil
	}
	b, err := s.bootResource(r.Context(), r.id)
	if err != nil {
		return err
	}
	removed, err := s.store.DeleteBootResource(r.Context(), b.ID)
	if err != nil {
		return err
	}
	s.dropImageFiles(r.Context(), imgs, removed)
	writeNoContent(w)
	return nil
}

// dropImageFiles forgets the uploads of files no longer in the store and
// removes the images no file names any more.
func (s *Server) dropImageFiles(ctx context.Context, imgs *images.Store, files []store.BootResourceFile) {
	for _, f := range files {
		if err := imgs.DropPartial(f.ID); err != nil {
			s.log.Warn("cannot remove a partial image upload", "file", f.ID, "err", err)
		}
		unlock := imgs.Lock(f.SHA256)
		users, err := s.store.BootResourceFilesBySHA256(ctx, f.SHA256)
		if err == nil && len(users) == 0 {
			err = imgs.Remove(f.SHA256)
		}
		unlock()
		if err != nil {
			s.log.Warn("cannot remove an image", "sha256", f.SHA256, "err", err)
		}
	}
}

// uploadAuth authenticates a request the streaming handlers read
// themselves and lets administrators through; it answers and returns
// false otherwise.
func (s *Server) uploadAuth(w http.ResponseWriter, r *http.Request) bool {
	who, err := s.authenticate(r)
	switch {
	case err != nil:
		s.writeError(w, r, err)
	case who.anonymous():
		s.writeError(w, r, errUnauthorized{"credentials are required for this operation"})
	case !who.user.Admin:
		writeText(w, http.StatusForbidden, "This operation needs an administrator")
	default:
		return true
	}
	return false
}

// bootSpec is a validated create request.
type bootSpec struct {
	res       store.BootResource
	file      store.BootResourceFile
	sha256    string // "" when not given (content was sent)
	size      int64  // -1 when not given
	haveBytes bool
}

// createBootResource is POST boot-resources/. A multipart body is read
// as a stream, so the content may be any size up to the image limit and
// may come before or after the other fields; the content goes to a
// temporary file and is kept only if everything checks.
func (s *Server) createBootResource(w http.ResponseWriter, hr *http.Request) {
	imgs := s.imagesOrUnavailable(w)
	if imgs == nil || !s.uploadAuth(w, hr) {
		return
	}
	httpserve.Upload(w, hr)
	r := &request{Request: hr}
	var tmp *images.Temp
	var err error
	if ct, _, _ := mime.ParseMediaType(hr.Header.Get("Content-Type")); ct == "multipart/form-data" {
		tmp, err = s.readUpload(w, r, imgs)
	} else {
		err = s.parseForm(w, r, s.opts.MaxBody)
	}
	if tmp != nil {
		defer tmp.Discard()
	}
	if err == nil {
		err = s.createBootResourceFrom(w, r, imgs, tmp)
	}
	if err != nil {
		s.writeUploadError(w, hr, err)
	}
}

func (s *Server) createBootResourceFrom(w http.ResponseWriter, r *request, imgs *images.Store, tmp *images.Temp) error {
	if op := r.form.Get("op"); op != "" {
		writeText(w, http.StatusBadRequest, fmt.Sprintf("Unrecognised signature: method=POST op=%s", truncate(op, 40)))
		return nil
	}
	spec, err := bootSpecFrom(r, tmp != nil)
	if err != nil {
		return err
	}
	ctx := r.Context()
	if tmp != nil {
		// Checked here so that a mismatch leaves not even an incomplete
		// resource behind.
		if err := images.CheckDeclared(tmp, spec.sha256, spec.size); err != nil {
			return err
		}
		spec.file.SHA256, spec.file.Size = tmp.Sum, tmp.Size
	} else {
		if err := imgs.CheckSize(spec.size); err != nil {
			return badField("size", "%v", err)
		}
		spec.file.SHA256, spec.file.Size = spec.sha256, spec.size
	}
	// The file is created incomplete and completed once its bytes are in
	// place, which also drops the sets it replaces.
	b, err := s.store.CreateBootResource(ctx, spec.res, spec.file)
	if err != nil {
		return err
	}
	f := b.Files[0]
	// Anything under the new file's id is left from another database.
	if err := imgs.DropPartial(f.ID); err != nil {
		return err
	}
	install := func() error { return imgs.Commit(tmp, spec.sha256, spec.size) }
	if tmp == nil {
		// Bytes already here (another resource's) need no upload; the
		// check runs under the image's lock, so no removal can slip in.
		install = func() error {
			if imageSize(imgs, f.SHA256) != f.Size {
				return errNoBytes
			}
			return nil
		}
	}
	// On failure the file stays incomplete: never served, and resumable
	// at its upload_uri.
	switch err := s.completeImageFile(ctx, imgs, f, install); {
	case errors.Is(err, errNoBytes):
	case err != nil:
		return err
	default:
		if b, err = s.store.GetBootResource(ctx, b.ID); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusCreated, s.bootResourceJSON(b, true))
	return nil
}

// errNoBytes is a declared file whose bytes are not here yet.
var errNoBytes = errors.New("image bytes not here yet")

func imageSize(imgs *images.Store, sum string) int64 {
	f, fi, err := imgs.Open(sum)
	if err != nil {
		return -1
	}
	f.Close()
	return fi.Size()
}

// readUpload streams a multipart create: fields into r.form (bounded in
// number and size), the "content" part into a temporary image file, each
// part's transfer encoding undone (the maas CLI sends base64 parts).
func (s *Server) readUpload(w http.ResponseWriter, r *request, imgs *images.Store) (*images.Temp, error) {
	r.Body = http.MaxBytesReader(w, r.Body, maxImageBody(imgs))
	r.form = url.Values{}
	for k, v := range r.URL.Query() {
		r.form[k] = v
	}
	_, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var tmp *images.Temp
	_, err := readMultipart(r.Body, params["boundary"], r.form, multipartOptions{maxParts: 64, maxField: 4096,
		stream: func(name string, body io.Reader) (bool, error) {
			switch {
			case name != "content":
				return false, nil
			case tmp != nil:
				return true, badField("content", "content given twice")
			}
			t, err := imgs.Receive(body)
			if err == nil {
				tmp = t
			}
			return true, err
		}})
	if err != nil {
		if tmp != nil {
			tmp.Discard()
		}
		var fe *fieldError
		if errors.As(err, &fe) || errors.Is(err, images.ErrTooLarge) {
			return nil, err
		}
		return nil, badBody(err)
	}
	return tmp, nil
}

// maxImageBody is the largest multipart body accepted: an image of the
// maximum size and its fields.
func maxImageBody(imgs *images.Store) int64 {
	m := imgs.MaxSize
	if m <= 0 {
		m = images.DefaultMaxSize
	}
	return m + 1<<20
}

// bootSpecFrom validates the create fields as MAAS's BootResourceForm
// does; haveBytes says the content came with them.
func bootSpecFrom(r *request, haveBytes bool) (bootSpec, error) {
	sp := bootSpec{size: -1, haveBytes: haveBytes}
	name, err := bootName(strings.TrimSpace(r.form.Get("name")))
	if err != nil {
		return sp, err
	}
	arch, err := bootArch(strings.TrimSpace(r.form.Get("architecture")))
	if err != nil {
		return sp, err
	}
	ft := strings.TrimSpace(r.form.Get("filetype"))
	if ft == "" {
		ft = "tgz"
	}
	if !slices.Contains(bootFiletypes, ft) {
		return sp, badField("filetype", "%q is not one of the available choices: %s", truncate(ft, 40), strings.Join(bootFiletypes, ", "))
	}
	title := strings.TrimSpace(r.form.Get("title"))
	if len(title) > 255 || strings.ContainsFunc(title, func(c rune) bool { return c < 0x20 || c == 0x7f }) {
		return sp, badField("title", "at most 255 printable characters")
	}
	base := strings.TrimSpace(r.form.Get("base_image"))
	if base != "" {
		os, rel, ok := strings.Cut(base, "/")
		if !ok || !slices.Contains(bootOSes, os) || os == "custom" || !bootNamePart.MatchString(rel) {
			return sp, badField("base_image", "a base image must follow the format <osystem>/<series>, e.g. ubuntu/noble")
		}
	}
	if v := strings.ToLower(strings.TrimSpace(r.form.Get("sha256"))); v != "" || !haveBytes {
		if !images.ValidSHA256(v) {
			return sp, badField("sha256", "64 hexadecimal digits are required (the SHA-256 of the file)")
		}
		sp.sha256 = v
	}
	if v := strings.TrimSpace(r.form.Get("size")); v != "" || !haveBytes {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return sp, badField("size", "%q is not a positive number of bytes", truncate(v, 40))
		}
		sp.size = n
	}
	deployedAt, err := deployedAtField(r)
	if err != nil {
		return sp, err
	}
	sp.res = store.BootResource{Name: name, Architecture: arch, Title: title, BaseImage: base, DeployedAt: deployedAt}
	sp.file = store.BootResourceFile{Filetype: ft, Filename: bootFilename(ft), Label: "uploaded"}
	return sp, nil
}

// bootName cleans a name as MAAS does: "custom/x" is the custom image x,
// "<os>/<release>" must name a known OS, and OS names are reserved.
func bootName(name string) (string, error) {
	if name == "" {
		return "", badField("name", "This field is required.")
	}
	if len(name) > 128 {
		return "", badField("name", "at most 128 characters")
	}
	os, rel, hasOS := strings.Cut(name, "/")
	if hasOS && os == "custom" {
		name, hasOS = rel, false
	}
	if hasOS && !slices.Contains(bootOSes, os) {
		return "", badField("name", "Unsupported operating system %s, supported operating systems: %s", truncate(os, 40), strings.Join(bootOSes, ", "))
	}
	if hasOS {
		if !bootNamePart.MatchString(rel) {
			return "", badField("name", "release %q: use letters, digits, '.', '_', '+' and '-'", truncate(rel, 40))
		}
		return name, nil
	}
	if !bootNamePart.MatchString(name) {
		return "", badField("name", "%q: use letters, digits, '.', '_', '+' and '-', and at most one '/'", truncate(name, 40))
	}
	if slices.Contains(bootOSes, name) {
		return "", badField("name", "%s is a reserved name", name)
	}
	return name, nil
}

// bootArch takes "amd64/generic" or just "amd64" (meaning generic).
func bootArch(arch string) (string, error) {
	a, sub, ok := strings.Cut(arch, "/")
	if !ok {
		sub = "generic"
	}
	if !slices.Contains(bootArches, a) || !bootSubarch.MatchString(sub) {
		return "", badField("architecture", "%q is not a valid architecture: use <arch>/<subarch> with arch one of %s",
			truncate(arch, 40), strings.Join(bootArches, ", "))
	}
	return a + "/" + sub, nil
}

// bootFilename is MAAS's name for an uploaded file: root tarballs keep an
// extension, the rest are named by their type.
func bootFilename(filetype string) string {
	switch filetype {
	case "tgz", "tbz", "txz":
		return "root." + filetype
	}
	return filetype
}

// writeUploadError answers upload failures: mismatches and size refusals
// are the client's (400), the rest as any API error.
func (s *Server) writeUploadError(w http.ResponseWriter, r *http.Request, err error) {
	var me *images.MismatchError
	switch {
	case errors.As(err, &me) && me.What == "sha256":
		writeText(w, http.StatusBadRequest, "Saved content does not match given SHA256 value: "+me.Error())
	case errors.As(err, &me):
		writeText(w, http.StatusBadRequest, "Saved content does not match given size: "+me.Error())
	case errors.Is(err, images.ErrBeyondSize):
		writeText(w, http.StatusBadRequest, "Too much data received: "+err.Error())
	case errors.Is(err, images.ErrShort):
		writeText(w, http.StatusBadRequest, "Content-Length doesn't equal size of received data: "+err.Error())
	case errors.Is(err, images.ErrTooLarge):
		writeText(w, http.StatusRequestEntityTooLarge, err.Error())
	default:
		s.writeError(w, r, err)
	}
}

// uploadBootResourceChunk is PUT boot-resources/<id>/upload/<file>/: one
// chunk, appended where the last one ended. The last chunk verifies the
// whole file and, if it matches, completes it.
func (s *Server) uploadBootResourceChunk(w http.ResponseWriter, r *http.Request) {
	imgs := s.imagesOrUnavailable(w)
	if imgs == nil || !s.uploadAuth(w, r) {
		return
	}
	httpserve.Upload(w, r)
	if err := s.uploadChunk(w, r, imgs); err != nil {
		s.writeUploadError(w, r, err)
	}
}

func (s *Server) uploadChunk(w http.ResponseWriter, r *http.Request, imgs *images.Store) error {
	b, err := s.bootResource(r.Context(), r.PathValue("id"))
	if err != nil {
		return namedNotFound(err, "BootResource")
	}
	i := slices.IndexFunc(b.Files, func(f store.BootResourceFile) bool { return itoa(f.ID) == r.PathValue("file") })
	if i < 0 {
		return noSuch("BootResourceFile")
	}
	f := b.Files[i]
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "" && ct != "application/octet-stream" {
		writeText(w, http.StatusUnsupportedMediaType, fmt.Sprintf("%q is not accepted: send the chunk as application/octet-stream", truncate(ct, 60)))
		return nil
	}
	switch {
	case f.Complete:
		writeText(w, http.StatusBadRequest, "Cannot upload to a complete file.")
		return nil
	case r.ContentLength == 0:
		writeText(w, http.StatusBadRequest, "Missing data.")
		return nil
	}
	got, err := imgs.Append(f.ID, r.Body, r.ContentLength, f.Size)
	if err != nil {
		return err
	}
	if got == f.Size {
		if err := s.completeImageFile(r.Context(), imgs, f, func() error { return imgs.Finish(f.ID, f.SHA256, f.Size) }); err != nil {
			return err
		}
		f.Complete = true
	}
	writeJSON(w, http.StatusOK, s.bootFileJSON(b.ID, f))
	return nil
}

// completeImageFile runs install (which puts f's verified bytes in place)
// and marks f complete, holding the image's lock throughout so that no
// removal of the same bytes can come between; then it removes what the
// file replaced.
func (s *Server) completeImageFile(ctx context.Context, imgs *images.Store, f store.BootResourceFile, install func() error) error {
	removed, err := func() ([]store.BootResourceFile, error) {
		defer imgs.Lock(f.SHA256)()
		if err := install(); err != nil {
			return nil, err
		}
		return s.store.CompleteBootResourceFile(ctx, f.ID)
	}()
	if err != nil {
		return err
	}
	s.dropImageFiles(ctx, imgs, removed)
	return nil
}

// downloadImage serves a complete image's bytes to racks and machines.
// Only bytes a complete file names are served.
func (s *Server) downloadImage(w http.ResponseWriter, r *http.Request) {
	imgs := s.imagesOrUnavailable(w)
	if imgs == nil {
		return
	}
	sum := r.PathValue("sha256")
	if !images.ValidSHA256(sum) {
		writeText(w, http.StatusNotFound, "no image with that name: images are named by their lower-case hex sha256")
		return
	}
	files, err := s.store.BootResourceFilesBySHA256(r.Context(), sum)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	i := slices.IndexFunc(files, func(f store.BootResourceFile) bool { return f.Complete })
	if i < 0 {
		writeText(w, http.StatusNotFound, "no complete image with sha256 "+sum)
		return
	}
	if !imgs.Has(sum) && r.Header.Get(PeerHeader) == "" {
		unlock := imgs.Lock(sum)
		var err error
		if !imgs.Has(sum) { // another request may have fetched it meanwhile
			err = s.fetchFromPeers(r.Context(), imgs, sum, files[i].Size)
		}
		unlock()
		if err != nil {
			s.log.Warn("image not on this region's disk and not fetched", "sha256", sum, "err", err)
			writeText(w, http.StatusServiceUnavailable, "image "+sum+" is complete, but its bytes are on another region that could not be reached: "+err.Error())
			return
		}
	}
	imgs.Serve(w, r, sum)
}
