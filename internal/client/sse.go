package client

import (
	"bufio"
	"io"
	"strings"
)

// sseMessage is one dispatched Server-Sent Event.
type sseMessage struct {
	ID    string // the last event ID seen on the stream so far
	Event string // the event type; "" means the default, "message"
	Data  string // data lines joined with "\n"
}

// readSSE parses a text/event-stream as the WHATWG HTML standard describes
// (§9.2.6): fields accumulate until a blank line dispatches them, several
// data lines join with newlines, lines starting with ':' are comments (the
// server's keep-alives), an event with no data is dropped, and an event cut
// off by the end of the stream is never dispatched. seen is called for every
// line, comments included, so callers can tell a quiet stream from a dead one.
// It returns nil at the end of the stream, or fn's or the reader's error.
func readSSE(r io.Reader, seen func(), fn func(sseMessage) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20) // one event's JSON per line
	var (
		lastID, event string
		data          strings.Builder
		hasData       bool
	)
	for sc.Scan() {
		seen()
		line := sc.Text()
		if line == "" {
			if hasData {
				msg := sseMessage{ID: lastID, Event: event, Data: strings.TrimSuffix(data.String(), "\n")}
				if err := fn(msg); err != nil {
					return err
				}
			}
			event, hasData = "", false
			data.Reset()
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "data":
			data.WriteString(value)
			data.WriteByte('\n')
			hasData = true
		case "event":
			event = value
		case "id":
			if !strings.ContainsRune(value, 0) {
				lastID = value
			}
		}
		// "retry" and unknown fields are ignored: WatchEvents has its own
		// back-off.
	}
	return sc.Err()
}
