package storage

import (
	"encoding/json"
	"testing"
)

// same compares by JSON so nil and empty lists are alike and a failure
// shows both sides readably.
func same(t *testing.T, what string, got, want any) {
	t.Helper()
	g, _ := json.MarshalIndent(got, "", " ")
	w, _ := json.MarshalIndent(want, "", " ")
	if string(g) == "null" || string(g) == "[]" {
		g = []byte("null")
	}
	if string(w) == "null" || string(w) == "[]" {
		w = []byte("null")
	}
	if string(g) != string(w) {
		t.Errorf("%s:\n got %s\nwant %s", what, g, w)
	}
}
