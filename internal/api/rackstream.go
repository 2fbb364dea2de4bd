package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/anvilmetal/anvil/internal/rack"
	"github.com/anvilmetal/anvil/internal/store"
)

func (s *Server) rackRoutes() []route {
	return []route{get("boot_stream", adminOnly, s.bootStream)}
}

// bootStream sends a rack everything it needs to answer boots: a full
// snapshot, then every change, as Server-Sent Events. It is
// level-triggered: on each wake it compares the machines' stored versions
// with what it has sent and sends the difference, so a missed wake-up, a
// change made by another region, or a reconnect costs nothing but a
// re-send.
func (s *Server) bootStream(w http.ResponseWriter, r *request) error {
	flusher, ok := w.(http.Flusher)
	if !ok {
		return errors.New("streaming is not supported by this connection")
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	send := func(ch rack.Change) {
		b, _ := json.Marshal(ch)
		fmt.Fprintf(w, "event: change\ndata: %s\n\n", b)
	}
	sent := map[string]int64{}
	first := true
	keepAlive := time.NewTicker(15 * time.Second)
	defer keepAlive.Stop()
	poll := time.NewTicker(s.opts.WatchPoll)
	defer poll.Stop()
	for {
		changed := s.svc.Hub.Changed()
		vs, err := s.store.ListMachineVersions(r.Context(), store.MachineFilter{})
		if err != nil {
			if r.Context().Err() == nil {
				s.log.Error("boot stream", "err", err)
			}
			return nil
		}
		var ids []string
		live := make(map[string]bool, len(vs))
		for _, v := range vs {
			live[v.SystemID] = true
			if sent[v.SystemID] != v.Version {
				ids = append(ids, v.SystemID)
			}
		}
		if first {
			send(rack.Change{Reset: true})
		}
		if len(ids) > 0 {
			f := store.MachineFilter{SystemIDs: ids}
			if first {
				f = store.MachineFilter{} // everything: no huge id list
			}
			ms, err := s.store.ListMachines(r.Context(), f)
			if err != nil {
				return nil
			}
			for i := range ms {
				e := rack.EntryOf(&ms[i])
				send(rack.Change{Upsert: &e})
				sent[e.SystemID] = e.Version
			}
		}
		for id := range sent {
			if !live[id] {
				send(rack.Change{Delete: id})
				delete(sent, id)
			}
		}
		if first {
			send(rack.Change{Synced: true})
			first = false
		}
		flusher.Flush()
		select {
		case <-r.Context().Done():
			return nil
		case <-changed:
		case <-poll.C:
		case <-keepAlive.C:
			fmt.Fprint(w, ": keep-alive\n\n")
			flusher.Flush()
		}
	}
}
