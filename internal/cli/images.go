package cli

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/anvilmetal/anvil/internal/client"
)

// Images are MAAS's uploaded boot resources (boot-resources/): a name, an
// architecture and the file deploys write to the disk.

// uploadChunk is the size of one PUT of an upload, as MAAS's clients send.
const uploadChunk = 4 << 20

func imagesCmd(o *options) *cobra.Command {
	cmd := &cobra.Command{Use: "images", Short: "Work with the images machines deploy (boot resources)"}
	cmd.AddCommand(imagesListCmd(o), imageUploadCmd(o), imageDeleteCmd(o))
	return cmd
}

func imagesListCmd(o *options) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use: "list", Aliases: []string{"ls"}, Short: "List uploaded images", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			bs, err := c.ListBootResources(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return printJSONList(cmd.OutOrStdout(), raws(bs, func(b client.BootResource) json.RawMessage { return b.Raw }))
			}
			slices.SortStableFunc(bs, func(a, b client.BootResource) int { return cmp.Compare(a.ID, b.ID) })
			rows := make([][]string, len(bs))
			for i, b := range bs {
				// The list carries no files; each resource's answer does.
				full, err := c.GetBootResource(cmd.Context(), b.ID)
				if err != nil {
					return err
				}
				ready, pending := imageFiles(full)
				state := "incomplete"
				if ready != nil {
					state = "ready"
				}
				if pending != nil {
					state += fmt.Sprintf(" (upload at %.0f%%)", pending.Progress)
				}
				shown := cmp.Or(ready, pending, &client.BootResourceFile{})
				size := "-"
				if shown.Size > 0 {
					size = byteSize(shown.Size)
				}
				rows[i] = []string{strconv.FormatInt(b.ID, 10), b.Name, b.Architecture, shown.Filetype, size, state, deref(b.LastDeployed), b.Title}
			}
			printTable(cmd.OutOrStdout(), "", []string{"ID", "NAME", "ARCHITECTURE", "FILETYPE", "SIZE", "STATE", "LAST_DEPLOYED", "TITLE"}, rows)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON")
	return cmd
}

// imageFiles returns a resource's newest complete file and its newest
// incomplete one (an upload under way), either nil.
func imageFiles(b client.BootResource) (ready, pending *client.BootResourceFile) {
	for _, f := range filesOldestFirst(b) {
		if f.Complete {
			ready = &f
		} else {
			pending = &f
		}
	}
	return ready, pending
}

// filesOldestFirst lists a resource's files in the order of their sets'
// versions.
func filesOldestFirst(b client.BootResource) []client.BootResourceFile {
	versions := make([]string, 0, len(b.Sets))
	for v := range b.Sets {
		versions = append(versions, v)
	}
	slices.SortFunc(versions, compareVersions)
	var out []client.BootResourceFile
	for _, v := range versions {
		for _, f := range b.Sets[v].Files {
			out = append(out, f)
		}
	}
	return out
}

