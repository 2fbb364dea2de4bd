package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// BootResource is an uploaded image (boot-resources/). Sets is only in
// the answer for one resource (and to a create), not in the list.
type BootResource struct {
	ID           int64                      `json:"id"`
	Type         string                     `json:"type"`
	Name         string                     `json:"name"`
	Architecture string                     `json:"architecture"`
	Title        string                     `json:"title"`
	LastDeployed *string                    `json:"last_deployed"`
	Sets         map[string]BootResourceSet `json:"sets"`

	Raw json.RawMessage `json:"-"`
}

// BootResourceSet is one version of a resource's files.
type BootResourceSet struct {
	Version  string                      `json:"version"`
	Label    string                      `json:"label"`
	Size     int64                       `json:"size"`
	Complete bool                        `json:"complete"`
	Files    map[string]BootResourceFile `json:"files"`
}

// BootResourceFile is one file of a set. UploadURI and Received are set
// while it is incomplete: where its chunks go, and how many bytes the
// server has (Anvil's; a MAAS server leaves it 0).
type BootResourceFile struct {
	Filename  string  `json:"filename"`
	Filetype  string  `json:"filetype"`
	SHA256    string  `json:"sha256"`
	Size      int64   `json:"size"`
	Complete  bool    `json:"complete"`
	Progress  float64 `json:"progress"`
	Received  int64   `json:"received"`
	UploadURI string  `json:"upload_uri"`
}

func keepResource(b *BootResource, raw json.RawMessage) { b.Raw = raw }

// ListBootResources returns the uploaded images, without their files.
func (c *Client) ListBootResources(ctx context.Context) ([]BootResource, error) {
	return list(ctx, c, "boot-resources/", "list boot resources", keepResource)
}

// GetBootResource returns one image with its sets and files.
func (c *Client) GetBootResource(ctx context.Context, id int64) (BootResource, error) {
	what := "get boot resource " + strconv.FormatInt(id, 10)
	body, err := c.Do(ctx, http.MethodGet, bootResourcePath(id), nil, nil)
	if err != nil {
		return BootResource{}, fmt.Errorf("%s: %w", what, err)
	}
	var b BootResource
	if err := json.Unmarshal(body, &b); err != nil {
		return BootResource{}, fmt.Errorf("%s: decoding answer: %w", what, err)
	}
	b.Raw = body
	return b, nil
}

// CreateBootResource declares an image: form holds name, architecture,
// filetype, title, sha256 and size. The answer's file is incomplete, with
// an UploadURI for UploadChunk, unless the server already has the bytes.
func (c *Client) CreateBootResource(ctx context.Context, form url.Values) (BootResource, error) {
	return create(ctx, c, "boot-resources/", form, "create boot resource", keepResource)
}

// UploadChunk sends the next chunk of an incomplete file to its upload
// URI, as the server gave it, and returns the file as it now stands.
func (c *Client) UploadChunk(ctx context.Context, uploadURI string, chunk []byte) (BootResourceFile, error) {
	_, path, ok := strings.Cut(uploadURI, "/"+apiPrefix)
	if !ok {
		return BootResourceFile{}, fmt.Errorf("upload: the server's upload URI %q is not under %s", uploadURI, apiPrefix)
	}
	resp, err := c.sendBody(ctx, http.MethodPut, path, nil, bytes.NewReader(chunk), "application/octet-stream", "application/json")
	if err != nil {
		return BootResourceFile{}, fmt.Errorf("upload: %w", err)
	}
	defer resp.Body.Close()
	var f BootResourceFile
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&f); err != nil {
		return BootResourceFile{}, fmt.Errorf("upload: decoding answer: %w", err)
	}
	return f, nil
}

// DeleteBootResource removes an image and its files.
func (c *Client) DeleteBootResource(ctx context.Context, id int64) error {
	return c.remove(ctx, bootResourcePath(id), "delete boot resource "+strconv.FormatInt(id, 10))
}

func bootResourcePath(id int64) string { return "boot-resources/" + strconv.FormatInt(id, 10) + "/" }

// remove DELETEs a resource.
func (c *Client) remove(ctx context.Context, path, what string) error {
	if _, err := c.Do(ctx, http.MethodDelete, path, nil, nil); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}
