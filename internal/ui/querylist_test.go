package ui_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestMachineListQueryFlood asks the machine list and its rows with
// 10,001 parameters: Go's parser refuses the query, and reading it as
// empty would list the whole fleet instead of the filter.
func TestMachineListQueryFlood(t *testing.T) {
	s := start(t)
	c := newClient(t)
	s.login(c, "ada", adaPass)
	// Short pairs, so that the request stays under the header limit.
	flood := "q=nosuchmachine&" + strings.Repeat("a=&", 10_001)
	for _, p := range []string{"/MAAS/machines", "/MAAS/machines/rows"} {
		if code, _, body := s.do(c, "GET", p+"?"+flood, nil, nil); code != http.StatusBadRequest || !strings.Contains(body, "query string") {
			t.Errorf("GET %s with 10,001 parameters: %d %.200q, want 400 naming the query string", p, code, body)
		}
	}
}
