// Package client speaks the MAAS 2.0 REST API as Anvil serves it: OAuth
// PLAINTEXT signing, form-encoded requests, op= dispatch, JSON answers and
// the event stream. It knows nothing of the CLI; anything that needs to talk
// to an Anvil (or MAAS) server from Go can use it.
package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// apiPrefix is where API 2.0 lives below the base URL.
const apiPrefix = "api/2.0/"

// Client talks to one server with one API key. Its zero value is not usable;
// create it with New. A Client is safe for concurrent use.
type Client struct {
	// HTTP is the transport. New sets one without an overall timeout, since
	// the event stream stays open indefinitely; bound calls with contexts.
	HTTP *http.Client
	// UserAgent is sent with every request.
	UserAgent string
	// OnWatchRetry, if set, is told why WatchEvents lost its stream and how
	// long it will wait before reconnecting, so a CLI can say so.
	OnWatchRetry func(err error, wait time.Duration)

	// bases are the servers, normalised, each ending in "/MAAS/"; cur
	// is the one requests go to. Regions sharing one database answer
	// alike, so a request that cannot reach one moves the next to the
	// one after it.
	bases []*url.URL
	cur   atomic.Int32
	creds Credentials

	// Seams for tests; New sets real ones.
	now                          func() time.Time
	nonce                        func() string
	retryMin, retryMax, idleTime time.Duration
}

// Anonymous, as New's key, makes a client that sends no credentials (a
// rack enrolling, before it has any).
const Anonymous = ""

// New returns a client for the server at baseURL (see NormalizeURL) that
// signs requests with apiKey ("consumer:token:secret").
func New(baseURL, apiKey string) (*Client, error) {
	return NewMulti([]string{baseURL}, apiKey)
}

// NewMulti returns a client for several servers that answer alike
// (regions sharing one database). Requests go to the first; one that
// cannot reach its server (no connection, no answer) fails as before,
// and the requests after it go to the next server, round the list.
func NewMulti(baseURLs []string, apiKey string) (*Client, error) {
	if len(baseURLs) == 0 {
		return nil, errors.New("server URL is empty")
	}
	var bases []*url.URL
	for _, b := range baseURLs {
		norm, err := NormalizeURL(b)
		if err != nil {
			return nil, err
		}
		base, err := url.Parse(norm)
		if err != nil {
			return nil, fmt.Errorf("server URL: %w", err)
		}
		bases = append(bases, base)
	}
	var creds Credentials
	var err error
	if apiKey != Anonymous {
		if creds, err = ParseAPIKey(apiKey); err != nil {
			return nil, err
		}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// A server that accepts the connection and then says nothing should not
	// hang the CLI; two minutes leaves room for a slow power query.
	tr.ResponseHeaderTimeout = 2 * time.Minute
	return &Client{
		HTTP:      &http.Client{Transport: tr},
		UserAgent: "anvil-client",
		bases:     bases,
		creds:     creds,
		now:       time.Now,
		nonce:     newNonce,
		retryMin:  time.Second,
		retryMax:  10 * time.Second,
		idleTime:  2 * time.Minute,
	}, nil
}

// BaseURL returns the normalised URL of the server requests go to now,
// e.g. "http://host:5240/MAAS/".
func (c *Client) BaseURL() string { return c.bases[c.cur.Load()].String() }

// NormalizeURL turns what a user types into the base URL the API hangs off:
// "host:5240", "http://host:5240", ".../MAAS" and ".../MAAS/api/2.0/" all
// become "http://host:5240/MAAS/". A path in front of /MAAS (a reverse
// proxy's prefix) is kept.
func NormalizeURL(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", errors.New("server URL is empty")
	}
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("server URL %q: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("server URL %q: scheme must be http or https", raw)
	}
	if u.Host == "" {
		return "", fmt.Errorf("server URL %q: no host", raw)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("server URL %q: must not carry a query, fragment or user info", raw)
	}
	p := strings.TrimRight(u.Path, "/")
	p = strings.TrimSuffix(p, "/api/2.0")
	if !strings.HasSuffix(p, "/MAAS") {
		p += "/MAAS"
	}
	u.Path, u.RawPath = p+"/", ""
	return u.String(), nil
}

// Do sends one API request and returns the body of a 2xx answer. path is
// relative to api/2.0/ ("machines/abc123/"); query goes in the URL (op=
// included); form, if non-nil, is sent form-urlencoded, as MAAS expects for
// POST and PUT. Any other status is returned as *APIError.
func (c *Client) Do(ctx context.Context, method, path string, query, form url.Values) ([]byte, error) {
	resp, err := c.send(ctx, method, path, query, form, "application/json")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading answer: %w", method, path, err)
	}
	return body, nil
}

// send signs and sends a request and checks its status; the caller owns the
// body of a successful answer.
func (c *Client) send(ctx context.Context, method, path string, query, form url.Values, accept string) (*http.Response, error) {
	if form == nil {
		return c.sendBody(ctx, method, path, query, nil, "", accept)
	}
	return c.sendBody(ctx, method, path, query, strings.NewReader(form.Encode()), "application/x-www-form-urlencoded", accept)
}

// sendBody is send with any body (nil for none) of the given content type.
func (c *Client) sendBody(ctx context.Context, method, path string, query url.Values, body io.Reader, contentType, accept string) (*http.Response, error) {
	at := c.cur.Load()
	u := c.bases[at].String() + apiPrefix + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", accept)
	req.Header.Set("User-Agent", c.UserAgent)
	if c.creds.TokenKey != "" {
		req.Header.Set("Authorization", c.creds.authorization(c.now(), c.nonce()))
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		if ctx.Err() == nil && len(c.bases) > 1 {
			// The server is unreachable: the next request tries the
			// next one (unless another request moved on already).
			c.cur.CompareAndSwap(at, (at+1)%int32(len(c.bases)))
		}
		return nil, err // net/http's error already names the method and URL
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		// Error bodies are short messages; cap them in case a proxy sends a page.
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return nil, &APIError{Status: resp.StatusCode, Body: string(bytes.TrimSpace(b))}
	}
	return resp, nil
}
