package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// WhoAmI returns the user the API key belongs to (GET users/?op=whoami);
// it is the cheapest call that proves a key works.
func (c *Client) WhoAmI(ctx context.Context) (User, error) {
	body, err := c.Do(ctx, http.MethodGet, "users/", opQuery("whoami"), nil)
	if err != nil {
		return User{}, fmt.Errorf("whoami: %w", err)
	}
	var u User
	if err := json.Unmarshal(body, &u); err != nil {
		return User{}, fmt.Errorf("whoami: decoding answer: %w", err)
	}
	u.Raw = body
	return u, nil
}

// Version returns the server's version and capabilities (GET version/).
func (c *Client) Version(ctx context.Context) (VersionInfo, error) {
	body, err := c.Do(ctx, http.MethodGet, "version/", nil, nil)
	if err != nil {
		return VersionInfo{}, fmt.Errorf("version: %w", err)
	}
	var v VersionInfo
	if err := json.Unmarshal(body, &v); err != nil {
		return VersionInfo{}, fmt.Errorf("version: decoding answer: %w", err)
	}
	v.Raw = body
	return v, nil
}
