package ui

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/anvilmetal/anvil/internal/httpserve"
)

// stream tells an open page that something changed, as server-sent
// events. It carries no data: the page fetches its own view again, so the
// server keeps filtering and paging, and a missed notice costs only
// latency. Local changes wake it through the hub at once; changes made by
// other region processes are seen within StreamPoll.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, v *view) (string, error) {
	if _, ok := w.(http.Flusher); !ok {
		return "", fmt.Errorf("streaming unsupported by this connection")
	}
	// Every write goes through sw, which keeps the write deadline one
	// limit ahead: a page that stops reading is cut off, a quiet one is not.
	sw := httpserve.Stream(w, r)
	w, fl := http.ResponseWriter(sw), sw
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, "retry: 2000\n\n")
	fl.Flush()

	ctx := r.Context()
	poll := time.NewTicker(s.opts.StreamPoll)
	defer poll.Stop()
	last := ""
	quiet := time.Now()
	for {
		wake := s.svc.Hub.Changed()
		state, err := s.state(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return "", nil
			}
			s.log.Warn("ui stream", "err", err)
		}
		switch {
		case err == nil && state != last:
			if _, err := fmt.Fprintf(w, "event: change\ndata: %s\n\n", state); err != nil {
				return "", nil
			}
			fl.Flush()
			last, quiet = state, time.Now()
		case time.Since(quiet) > 15*time.Second:
			// Keeps proxies from closing an idle stream.
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return "", nil
			}
			fl.Flush()
			quiet = time.Now()
		}
		select {
		case <-ctx.Done():
			return "", nil
		case <-wake:
			// Changes come in bursts (a boot storm, a bulk action): gather
			// them into one notice.
			select {
			case <-ctx.Done():
				return "", nil
			case <-time.After(250 * time.Millisecond):
			}
		case <-poll.C:
		}
	}
}

// state names the data pages show: the machine rows' generation and the
// newest event. Every change a page shows moves one of the two.
func (s *Server) state(ctx context.Context) (string, error) {
	gen, err := s.fleet.refresh(ctx)
	if err != nil {
		return "", err
	}
	ev, err := s.store.LastEventID(ctx)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d-%d", gen, ev), nil
}
