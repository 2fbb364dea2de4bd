package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

func (s *Server) eventsRoutes() []route {
	return []route{
		get("query", authenticated, s.queryEvents),
		get("watch", authenticated, s.watchEvents),
	}
}

// eventFilter reads MAAS's event query parameters.
func eventFilter(r *request) (store.EventFilter, error) {
	f := store.EventFilter{Hostnames: list(r, "hostname"), SystemIDs: list(r, "id"), Zones: list(r, "zone")}
	if f.SystemIDs == nil {
		f.SystemIDs = list(r, "node")
	}
	if l := r.form.Get("level"); l != "" {
		lv, ok := machine.ParseLevel(l)
		if !ok {
			return f, badField("level", "%q is not one of DEBUG, INFO, WARNING, ERROR, CRITICAL, AUDIT", l)
		}
		f.MinLevel = lv
	}
	var err error
	if f.Limit, _, err = intParam(r, "limit", 1, maxQuery); err != nil {
		return f, err
	}
	if f.Limit > 1000 {
		return f, badField("limit", "at most 1000")
	}
	for name, dst := range map[string]*int64{"before": &f.BeforeID, "after": &f.AfterID} {
		v, _, err := intParam(r, name, 0, maxQuery)
		if err != nil {
			return f, err
		}
		*dst = int64(v)
	}
	if !r.who.user.Admin {
		f.Owner = r.who.user.Name
	}
	return f, nil
}

func (s *Server) queryEvents(w http.ResponseWriter, r *request) error {
	f, err := eventFilter(r)
	if err != nil {
		return err
	}
	evs, err := s.store.QueryEvents(r.Context(), f)
	if err != nil {
		return err
	}
	out := make([]eventJSON, len(evs))
	for i, e := range evs {
		out[i] = renderEvent(e)
	}
	resp := map[string]any{"count": len(out), "events": out, "next_uri": nil, "prev_uri": nil}
	if len(evs) > 0 {
		// Newest first: "prev" pages go to older events, "next" to newer.
		resp["prev_uri"] = pageURI(r.form, "before", evs[len(evs)-1].ID)
		resp["next_uri"] = pageURI(r.form, "after", evs[0].ID)
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

func pageURI(form url.Values, key string, id int64) string {
	q := url.Values{}
	for k, v := range form {
		if k != "before" && k != "after" {
			q[k] = v
		}
	}
	q.Set(key, strconv.FormatInt(id, 10))
	return Prefix + "events/?" + q.Encode()
}

// watchEvents streams events as Server-Sent Events from after= (or from
// now), so clients follow changes without re-listing machines. The
// client's Last-Event-ID header resumes a dropped stream where it stopped.
func (s *Server) watchEvents(w http.ResponseWriter, r *request) error {
	f, err := eventFilter(r)
	if err != nil {
		return err
	}
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		if v, err := strconv.ParseInt(id, 10, 64); err == nil && v > f.AfterID {
			f.AfterID = v
		}
	}
	if r.form.Get("after") == "" && r.Header.Get("Last-Event-ID") == "" {
		if f.AfterID, err = s.store.LastEventID(r.Context()); err != nil {
			return err
		}
	}
	sw, err := startSSE(w, r.Request)
	if err != nil {
		return err
	}
	w, fl := http.ResponseWriter(sw), sw
	f.Ascending, f.BeforeID, f.Limit = true, 0, 500
	fmt.Fprintf(w, ": watching events after %d\n\n", f.AfterID)
	s.follow(r, w, fl, 0, func() (bool, error) {
		evs, err := s.store.QueryEvents(r.Context(), f)
		if err != nil {
			return false, err
		}
		for _, e := range evs {
			b, _ := json.Marshal(renderEvent(e))
			fmt.Fprintf(w, "id: %d\nevent: event\ndata: %s\n\n", e.ID, b)
			f.AfterID = e.ID
		}
		return len(evs) == f.Limit, nil
	})
	return nil
}

func isStoreSentinel(err error) bool {
	return errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInUse)
}
