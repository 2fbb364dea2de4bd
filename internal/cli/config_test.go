package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func TestLoginSavesProfilePrivately(t *testing.T) {
	f := newFakeMAAS(t)
	path := filepath.Join(t.TempDir(), "sub", "profiles.json")
	t.Setenv("ANVIL_CONFIG", path)

	out, errOut, code := run(t, "login", "lab", f.URL, testKey)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if want := "Logged in to " + f.URL + "/MAAS/ as admin; saved profile lab (default).\n"; out != want {
		t.Errorf("stdout %q, want %q", out, want)
	}
	if got := f.takeRequests(); len(got) != 1 || got[0] != "GET /MAAS/api/2.0/users/?op=whoami" {
		t.Errorf("requests %q", got)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("profiles file: %v, mode %v; want 0600", err, st.Mode())
	}
	cfg := readConfig(t, path)
	if cfg.Default != "lab" || cfg.Profiles["lab"] != (Profile{URL: f.URL + "/MAAS/", APIKey: testKey}) {
		t.Errorf("config %+v", cfg)
	}

	// A second profile does not take over the default unless asked to.
	run(t, "login", "other", f.URL+"/MAAS/", testKey)
	if cfg := readConfig(t, path); cfg.Default != "lab" || len(cfg.Profiles) != 2 {
		t.Errorf("after second login: %+v", cfg)
	}
	out, _, _ = run(t, "login", "--default", "other", f.URL, testKey)
	if cfg := readConfig(t, path); cfg.Default != "other" || !strings.Contains(out, "(default)") {
		t.Errorf("after login --default: %+v, %q", cfg, out)
	}
}

