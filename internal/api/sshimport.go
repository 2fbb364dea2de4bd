package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// KeySources are where sshkeys/ op=import fetches a user's public keys,
// as MAAS does: Launchpad's /~USER/+sshkeys (one key a line) and GitHub's
// /users/USER/keys (JSON). Empty fields take the public services.
type KeySources struct {
	Launchpad string // base URL, "https://launchpad.net"
	GitHub    string // base URL, "https://api.github.com"
	HTTP      *http.Client
}

const (
	keyFetchTimeout = 15 * time.Second
	maxKeysBody     = 1 << 20
	maxImportedKeys = 100
)

// keyAuthID is what Launchpad and GitHub allow in a user name; anything
// else is refused before a request is made, so that no path is built
// from it.
var keyAuthID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9.+_-]{0,63}$`)

func init() {
	addDocs(map[string]string{
		"SSHKeysHandler import": doc("Import the calling user's public keys from Launchpad or GitHub.",
			"Fetched over HTTPS; the keys are stored with their keysource. A fetch that fails, or finds no key, stores nothing and is a 400 saying why.",
			req("keysource", "string", "lp:USER (Launchpad), gh:USER (GitHub), or USER (Launchpad).")),
	})
}

func (s *Server) importSSHKeys(w http.ResponseWriter, r *request) error {
	src := strings.TrimSpace(r.form.Get("keysource"))
	if src == "" {
		return &badRequest{"Importing SSH keys failed. Input needs to be in protocol:auth_id or auth_id format."}
	}
	protocol, user, ok := strings.Cut(src, ":")
	if !ok {
		protocol, user = "lp", src
	}
	if protocol != "lp" && protocol != "gh" {
		return &badRequest{fmt.Sprintf("Unknown protocol %s. Valid protocols are 'lp' and 'gh'.", truncate(protocol, 20))}
	}
	if !keyAuthID.MatchString(user) {
		return &badRequest{fmt.Sprintf("Unable to import SSH keys. %q is not a %s user name.", truncate(user, 70), serviceName(protocol))}
	}
	lines, err := s.fetchKeys(r.Context(), protocol, user)
	if err != nil {
		return &badRequest{err.Error()}
	}
	var keys []string
	for _, l := range lines {
		if k, err := parseSSHKey(l); err == nil && len(keys) < maxImportedKeys {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return &badRequest{fmt.Sprintf("Unable to import SSH keys. There are no SSH keys for %s user %s.", protocol, user)}
	}
	ks, err := s.store.ImportSSHKeys(r.Context(), r.who.user.Name, protocol+":"+user, keys)
	if err != nil {
		return err
	}
	s.log.Info("ssh keys imported", "user", r.who.user.Name, "keysource", protocol+":"+user, "keys", len(ks))
	out := make([]sshKeyJSON, len(ks))
	for i, k := range ks {
		out[i] = renderSSHKey(k)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func serviceName(protocol string) string {
	if protocol == "gh" {
		return "Github"
	}
	return "Launchpad"
}

// fetchKeys asks Launchpad or GitHub for a user's keys. Its errors are
// sentences for the caller, in MAAS's words where MAAS has them.
func (s *Server) fetchKeys(ctx context.Context, protocol, user string) ([]string, error) {
	ks := s.opts.KeySources
	base, path := firstOr(ks.Launchpad, "https://launchpad.net"), "/~"+url.PathEscape(user)+"/+sshkeys"
	if protocol == "gh" {
		base, path = firstOr(ks.GitHub, "https://api.github.com"), "/users/"+url.PathEscape(user)+"/keys"
	}
	client := ks.HTTP
	if client == nil {
		client = http.DefaultClient
	}
	ctx, cancel := context.WithTimeout(ctx, keyFetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+path, nil)
	if err != nil {
		return nil, fmt.Errorf("Unable to import SSH keys: %v", err)
	}
	req.Header.Set("User-Agent", "anvil")
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("Unable to import SSH keys: %s could not be reached (%v).", serviceName(protocol), err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return nil, fmt.Errorf("Unable to import SSH keys. %s user %s doesn't exist.", serviceName(protocol), user)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("Unable to import SSH keys: %s answered %s.", serviceName(protocol), resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxKeysBody+1))
	if err != nil {
		return nil, fmt.Errorf("Unable to import SSH keys: reading %s's answer: %v.", serviceName(protocol), err)
	}
	if len(body) > maxKeysBody {
		return nil, fmt.Errorf("Unable to import SSH keys: %s's answer is larger than %d bytes.", serviceName(protocol), maxKeysBody)
	}
	if protocol == "lp" {
		return strings.Split(string(body), "\n"), nil
	}
	var gh []struct {
		Key string `json:"key"`
	}
	if err := json.Unmarshal(body, &gh); err != nil {
		return nil, errors.New("Unable to import SSH keys: Github's answer is not its list of keys.")
	}
	out := make([]string, len(gh))
	for i, k := range gh {
		out[i] = k.Key
	}
	return out, nil
}
