package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestEventsTableOldestFirst(t *testing.T) {
	f, _ := loggedIn(t)
	f.addEvent(1, "web01", "INFO", "Commissioning", "Started commissioning")
	f.addEvent(2, "db01", "WARNING", "Power error", "BMC\tunreachable\n\x1b[31mred") // control characters are cleaned
	f.addEvent(3, "web01", "DEBUG", "Powering on", "")
	out, errOut, code := run(t, "events", "--hostname", "web01,db01", "--level", "info", "--limit", "10")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	want := "" +
		"TIME                 HOSTNAME  LEVEL    TYPE           DESCRIPTION               USER\n" +
		"2023-11-14 22:14:20  web01     INFO     Commissioning  Started commissioning     admin\n" +
		"2023-11-14 22:15:20  db01      WARNING  Power error    BMC unreachable  [31mred  admin\n" +
		"2023-11-14 22:16:20  web01     DEBUG    Powering on    -                         admin\n"
	if out != want {
		t.Errorf("table:\n%s\nwant:\n%s", out, want)
	}
	if got := f.takeRequests(); len(got) != 1 ||
		got[0] != "GET /MAAS/api/2.0/events/?hostname=web01&hostname=db01&level=info&limit=10&op=query" {
		t.Errorf("requests %q", got)
	}
}

func TestEventsJSON(t *testing.T) {
	f, _ := loggedIn(t)
	f.addEvent(1, "web01", "INFO", "Commissioning", "")
	out, _, _ := run(t, "events", "--json")
	var page struct {
		Count  int
		Events []map[string]any
	}
	if json.Unmarshal([]byte(out), &page) != nil || page.Count != 1 || page.Events[0]["type"] != "Commissioning" {
		t.Errorf("--json printed %q", out)
	}
}

func TestEventsFollow(t *testing.T) {
	f, _ := loggedIn(t)
	f.addEvent(1, "web01", "INFO", "Commissioning", "old, beyond the limit")
	f.addEvent(2, "db01", "INFO", "Deploying", "other machine")
	f.addEvent(3, "web01", "INFO", "Ready", "latest")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut syncBuffer
	done := make(chan int)
	go func() { done <- ExecuteContext(ctx, []string{"events", "--follow", "--limit", "1"}, &out, &errOut) }()
	out.waitFor(t, "latest")

	// New events stream in, in order, aligned with the rows above; a wider
	// cell widens its column for the rows that follow.
	f.watch <- f.addEvent(4, "web01", "INFO", "Deploying", "streamed")
	f.watch <- f.addEvent(5, "a-much-longer-name", "ERROR", "Failed", "boom")
	out.waitFor(t, "boom")
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d after interrupt, stderr %q", code, errOut.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("--follow did not end when its context was cancelled")
	}
	want := "" +
		"TIME                 HOSTNAME  LEVEL  TYPE   DESCRIPTION  USER\n" +
		"2023-11-14 22:16:20  web01     INFO   Ready  latest       admin\n" +
		"2023-11-14 22:17:20  web01     INFO   Deploying  streamed     admin\n" +
		"2023-11-14 22:18:20  a-much-longer-name  ERROR  Failed     boom         admin\n"
	if got := out.String(); got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}
	reqs := f.takeRequests()
	if len(reqs) != 2 || reqs[1] != "GET /MAAS/api/2.0/events/?after=3&op=watch" {
		t.Errorf("requests %q; want the watch to start after the last event printed", reqs)
	}
}

func TestEventsFollowFiltersTheStream(t *testing.T) {
	f, _ := loggedIn(t)
	f.addEvent(7, "db01", "INFO", "Deploying", "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut syncBuffer
	done := make(chan int)
	go func() {
		done <- ExecuteContext(ctx, []string{"events", "-f", "--json", "--hostname", "web01", "--level", "warning"}, &out, &errOut)
	}()
	f.waitForRequest(t, "op=watch")
	f.watch <- f.addEvent(8, "db01", "ERROR", "Failed", "other host")
	f.watch <- f.addEvent(9, "web01", "INFO", "Ready", "too quiet")
	f.watch <- f.addEvent(10, "web01", "ERROR", "Failed", "wanted")
	out.waitFor(t, "wanted")
	cancel()
	<-done
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], `{"created":`) || !strings.Contains(lines[0], `"id":10`) {
		t.Errorf("output %q; want only event 10 as one JSON line", out.String())
	}
	// Nothing matched the query, so the stream starts from the newest event
	// of all rather than replaying history. The filters go to the server too;
	// this fake ignores them, so the CLI's own filtering is what was tested.
	reqs := f.takeRequests()
	if len(reqs) != 3 || reqs[1] != "GET /MAAS/api/2.0/events/?limit=1&op=query" ||
		reqs[2] != "GET /MAAS/api/2.0/events/?after=7&hostname=web01&level=warning&op=watch" {
		t.Errorf("requests %q", reqs)
	}
}

func TestEventTime(t *testing.T) {
	for in, want := range map[string]string{
		"Tue, 14 Nov. 2023 22:13:20":  "2023-11-14 22:13:20",
		"2023-11-14T22:13:20.5+01:00": "2023-11-14 21:13:20",
		"yesterday":                   "yesterday",
	} {
		if got := eventTime(in); got != want {
			t.Errorf("eventTime(%q) = %q, want %q", in, got, want)
		}
	}
}
