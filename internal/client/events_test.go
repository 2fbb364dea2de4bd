package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestReadSSE(t *testing.T) {
	stream := ": keep-alive\n" +
		"id: 1\nevent: event\ndata: {\"a\":\ndata:  1}\n\n" + // two data lines, one leading space kept
		":another comment\n\n" + // a blank line with no data dispatches nothing
		"data:no-space\r\n\r\n" + // CRLF; the id carries over from the last event
		"id: 3\ndata\n\n" + // a field with no colon: empty data still dispatches
		"retry: 5000\nunknown: x\nid: 4\ndata: cut off" // no blank line: never dispatched
	var got []sseMessage
	lines := 0
	err := readSSE(strings.NewReader(stream), func() { lines++ }, func(m sseMessage) error {
		got = append(got, m)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []sseMessage{
		{ID: "1", Event: "event", Data: "{\"a\":\n 1}"},
		{ID: "1", Data: "no-space"},
		{ID: "3", Data: ""},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("messages:\n got %q\nwant %q", got, want)
	}
	if lines != 17 {
		t.Errorf("seen %d lines, want 17", lines)
	}
}

func TestReadSSEStopsOnCallbackError(t *testing.T) {
	boom := errors.New("boom")
	err := readSSE(strings.NewReader("data: 1\n\ndata: 2\n\n"), func() {}, func(sseMessage) error { return boom })
	if err != boom {
		t.Errorf("err = %v", err)
	}
}

func TestQueryEvents(t *testing.T) {
	var q url.Values
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		q = r.URL.Query()
		io.WriteString(w, `{"count":2,"events":[`+
			`{"id":9,"node":"abc123","hostname":"web01","username":"admin","level":"INFO","type":"Deploying","description":"x","created":"2025-01-02T03:04:05Z"},`+
			`{"id":8,"node":"abc123","hostname":"web01","username":"","level":"DEBUG","type":"Powering on","description":"","created":"2025-01-02T03:04:00Z"}],`+
			`"next_uri":"/MAAS/api/2.0/events/?op=query&before=8","prev_uri":"/MAAS/api/2.0/events/?op=query&after=9"}`)
	})
	page, err := c.QueryEvents(context.Background(), url.Values{"hostname": {"web01"}, "limit": {"2"}, "op": {"evil"}})
	if err != nil {
		t.Fatal(err)
	}
	if q.Get("op") != "query" || q.Get("hostname") != "web01" || q.Get("limit") != "2" {
		t.Errorf("query = %v", q)
	}
	if page.Count != 2 || len(page.Events) != 2 || page.Events[0].ID != 9 || page.Events[1].Type != "Powering on" ||
		!strings.HasPrefix(page.NextURI, "/MAAS/") || !strings.Contains(string(page.Events[0].Raw), `"id":9`) {
		t.Errorf("page = %+v", page)
	}
}

// sseServer answers each watch connection with the next script in turn; a
// script is written, flushed, and then the connection is closed, as a
// restarting server would.
// The second result returns the after= parameter of each connection so far.
func sseServer(t *testing.T, scripts ...string) (*Client, func() []string) {
	var mu sync.Mutex
	var afters []string
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("op") != "watch" || r.Header.Get("Accept") != "text/event-stream" {
			t.Errorf("watch request %s, Accept %q", r.URL, r.Header.Get("Accept"))
		}
		mu.Lock()
		n := len(afters)
		afters = append(afters, q.Get("after"))
		mu.Unlock()
		if n >= len(scripts) {
			<-r.Context().Done() // nothing more to say: hold the stream open
			return
		}
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		io.WriteString(w, scripts[n])
	})
	return c, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), afters...)
	}
}

func ev(id int64) string {
	return fmt.Sprintf("id: %d\nevent: event\ndata: {\"id\":%d,\"node\":\"abc\",\"hostname\":\"web01\",\"type\":\"T%d\"}\n\n", id, id, id)
}

