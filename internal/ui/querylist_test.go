package ui_test

import (
	"fmt"
	"net/http"
	"net/url"
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
	flood := url.Values{"q": {"nosuchmachine"}}
	for i := 0; len(flood) < 10_001; i++ {
		flood.Set(fmt.Sprintf("p%d", i), "x")
	}
	for _, p := range []string{"/MAAS/machines", "/MAAS/machines/rows"} {
		if code, _, body := s.do(c, "GET", p+"?"+flood.Encode(), nil, nil); code != http.StatusBadRequest || !strings.Contains(body, "query string") {
			t.Errorf("GET %s with 10,001 parameters: %d %.200q, want 400 naming the query string", p, code, body)
		}
	}
}
