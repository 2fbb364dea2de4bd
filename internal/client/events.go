package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// QueryEvents returns a page of the event log, newest first (GET
// events/?op=query). filter takes MAAS's parameters: hostname, id (a system
// id), level, limit, before, after.
func (c *Client) QueryEvents(ctx context.Context, filter url.Values) (EventPage, error) {
	q := opQuery("query")
	for k, v := range filter {
		if k != "op" {
			q[k] = v
		}
	}
	body, err := c.Do(ctx, http.MethodGet, "events/", q, nil)
	if err != nil {
		return EventPage{}, fmt.Errorf("query events: %w", err)
	}
	// Decode the events as raw messages first so each keeps its own bytes.
	var page struct {
		EventPage
		Events []json.RawMessage `json:"events"`
	}
	if err := json.Unmarshal(body, &page); err != nil {
		return EventPage{}, fmt.Errorf("query events: decoding answer: %w", err)
	}
	out := page.EventPage
	out.Raw = body
	out.Events = make([]Event, len(page.Events))
	for i, r := range page.Events {
		if out.Events[i], err = decodeEvent(r); err != nil {
			return EventPage{}, fmt.Errorf("query events: %w", err)
		}
	}
	return out, nil
}

func decodeEvent(b []byte) (Event, error) {
	var e Event
	if err := json.Unmarshal(b, &e); err != nil {
		return Event{}, fmt.Errorf("decoding event: %w", err)
	}
	e.Raw = json.RawMessage(b)
	return e, nil
}

// WatchEvents streams events with IDs above afterID (GET
// events/?op=watch&after=N, Server-Sent Events) and calls fn for each, in
// order. When the stream drops, goes silent for too long or cannot be opened,
// it reconnects from the last event it delivered, waiting 1s, 2s, 4s... up to
// 10s between tries, so no event is lost or repeated. It returns fn's error,
// a client error from the server (a 4xx, which retrying will not fix), or
// ctx.Err() once ctx is done.
func (c *Client) WatchEvents(ctx context.Context, afterID int64, fn func(Event) error) error {
	return c.WatchEventsFiltered(ctx, nil, afterID, fn)
}

// WatchEventsFiltered is WatchEvents with the query filters (hostname, id,
// level, zone) sent along, for servers that filter the stream; a server that
// ignores them streams everything, so callers that care filter again.
func (c *Client) WatchEventsFiltered(ctx context.Context, filter url.Values, afterID int64, fn func(Event) error) error {
	last := afterID
	wait := c.retryMin
	for {
		alive, err := c.watchOnce(ctx, filter, &last, fn)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var cbErr callbackError
		if errors.As(err, &cbErr) {
			return cbErr.err
		}
		var apiErr *APIError
		if errors.As(err, &apiErr) && apiErr.Status/100 == 4 &&
			apiErr.Status != http.StatusRequestTimeout && apiErr.Status != http.StatusTooManyRequests {
			return fmt.Errorf("watch events: %w", err)
		}
		if errors.Is(err, errNotAStream) {
			return fmt.Errorf("watch events: %w", err)
		}
		if alive {
			wait = c.retryMin // the stream was up: start the back-off afresh
		}
		if err == nil {
			err = errors.New("server closed the stream")
		}
		if c.OnWatchRetry != nil {
			c.OnWatchRetry(err, wait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, c.retryMax)
	}
}

// callbackError marks an error that came from the caller's fn, which ends
// the watch instead of triggering a reconnect.
type callbackError struct{ err error }

func (e callbackError) Error() string { return e.err.Error() }

var errNotAStream = errors.New("server answered without an event stream (is op=watch supported?)")

// watchOnce runs one connection of the stream, advancing *last past every
// event it hands to fn. It reports whether the stream was alive: opened and
// read from, keep-alives included.
func (c *Client) watchOnce(parent context.Context, filter url.Values, last *int64, fn func(Event) error) (bool, error) {
	// A half-open TCP connection would block the read forever; the server's
	// keep-alive comments reset this watchdog, its absence cancels the read.
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	watchdog := time.AfterFunc(c.idleTime, cancel)
	defer watchdog.Stop()

	q := opQuery("watch")
	for k, v := range filter {
		if k != "op" && k != "after" && k != "before" && k != "limit" {
			q[k] = v
		}
	}
	q.Set("after", strconv.FormatInt(*last, 10))
	// When the watchdog, not the caller, cancelled, say so rather than
	// reporting a puzzling "context canceled".
	idle := func(err error) error {
		if ctx.Err() != nil && parent.Err() == nil {
			return fmt.Errorf("no data from the server for %s", c.idleTime)
		}
		return err
	}
	resp, err := c.send(ctx, http.MethodGet, "events/", q, nil, "text/event-stream")
	if err != nil {
		return false, idle(err)
	}
	defer resp.Body.Close()
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		return false, errNotAStream
	}
	alive := false
	seen := func() {
		alive = true
		watchdog.Reset(c.idleTime)
	}
	err = readSSE(resp.Body, seen, func(m sseMessage) error {
		if m.Event != "" && m.Event != "event" && m.Event != "message" {
			return nil // a type this client does not know; skip it
		}
		ev, err := decodeEvent([]byte(m.Data))
		if err != nil {
			return fmt.Errorf("watch events: %w", err) // a garbled stream: reconnect
		}
		if ev.ID == 0 {
			ev.ID, _ = strconv.ParseInt(m.ID, 10, 64)
		}
		if ev.ID != 0 && ev.ID <= *last {
			return nil // delivered before a reconnect
		}
		if err := fn(ev); err != nil {
			return callbackError{err}
		}
		if ev.ID != 0 {
			*last = ev.ID
		}
		return nil
	})
	return alive, idle(err)
}