func readConfig(t *testing.T, path string) *Config {
	t.Helper()
	cfg, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestLoginRejectsAKeyTheServerRefuses(t *testing.T) {
	f := newFakeMAAS(t)
	path := filepath.Join(t.TempDir(), "profiles.json")
	t.Setenv("ANVIL_CONFIG", path)
	f.fail["whoami"] = apiFailure{http.StatusUnauthorized, "Authorization Error: 'Invalid access token: tk'"}
	out, errOut, code := run(t, "login", "lab", f.URL, testKey)
	want := "error: checking the key with " + f.URL + "/MAAS/: whoami: 401 Unauthorized: Authorization Error: 'Invalid access token: tk'\n"
	if code != 1 || out != "" || errOut != want {
		t.Errorf("exit %d, stdout %q, stderr %q; want stderr %q", code, out, errOut, want)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("profiles file written after a failed login: %v", err)
	}
	// A malformed key is refused before any request, without echoing it.
	_, errOut, code = run(t, "login", "lab", f.URL, "s3cret")
	if code != 1 || !strings.Contains(errOut, "malformed API key") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

func TestLoginReadsKeyFromStdin(t *testing.T) {
	f := newFakeMAAS(t)
	path := filepath.Join(t.TempDir(), "profiles.json")
	root := &cobra.Command{Use: "anvil"}
	root.AddCommand(Commands()...)
	root.SetIn(strings.NewReader(testKey + "\n"))
	var out, errOut bytes.Buffer
	code := Run(context.Background(), root, []string{"login", "--config", path, "lab", f.URL, "-"}, &out, &errOut)
	if code != 0 || readConfig(t, path).Profiles["lab"].APIKey != testKey {
		t.Errorf("exit %d, stderr %q", code, errOut.String())
	}
}

func TestLogout(t *testing.T) {
	f, path := loggedIn(t)
	run(t, "login", "other", f.URL, testKey)
	out, _, code := run(t, "logout", "lab")
	if code != 0 || out != "Removed profile lab. There is no default profile now; pass --profile (one of other).\n" {
		t.Errorf("exit %d, stdout %q", code, out)
	}
	if cfg := readConfig(t, path); cfg.Default != "" || len(cfg.Profiles) != 1 {
		t.Errorf("config %+v", cfg)
	}
	_, errOut, code := run(t, "machines", "list")
	if code != 1 || errOut != "error: no default profile: pass --profile (one of other)\n" {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	if _, _, code := run(t, "machines", "list", "--profile", "other"); code != 0 {
		t.Errorf("--profile other: exit %d", code)
	}
	_, errOut, code = run(t, "machines", "list", "--profile", "nope")
	if code != 1 || errOut != `error: no profile "nope" (known: other)`+"\n" {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	_, errOut, code = run(t, "logout", "nope")
	if code != 1 || !strings.Contains(errOut, `no profile "nope"`) {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	run(t, "logout", "other")
	_, errOut, _ = run(t, "machines", "list")
	if errOut != "error: no profiles: run 'anvil login PROFILE URL KEY' first\n" {
		t.Errorf("stderr %q", errOut)
	}
}

func TestConfigPath(t *testing.T) {
	t.Setenv("ANVIL_CONFIG", "")
	t.Setenv("XDG_CONFIG_HOME", "/xdg")
	t.Setenv("HOME", "/home/u")
	if p, _ := ConfigPath(); p != "/xdg/anvil/profiles.json" {
		t.Errorf("with XDG_CONFIG_HOME: %s", p)
	}
	t.Setenv("XDG_CONFIG_HOME", "relative") // the XDG spec says to ignore it
	if p, _ := ConfigPath(); p != "/home/u/.config/anvil/profiles.json" {
		t.Errorf("with HOME: %s", p)
	}
	t.Setenv("ANVIL_CONFIG", "/etc/anvil.json")
	if p, _ := ConfigPath(); p != "/etc/anvil.json" {
		t.Errorf("with ANVIL_CONFIG: %s", p)
	}
}

func TestSaveIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "profiles.json")
	old := &Config{Default: "a", Profiles: map[string]Profile{"a": {URL: "http://a/MAAS/", APIKey: "x:y:z"}}}
	if err := old.Save(path); err != nil {
		t.Fatal(err)
	}
	oldBytes, _ := os.ReadFile(path)
	// Loosen the mode: a save must put it back to 0600.
	os.Chmod(path, 0o644)

	// A reader that opened the old file keeps seeing all of it: the new
	// content arrives by rename, not by rewriting the file in place.
	r, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	updated := &Config{Default: "b", Profiles: map[string]Profile{"b": {URL: "http://b/MAAS/", APIKey: "p:q:r"}}}
	if err := updated.Save(path); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	buf.ReadFrom(r)
	if !bytes.Equal(buf.Bytes(), oldBytes) {
		t.Errorf("the old file changed under its reader: %q", buf.String())
	}
	if got := readConfig(t, path); got.Default != "b" {
		t.Errorf("saved %+v", got)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v after save, want 0600", st.Mode().Perm())
	}
	assertOnlyFiles(t, dir, "profiles.json")

	// A save that cannot complete leaves no temporary file behind.
	blocked := filepath.Join(dir, "blocked")
	os.MkdirAll(filepath.Join(blocked, "child"), 0o700) // rename cannot replace a non-empty directory
	if err := updated.Save(blocked); err == nil {
		t.Error("save over a directory succeeded")
	}
	assertOnlyFiles(t, dir, "blocked", "profiles.json")
}

func TestSaveWritesThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.json")
	link := filepath.Join(dir, "profiles.json")
	os.WriteFile(target, []byte("{}"), 0o600)
	os.Symlink(target, link)
	if err := (&Config{Default: "a"}).Save(link); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the symlink was replaced by a file")
	}
	if readConfig(t, target).Default != "a" {
		t.Error("the link's target was not updated")
	}
}

func TestLoadRejectsGarbage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(path, []byte("{not json"), 0o600)
	t.Setenv("ANVIL_CONFIG", path)
	_, errOut, code := run(t, "machines", "list")
	if code != 1 || !strings.HasPrefix(errOut, "error: reading profiles "+path+": ") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

func assertOnlyFiles(t *testing.T, dir string, want ...string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("files in %s: %q, want %q", dir, got, want)
	}
}

// The saved file is plain, indented JSON that a person can read and edit.
func TestConfigFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "profiles.json")
	(&Config{Default: "lab", Profiles: map[string]Profile{"lab": {URL: "http://h:5240/MAAS/", APIKey: "c:t:s"}}}).Save(path)
	b, _ := os.ReadFile(path)
	want := `{
  "default": "lab",
  "profiles": {
    "lab": {
      "url": "http://h:5240/MAAS/",
      "api_key": "c:t:s"
    }
  }
}
`
	if string(b) != want {
		t.Errorf("file:\n%s\nwant:\n%s", b, want)
	}
	var v map[string]any
	if json.Unmarshal(b, &v) != nil {
		t.Error("not JSON")
	}
}
