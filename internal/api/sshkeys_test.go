package api_test

import (
	"encoding/base64"
	"encoding/binary"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// testKey is a well-formed ed25519 public key line.
func testKey(seed byte, comment string) string {
	blob := binary.BigEndian.AppendUint32(nil, 11)
	blob = append(blob, "ssh-ed25519"...)
	blob = binary.BigEndian.AppendUint32(blob, 32)
	for i := 0; i < 32; i++ {
		blob = append(blob, seed+byte(i))
	}
	return "ssh-ed25519 " + base64.StdEncoding.EncodeToString(blob) + " " + comment
}

func TestSSHKeys(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		k := testKey(1, "alice@laptop")
		var got struct {
			ID  int64  `json:"id"`
			Key string `json:"key"`
		}
		e.must(http.StatusCreated, http.MethodPost, "sshkeys/", e.user, url.Values{"key": {k}}, &got)
		if got.Key != k || got.ID == 0 {
			t.Fatalf("added %+v", got)
		}
		e.must(http.StatusConflict, http.MethodPost, "sshkeys/", e.user, url.Values{"key": {k}}, nil)
		for _, bad := range []string{"", "ssh-rsa", "ssh-ed25519 !!!", "ssh-dss AAAA", "ssh-rsa " + strings.Fields(k)[1], k + "\nssh-rsa x"} {
			if code, body := e.call(http.MethodPost, "sshkeys/", e.user, url.Values{"key": {bad}}); code != http.StatusBadRequest {
				t.Errorf("key %q: %d %s", bad, code, body)
			}
		}
		var list []struct {
			Key string `json:"key"`
		}
		e.must(http.StatusOK, http.MethodGet, "sshkeys/", e.user, nil, &list)
		if len(list) != 1 || list[0].Key != k {
			t.Fatalf("list %+v", list)
		}
		// Keys are per user: the admin sees none of alice's and cannot
		// delete them.
		e.must(http.StatusOK, http.MethodGet, "sshkeys/", e.admin, nil, &list)
		if len(list) != 0 {
			t.Fatalf("admin sees %+v", list)
		}
		id := itoaT(got.ID)
		e.must(http.StatusNotFound, http.MethodDelete, "sshkeys/"+id+"/", e.admin, nil, nil)
		e.must(http.StatusNoContent, http.MethodDelete, "sshkeys/"+id+"/", e.user, nil, nil)
		e.must(http.StatusOK, http.MethodGet, "account/prefs/sshkeys/", e.user, nil, &list)
		if len(list) != 0 {
			t.Fatalf("after delete %+v", list)
		}
	})
}