// compareVersions orders set versions ("20261203", "20261203.10") by
// their dotted numbers.
func compareVersions(a, b string) int {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		if c := cmp.Compare(len(pa[i]), len(pb[i])); c != 0 {
			return c
		}
		if c := strings.Compare(pa[i], pb[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(pa), len(pb))
}

func imageUploadCmd(o *options) *cobra.Command {
	var name, arch, filetype, title string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "upload FILE",
		Short: "Upload a root filesystem tarball or a disk image",
		Long: "Upload a root filesystem tarball (.tar.gz, .tar.xz, .tar.bz2) or a whole-disk image (raw, or gzip or xz of one)\n" +
			"for machines to deploy with 'anvil machine deploy ID --image NAME'. The file type is read from the content;\n" +
			"--filetype, when given, must agree with it. On a terminal a progress line shows the upload.",
		Example: "  anvil images upload debian-12.tar.gz --name debian-12\n  anvil images upload disk.img.xz --name appliance --arch arm64/generic",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if name == "" {
				return errors.New("--name is required: the name deploys give with --image")
			}
			f, size, ft, err := openImage(args[0], filetype)
			if err != nil {
				return err
			}
			defer f.Close()
			c, err := o.client()
			if err != nil {
				return err
			}
			b, resumed, err := uploadImage(cmd, c, f, size, url.Values{
				"name": {name}, "architecture": {arch}, "filetype": {ft}, "title": {title},
			})
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), b.Raw)
			}
			how := "uploaded"
			if resumed > 0 {
				how += " (resumed after " + byteSize(resumed) + ")"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Image %d: %s %s, %s, %s, %s.\n", b.ID, clean(b.Name), clean(b.Architecture), ft, byteSize(size), how)
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "name to deploy it by: NAME (a custom image) or OS/RELEASE, e.g. ubuntu/noble")
	cmd.Flags().StringVar(&arch, "arch", "amd64/generic", "architecture of the machines it is for (ARCH or ARCH/SUBARCH)")
	cmd.Flags().StringVar(&filetype, "filetype", "", "tgz, tbz, txz (root tarballs) or ddraw, ddgz, ddxz (disk images); default: from the content")
	cmd.Flags().StringVar(&title, "title", "", "title shown with the image")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON for the image")
	return cmd
}

// openImage opens an image file and checks it is one Anvil can deploy,
// returning it positioned at the start with its size and file type.
func openImage(path, filetype string) (*os.File, int64, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, "", err
	}
	fail := func(err error) (*os.File, int64, string, error) {
		f.Close()
		return nil, 0, "", fmt.Errorf("%s: %w", path, err)
	}
	fi, err := f.Stat()
	switch {
	case err != nil:
		return fail(err)
	case !fi.Mode().IsRegular():
		return fail(errors.New("not a regular file"))
	case fi.Size() == 0:
		return fail(errors.New("the file is empty"))
	}
	found, err := sniffImage(f)
	if err != nil {
		return fail(err)
	}
	ft, err := checkFiletype(filetype, found)
	if err != nil {
		return fail(err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fail(err)
	}
	return f, fi.Size(), ft, nil
}

// uploadImage declares the image with its SHA-256 and size, then sends
// the bytes in chunks from where the server's copy ends, as MAAS's
// clients do; a server that already has the bytes needs none. An upload
// of the same bytes to the same image left unfinished is taken up where
// it stopped. It returns the image and the bytes a resumed upload had.
func uploadImage(cmd *cobra.Command, c *client.Client, f *os.File, size int64, form url.Values) (client.BootResource, int64, error) {
	ctx := cmd.Context()
	base := filepath.Base(f.Name())
	sum, err := hashImage(newProgress(cmd.ErrOrStderr(), "Checking "+base, size), f)
	if err != nil {
		return client.BootResource{}, 0, fmt.Errorf("%s: %w", f.Name(), err)
	}
	b, file, err := unfinished(ctx, c, form, sum, size)
	if err != nil {
		return b, 0, err
	}
	if file == nil {
		form.Set("sha256", sum)
		form.Set("size", strconv.FormatInt(size, 10))
		if b, err = c.CreateBootResource(ctx, form); err != nil {
			return b, 0, err
		}
		// The file just declared is the newest of those with these bytes.
		for _, fl := range filesOldestFirst(b) {
			if fl.SHA256 == sum {
				file = &fl
			}
		}
		if file == nil || file.Complete || file.UploadURI == "" {
			return b, 0, nil // the server had these bytes already
		}
	}
	if err := sendChunks(ctx, c, newProgress(cmd.ErrOrStderr(), "Uploading "+base, size), f, *file); err != nil {
		return b, 0, fmt.Errorf("%w (image %d stays incomplete: upload it again to resume, or anvil images delete %d)", err, b.ID, b.ID)
	}
	b, err = c.GetBootResource(ctx, b.ID)
	return b, file.Received, err
}

