package client

import (
	"context"
	"net/url"
)

// Stream opens one Server-Sent Events stream at path and calls fn with each
// event's type and data until the stream ends (nil), ctx ends, or fn fails.
// Reconnecting is the caller's choice: streams other than the event watch
// (the rack's boot stream) resynchronise differently.
func (c *Client) Stream(ctx context.Context, path string, query url.Values, fn func(event, data string) error) error {
	resp, err := c.send(ctx, "GET", path, query, nil, "text/event-stream")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return readSSE(resp.Body, func() {}, func(m sseMessage) error { return fn(m.Event, m.Data) })
}
