package api_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/anvilmetal/anvil/internal/machine"
)

// TestReleaseEraseModes: release's erase, secure_erase and quick_erase
// become the mode the erasing environment gets, as MAAS's wipe script
// reads its flags: secure with quick is secure where a disk has it and
// quick elsewhere; secure alone falls back to every block zeroed.
func TestReleaseEraseModes(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		cases := []struct {
			form url.Values
			want machine.EraseMode
			word string
		}{
			{url.Values{"erase": {"true"}, "secure_erase": {"true"}, "quick_erase": {"true"}}, machine.EraseSecureQuick, "secure (else quick)"},
			{url.Values{"erase": {"true"}, "secure_erase": {"true"}, "quick_erase": {"false"}}, machine.EraseSecure, "secure"},
			{url.Values{"erase": {"true"}, "secure_erase": {"false"}, "quick_erase": {"true"}}, machine.EraseQuick, "quick"},
			{url.Values{"erase": {"true"}, "secure_erase": {"false"}, "quick_erase": {"false"}}, machine.EraseFull, "full"},
		}
		for i, c := range cases {
			id := e.readyMachine("erase-"+string(rune('a'+i)), "52:54:00:e5:00:0"+string(rune('1'+i)))
			e.must(http.StatusOK, http.MethodPost, "machines/", e.admin, url.Values{"op": {"allocate"}, "system_id": {id}}, nil)
			c.form.Set("op", "release")
			e.must(http.StatusOK, http.MethodPost, "machines/"+id+"/", e.admin, c.form, nil)
			got, err := e.srv.Store.GetMachine(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != machine.DiskErasing || got.EraseMode != c.want {
				t.Errorf("%v: %s erase=%q, want Disk erasing, %q", c.form, got.Status, got.EraseMode, c.want)
			}
			var evs struct {
				Events []struct{ Description string } `json:"events"`
			}
			e.must(http.StatusOK, http.MethodGet, "events/?op=query", e.admin, url.Values{"id": {id}}, &evs)
			found := false
			for _, ev := range evs.Events {
				found = found || strings.Contains(ev.Description, "Releasing with "+c.word+" erase")
			}
			if !found {
				t.Errorf("%v: no \"Releasing with %s erase\" event in %+v", c.form, c.word, evs)
			}
		}
	})
}