// unfinished finds an incomplete file of the image form names (the same
// name, architecture and title) with these bytes, or returns nil.
func unfinished(ctx context.Context, c *client.Client, form url.Values, sum string, size int64) (client.BootResource, *client.BootResourceFile, error) {
	name, arch := strings.TrimPrefix(form.Get("name"), "custom/"), form.Get("architecture")
	if !strings.Contains(arch, "/") {
		arch += "/generic"
	}
	bs, err := c.ListBootResources(ctx)
	if err != nil {
		return client.BootResource{}, nil, err
	}
	for _, b := range bs {
		if b.Name != name || b.Architecture != arch || b.Title != form.Get("title") {
			continue
		}
		full, err := c.GetBootResource(ctx, b.ID)
		if err != nil {
			return full, nil, err
		}
		var file *client.BootResourceFile
		for _, fl := range filesOldestFirst(full) {
			if fl.SHA256 == sum && fl.Size == size && !fl.Complete && fl.UploadURI != "" {
				file = &fl
			}
		}
		return full, file, nil
	}
	return client.BootResource{}, nil, nil
}

func hashImage(p *progress, f *os.File) (string, error) {
	defer p.end()
	h := sha256.New()
	buf := make([]byte, 1<<20)
	var done int64
	for {
		n, err := f.Read(buf)
		h.Write(buf[:n])
		done += int64(n)
		p.update(done)
		if errors.Is(err, io.EOF) {
			return hex.EncodeToString(h.Sum(nil)), nil
		}
		if err != nil {
			return "", err
		}
	}
}

func sendChunks(ctx context.Context, c *client.Client, p *progress, f *os.File, file client.BootResourceFile) error {
	defer p.end()
	off := file.Received
	p.base = off
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return err
	}
	buf := make([]byte, uploadChunk)
	for off < file.Size {
		n, err := io.ReadFull(f, buf[:min(uploadChunk, file.Size-off)])
		if err != nil {
			return fmt.Errorf("reading %s at %d: %w (did it change since it was checked?)", f.Name(), off, err)
		}
		got, err := c.UploadChunk(ctx, file.UploadURI, buf[:n])
		if err != nil {
			return err
		}
		off += int64(n)
		p.update(off)
		if got.Complete {
			return nil
		}
	}
	return nil
}

func imageDeleteCmd(o *options) *cobra.Command {
	var arch string
	cmd := &cobra.Command{
		Use: "delete ID|NAME", Short: "Delete an image and its files", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			b, err := findImage(cmd.Context(), c, args[0], arch)
			if err != nil {
				return err
			}
			if err := c.DeleteBootResource(cmd.Context(), b.ID); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Deleted image %d (%s %s).\n", b.ID, clean(b.Name), clean(b.Architecture))
			return nil
		},
	}
	cmd.Flags().StringVar(&arch, "arch", "", "architecture, when several images have the name")
	return cmd
}

// findImage finds an image by id, or by name (custom/NAME or NAME for a
// custom image) and, if given, architecture.
func findImage(ctx context.Context, c *client.Client, ref, arch string) (client.BootResource, error) {
	bs, err := c.ListBootResources(ctx)
	if err != nil {
		return client.BootResource{}, err
	}
	name := strings.TrimPrefix(ref, "custom/")
	var found []client.BootResource
	for _, b := range bs {
		if strconv.FormatInt(b.ID, 10) == ref {
			return b, nil
		}
		if b.Name == name && (arch == "" || b.Architecture == arch || strings.TrimSuffix(b.Architecture, "/generic") == arch) {
			found = append(found, b)
		}
	}
	switch len(found) {
	case 0:
		return client.BootResource{}, fmt.Errorf("no image %q (give its id or name; anvil images list shows them)", ref)
	case 1:
		return found[0], nil
	}
	var which []string
	for _, b := range found {
		which = append(which, fmt.Sprintf("%d (%s)", b.ID, b.Architecture))
	}
	return client.BootResource{}, fmt.Errorf("image name %q is ambiguous: images %s have it; give an id or --arch", ref, strings.Join(which, ", "))
}
