package api

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"net/http"
	"strings"

	"github.com/anvilmetal/anvil/internal/store"
)

// MAAS's sshkeys/: each user's public keys, which deployments put on the
// machines the user deploys.

// sshKeyJSON is MAAS's SSH key (DISPLAY_SSHKEY_FIELDS). keysource is
// "protocol:id" for an imported key (op=import); a key added by hand reads
// as MAAS's "", and the answer to its create has MAAS's null.
type sshKeyJSON struct {
	ID          int64   `json:"id"`
	Key         string  `json:"key"`
	KeySource   *string `json:"keysource"`
	ResourceURI string  `json:"resource_uri"`
}

func renderSSHKey(k store.SSHKey) sshKeyJSON {
	src := k.KeySource
	return sshKeyJSON{ID: k.ID, Key: k.Key, KeySource: &src, ResourceURI: Prefix + "account/prefs/sshkeys/" + itoa(k.ID) + "/"}
}

func (s *Server) sshKeysRoutes() []route {
	return []route{
		post("import", authenticated, s.importSSHKeys),
		get("", authenticated, func(w http.ResponseWriter, r *request) error {
			ks, err := s.store.ListSSHKeys(r.Context(), r.who.user.Name)
			if err != nil {
				return err
			}
			out := make([]sshKeyJSON, 0, len(ks))
			for _, k := range ks {
				out = append(out, renderSSHKey(k))
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		}),
		post("", authenticated, func(w http.ResponseWriter, r *request) error {
			key, err := parseSSHKey(r.form.Get("key"))
			if err != nil {
				return err
			}
			k, err := s.store.AddSSHKey(r.Context(), r.who.user.Name, key)
			if err != nil {
				return err
			}
			j := renderSSHKey(k)
			j.KeySource = nil
			writeJSON(w, http.StatusCreated, j)
			return nil
		}),
	}
}

func (s *Server) sshKeyRoutes() []route {
	find := func(r *request) (store.SSHKey, error) {
		ks, err := s.store.ListSSHKeys(r.Context(), r.who.user.Name)
		if err != nil {
			return store.SSHKey{}, err
		}
		for _, k := range ks {
			if itoa(k.ID) == r.id {
				return k, nil
			}
		}
		return store.SSHKey{}, fmt.Errorf("ssh key %q: %w", truncate(r.id, 20), store.ErrNotFound)
	}
	return []route{
		get("", authenticated, func(w http.ResponseWriter, r *request) error {
			k, err := find(r)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, renderSSHKey(k))
			return nil
		}),
		del(authenticated, func(w http.ResponseWriter, r *request) error {
			k, err := find(r)
			if err != nil {
				return err
			}
			if err := s.store.DeleteSSHKey(r.Context(), r.who.user.Name, k.ID); err != nil {
				return err
			}
			writeNoContent(w)
			return nil
		}),
	}
}

// parseSSHKey accepts one OpenSSH public key line: a known type, base64
// data whose embedded type is that type, and an optional comment.
func parseSSHKey(v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" || len(v) > 16<<10 || strings.ContainsAny(v, "\r\n") {
		return "", badField("key", "one OpenSSH public key line is required")
	}
	f := strings.Fields(v)
	switch {
	case len(f) < 2:
		return "", badField("key", "expected \"TYPE BASE64 [COMMENT]\"")
	case !knownKeyTypes[f[0]]:
		return "", badField("key", "unknown key type %q", truncate(f[0], 40))
	}
	blob, err := base64.StdEncoding.DecodeString(f[1])
	if err != nil || len(blob) < 4 {
		return "", badField("key", "the key data is not base64")
	}
	n := binary.BigEndian.Uint32(blob)
	if int(n) > len(blob)-4 || string(blob[4:4+n]) != f[0] {
		return "", badField("key", "the key data does not hold a %s key", f[0])
	}
	return strings.Join(f, " "), nil
}

var knownKeyTypes = map[string]bool{
	"ssh-rsa": true, "ssh-ed25519": true, "ecdsa-sha2-nistp256": true, "ecdsa-sha2-nistp384": true,
	"ecdsa-sha2-nistp521": true, "sk-ssh-ed25519@openssh.com": true, "sk-ecdsa-sha2-nistp256@openssh.com": true,
}
