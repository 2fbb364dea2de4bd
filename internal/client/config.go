package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
)

// GetConfig returns a setting's value as the server answers it, in JSON
// ("noble", true, 30, null): GET maas/?op=get_config&name=NAME.
func (c *Client) GetConfig(ctx context.Context, name string) (json.RawMessage, error) {
	q := opQuery("get_config")
	q.Set("name", name)
	body, err := c.Do(ctx, http.MethodGet, "maas/", q, nil)
	if err != nil {
		return nil, fmt.Errorf("get setting %s: %w", name, err)
	}
	body = bytes.TrimSpace(body)
	if !json.Valid(body) {
		return nil, fmt.Errorf("get setting %s: the server's answer is not JSON", name)
	}
	return body, nil
}

// SetConfig sets a setting (POST maas/?op=set_config); the server parses
// value and refuses one it cannot take, or a name it does not know.
func (c *Client) SetConfig(ctx context.Context, name, value string) error {
	form := url.Values{"name": {name}, "value": {value}}
	if _, err := c.Do(ctx, http.MethodPost, "maas/", opQuery("set_config"), form); err != nil {
		return fmt.Errorf("set setting %s: %w", name, err)
	}
	return nil
}
