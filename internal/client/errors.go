package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// APIError is a non-2xx answer. Body is what the server said: MAAS answers
// with plain text ("No Machine matches the given query.") or, for form
// errors, a JSON object of field → messages.
type APIError struct {
	Status int
	Body   string
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("%d %s", e.Status, http.StatusText(e.Status))
	if m := e.Message(); m != "" {
		s += ": " + m
	}
	return s
}

// Message returns the server's message in one line, or "" if it said
// nothing useful (an empty body or an HTML error page from a proxy).
func (e *APIError) Message() string {
	body := strings.TrimSpace(e.Body)
	if body == "" || strings.HasPrefix(body, "<") {
		return ""
	}
	var v any
	if json.Unmarshal([]byte(body), &v) == nil {
		body = jsonMessage(v)
	}
	body = strings.Join(strings.Fields(body), " ")
	const max = 500
	if len(body) > max {
		body = body[:max] + "…"
	}
	return body
}

// jsonMessage flattens the JSON error shapes servers use into one line.
func jsonMessage(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []any:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = jsonMessage(x)
		}
		return strings.Join(parts, " ")
	case map[string]any:
		for _, k := range []string{"error", "message", "detail"} {
			if s, ok := v[k].(string); ok {
				return s
			}
		}
		// A form error: {"hostname": ["..."], "__all__": ["..."]}.
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			if k == "__all__" {
				parts[i] = jsonMessage(v[k])
			} else {
				parts[i] = k + ": " + jsonMessage(v[k])
			}
		}
		return strings.Join(parts, "; ")
	case nil:
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// IsNotFound reports whether err is (or wraps) a 404 from the server.
func IsNotFound(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == http.StatusNotFound
}
