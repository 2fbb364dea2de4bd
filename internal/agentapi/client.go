package agentapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Client calls the metadata API. Base is the metadata URL as the kernel
// command line gives it (http://region:5240/MAAS/metadata/).
type Client struct {
	Base  string
	Token string // consumer:key:secret, after proceed or enlist
	HTTP  *http.Client
}

// StatusError is an answer other than 2xx.
type StatusError struct {
	Code    int
	Message string
}

func (e *StatusError) Error() string { return fmt.Sprintf("metadata API: %d: %s", e.Code, e.Message) }

// Hello asks whether the region knows the machine.
func (c *Client) Hello(ctx context.Context, r HelloRequest) (HelloResponse, error) {
	var out HelloResponse
	err := c.postJSON(ctx, HelloPath, r, &out)
	return out, err
}

// Enlist creates the machine, or finds it again when it already exists.
func (c *Client) Enlist(ctx context.Context, r EnlistRequest) (EnlistResponse, error) {
	var out EnlistResponse
	err := c.postJSON(ctx, EnlistPath, r, &out)
	return out, err
}

// Task reads what the current phase is to do.
func (c *Client) Task(ctx context.Context) (Task, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url(TaskPath), nil)
	if err != nil {
		return Task{}, err
	}
	body, err := c.do(req)
	if err != nil {
		return Task{}, err
	}
	var t Task
	if err := json.Unmarshal(body, &t); err != nil {
		return Task{}, fmt.Errorf("metadata API %s: bad answer: %w", TaskPath, err)
	}
	return t, nil
}

// Signal reports progress as MAAS's op=signal does: status, an error text
// for FAILED, and result files (name → contents).
func (c *Client) Signal(ctx context.Context, status, errText string, files map[string][]byte) error {
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	fields := [][2]string{{"op", "signal"}, {"status", status}}
	if errText != "" {
		fields = append(fields, [2]string{"error", errText})
	}
	for _, f := range fields {
		if err := w.WriteField(f[0], f[1]); err != nil {
			return err
		}
	}
	for name, data := range files {
		fw, err := w.CreateFormFile(name, name)
		if err != nil {
			return err
		}
		if _, err := fw.Write(data); err != nil {
			return err
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url(MetadataPath), &body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", w.FormDataContentType())
	_, err = c.do(req)
	return err
}

// Get reads a metadata item ("meta-data/local-hostname", "user-data").
func (c *Client) Get(ctx context.Context, item string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url(MetadataPath+item), nil)
	if err != nil {
		return nil, err
	}
	return c.do(req)
}

func (c *Client) postJSON(ctx context.Context, path string, in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url(path), bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	body, err := c.do(req)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("metadata API %s: bad answer: %w", path, err)
	}
	return nil
}

func (c *Client) url(path string) string { return strings.TrimRight(c.Base, "/") + "/" + path }

func (c *Client) do(req *http.Request) ([]byte, error) {
	if c.Token != "" {
		req.Header.Set("Authorization", OAuthHeader(c.Token))
	}
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		msg := strings.TrimSpace(string(body))
		var e Error
		if json.Unmarshal(body, &e) == nil && e.Error != "" {
			msg = e.Error
		}
		return nil, &StatusError{Code: resp.StatusCode, Message: msg}
	}
	return body, nil
}

// OAuthHeader renders a MAAS token as the OAuth PLAINTEXT header MAAS's
// metadata clients (cloud-init among them) send.
func OAuthHeader(token string) string {
	parts := strings.SplitN(token, ":", 3)
	for len(parts) < 3 {
		parts = append(parts, "")
	}
	q := func(s string) string { return url.QueryEscape(s) }
	return fmt.Sprintf(`OAuth realm="", oauth_version="1.0", oauth_signature_method="PLAINTEXT", oauth_consumer_key="%s", oauth_token="%s", oauth_signature="&%s", oauth_nonce="%d", oauth_timestamp="%d"`,
		q(parts[0]), q(parts[1]), q(parts[2]), time.Now().UnixNano(), time.Now().Unix())
}

// OSUpURL is where the deployed OS reports, with this client's token.
func (c *Client) OSUpURL() string { return c.url(OSUpPath + url.PathEscape(c.Token)) }