func TestWatchEventsReconnectsFromLastID(t *testing.T) {
	c, afters := sseServer(t,
		": hello\n"+ev(5)+ev(6)+"id: 7\ndata: {\"id\":7,", // dropped mid-event
		ev(6)+ev(7), // a server replaying 6 must not deliver it twice
	)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []int64
	var retries []time.Duration
	c.OnWatchRetry = func(err error, wait time.Duration) { retries = append(retries, wait) }
	err := c.WatchEvents(ctx, 4, func(e Event) error {
		got = append(got, e.ID)
		if e.ID == 7 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if fmt.Sprint(got) != "[5 6 7]" {
		t.Errorf("events = %v", got)
	}
	if fmt.Sprint(afters()) != "[4 6]" {
		t.Errorf("after= per connection = %v, want [4 6]", afters())
	}
	if len(retries) != 1 || retries[0] != c.retryMin {
		t.Errorf("retries = %v", retries)
	}
}

func TestWatchEventsBacksOff(t *testing.T) {
	var mu sync.Mutex
	var times []time.Time
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		times = append(times, time.Now())
		mu.Unlock()
		http.Error(w, "restarting", http.StatusServiceUnavailable)
	})
	c.retryMin, c.retryMax = 10*time.Millisecond, 40*time.Millisecond
	var waits []time.Duration
	ctx, cancel := context.WithCancel(context.Background())
	c.OnWatchRetry = func(err error, wait time.Duration) {
		if !strings.Contains(err.Error(), "503") {
			t.Errorf("retry err = %v", err)
		}
		if waits = append(waits, wait); len(waits) == 5 {
			cancel()
		}
	}
	err := c.WatchEvents(ctx, 0, func(Event) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
	if fmt.Sprint(waits) != "[10ms 20ms 40ms 40ms 40ms]" {
		t.Errorf("waits = %v", waits)
	}
}

func TestWatchEventsStopsOnClientErrors(t *testing.T) {
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "bad op", http.StatusBadRequest)
	})
	err := c.WatchEvents(context.Background(), 0, func(Event) error { return nil })
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != 400 {
		t.Errorf("err = %v", err)
	}

	c = newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"count":0}`) // JSON, not a stream: this server has no watch
	})
	if err := c.WatchEvents(context.Background(), 0, func(Event) error { return nil }); !errors.Is(err, errNotAStream) {
		t.Errorf("err = %v", err)
	}
}

func TestWatchEventsReturnsCallbackError(t *testing.T) {
	c, _ := sseServer(t, ev(1)+ev(2))
	stop := errors.New("stop")
	n := 0
	err := c.WatchEvents(context.Background(), 0, func(Event) error { n++; return stop })
	if err != stop || n != 1 {
		t.Errorf("err = %v after %d events", err, n)
	}
}

func TestWatchEventsReconnectsWhenSilent(t *testing.T) {
	c, afters := sseServer(t, ev(1)+": then silence\n")
	// The first script closes; the held-open second connection stays silent,
	// and the watchdog must give up on it and dial a third.
	c.idleTime = 30 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var reasons []string
	c.OnWatchRetry = func(err error, _ time.Duration) {
		if reasons = append(reasons, err.Error()); len(reasons) == 2 {
			cancel()
		}
	}
	c.WatchEvents(ctx, 0, func(Event) error { return nil })
	if len(reasons) != 2 || !strings.Contains(reasons[1], "no data from the server") {
		t.Errorf("retry reasons = %q", reasons)
	}
	if a := afters(); len(a) < 2 || a[1] != "1" {
		t.Errorf("after= per connection = %v", a)
	}
}

func TestWatchEventsFilteredSendsFilters(t *testing.T) {
	var got url.Values
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		got = r.URL.Query()
		http.Error(w, "stop here", http.StatusBadRequest)
	})
	c.WatchEventsFiltered(context.Background(), url.Values{
		"hostname": {"a", "b"}, "level": {"ERROR"}, "op": {"x"}, "after": {"99"}, "limit": {"5"},
	}, 12, func(Event) error { return nil })
	want := url.Values{"op": {"watch"}, "after": {"12"}, "hostname": {"a", "b"}, "level": {"ERROR"}}
	if got.Encode() != want.Encode() {
		t.Errorf("watch query %q, want %q", got.Encode(), want.Encode())
	}
}
