package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// Tag is a machine tag (tags/).
type Tag struct {
	Name       string `json:"name"`
	Comment    string `json:"comment"`
	Definition string `json:"definition"`
	KernelOpts string `json:"kernel_opts"`

	Raw json.RawMessage `json:"-"`
}

// Group is a zone (zones/) or a resource pool (resourcepools/): the two
// have the same fields.
type Group struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`

	Raw json.RawMessage `json:"-"`
}

func keepTag(t *Tag, raw json.RawMessage)     { t.Raw = raw }
func keepGroup(g *Group, raw json.RawMessage) { g.Raw = raw }

// ListTags returns every tag.
func (c *Client) ListTags(ctx context.Context) ([]Tag, error) {
	return list(ctx, c, "tags/", "list tags", keepTag)
}

// CreateTag adds a tag; form holds name, comment and kernel_opts.
func (c *Client) CreateTag(ctx context.Context, form url.Values) (Tag, error) {
	return create(ctx, c, "tags/", form, "create tag", keepTag)
}

// DeleteTag removes a tag (machines keep nothing of it).
func (c *Client) DeleteTag(ctx context.Context, name string) error {
	return c.remove(ctx, tagPath(name), "delete tag "+name)
}

// UpdateTagNodes adds the tag to the machines add names and takes it from
// those remove names (system ids), and returns the server's counts.
func (c *Client) UpdateTagNodes(ctx context.Context, name string, add, remove []string) (added, removed int, err error) {
	form := url.Values{"add": add, "remove": remove}
	body, err := c.Do(ctx, http.MethodPost, tagPath(name), opQuery("update_nodes"), form)
	if err != nil {
		return 0, 0, fmt.Errorf("tag %s: %w", name, err)
	}
	var n struct{ Added, Removed int }
	if err := json.Unmarshal(body, &n); err != nil {
		return 0, 0, fmt.Errorf("tag %s: decoding answer: %w", name, err)
	}
	return n.Added, n.Removed, nil
}

func tagPath(name string) string { return "tags/" + url.PathEscape(name) + "/" }

// ListZones returns every zone.
func (c *Client) ListZones(ctx context.Context) ([]Group, error) {
	return list(ctx, c, "zones/", "list zones", keepGroup)
}

// CreateZone adds a zone; form holds name and description.
func (c *Client) CreateZone(ctx context.Context, form url.Values) (Group, error) {
	return create(ctx, c, "zones/", form, "create zone", keepGroup)
}

// DeleteZone removes a zone by name, as MAAS addresses zones.
func (c *Client) DeleteZone(ctx context.Context, name string) error {
	return c.remove(ctx, "zones/"+url.PathEscape(name)+"/", "delete zone "+name)
}

// ListPools returns every resource pool.
func (c *Client) ListPools(ctx context.Context) ([]Group, error) {
	return list(ctx, c, "resourcepools/", "list resource pools", keepGroup)
}

// CreatePool adds a resource pool; form holds name and description.
func (c *Client) CreatePool(ctx context.Context, form url.Values) (Group, error) {
	return create(ctx, c, "resourcepools/", form, "create resource pool", keepGroup)
}

// DeletePool removes a resource pool by id, as MAAS addresses pools.
func (c *Client) DeletePool(ctx context.Context, id int64) error {
	return c.remove(ctx, "resourcepool/"+strconv.FormatInt(id, 10)+"/", "delete resource pool "+strconv.FormatInt(id, 10))
}
