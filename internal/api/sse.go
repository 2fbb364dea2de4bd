package api

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/anvilmetal/anvil/internal/httpserve"
)

// startSSE begins a Server-Sent Events answer; the stream writes and
// flushes through the writer it returns, which keeps the write deadline
// one limit ahead.
func startSSE(w http.ResponseWriter, r *http.Request) (*httpserve.Writer, error) {
	if _, ok := w.(http.Flusher); !ok {
		return nil, errors.New("streaming is not supported by this connection")
	}
	sw := httpserve.Stream(w, r)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	return sw, nil
}

// follow runs step now and again after every wake-up until the client
// leaves or step fails: a change recorded in this process wakes it at
// once, the poll interval catches changes made by other regions, and
// keep-alive comments stop proxies from closing a quiet stream. step
// returns more=true when it stopped early with more to send.
//
// gap is the least time between two steps woken by the hub: changes come
// in bursts (a boot storm, a power sweep), and a step that reads every
// machine's version should run a few times a second, not once per change.
func (s *Server) follow(r *request, w http.ResponseWriter, fl http.Flusher, gap time.Duration, step func() (more bool, err error)) {
	keepAlive := time.NewTicker(15 * time.Second)
	defer keepAlive.Stop()
	poll := time.NewTicker(s.opts.WatchPoll)
	defer poll.Stop()
	for {
		changed := s.svc.Hub.Changed()
		stepped := time.Now()
		more, err := step()
		if err != nil {
			if r.Context().Err() == nil {
				s.log.Error("event stream", "path", r.URL.Path, "err", err)
			}
			return // headers are sent; the client reconnects
		}
		fl.Flush()
		if more {
			continue
		}
		select {
		case <-r.Context().Done():
			return
		case <-changed:
			if wait := gap - time.Since(stepped); wait > 0 {
				select {
				case <-r.Context().Done():
					return
				case <-time.After(wait):
				}
			}
		case <-poll.C:
		case <-keepAlive.C:
			fmt.Fprint(w, ": keep-alive\n\n")
			fl.Flush()
		}
	}
}
