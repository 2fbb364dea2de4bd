package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Config is the profiles file: which servers the CLI knows and the API key
// for each. It holds secrets, so it is only ever written with mode 0600.
//
//	{
//	  "default": "lab",
//	  "profiles": {
//	    "lab": {"url": "http://10.0.0.2:5240/MAAS/", "api_key": "consumer:token:secret"}
//	  }
//	}
type Config struct {
	Default  string             `json:"default,omitempty"`
	Profiles map[string]Profile `json:"profiles"`
}

// Profile is one server and the key to use with it.
type Profile struct {
	URL    string `json:"url"`     // normalised base URL, ending in /MAAS/
	APIKey string `json:"api_key"` // consumer:token:secret
	// CAFile, when set, is a PEM file of certificates to trust for an
	// https URL (a region's self-signed certificate).
	CAFile string `json:"ca_file,omitempty"`
}

// ConfigPath returns where the profiles live: $ANVIL_CONFIG if set, else
// $XDG_CONFIG_HOME/anvil/profiles.json, else ~/.config/anvil/profiles.json.
func ConfigPath() (string, error) {
	if p := os.Getenv("ANVIL_CONFIG"); p != "" {
		return p, nil
	}
	// The XDG spec says to ignore a relative XDG_CONFIG_HOME.
	if x := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "anvil", "profiles.json"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("finding the profiles file: %w (set ANVIL_CONFIG)", err)
	}
	return filepath.Join(home, ".config", "anvil", "profiles.json"), nil
}

// LoadConfig reads the profiles file; a missing file is an empty config.
func LoadConfig(path string) (*Config, error) {
	cfg := &Config{Profiles: map[string]Profile{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return cfg, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading profiles: %w", err)
	}
	if err := json.Unmarshal(b, cfg); err != nil {
		return nil, fmt.Errorf("reading profiles %s: %w", path, err)
	}
	if cfg.Profiles == nil {
		cfg.Profiles = map[string]Profile{}
	}
	return cfg, nil
}

// Save writes the config to path atomically: it writes a temporary file
// beside it (mode 0600 from the start, so the key is never readable by
// others, not even briefly), syncs it and renames it over the old file. A
// crash leaves the old file or the new one, never half of either.
func (c *Config) Save(path string) (err error) {
	// Write through a symlink (dotfiles managers use them) instead of
	// replacing the link with a file.
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("saving profiles: %w", err)
	}
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("saving profiles: %w", err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("saving profiles: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	// CreateTemp uses 0600 today; say so explicitly rather than rely on it.
	if err := f.Chmod(0o600); err != nil {
		return fmt.Errorf("saving profiles: %w", err)
	}
	if _, err := f.Write(append(data, '\n')); err != nil {
		return fmt.Errorf("saving profiles: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("saving profiles: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("saving profiles: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("saving profiles: %w", err)
	}
	// Make the rename itself durable; failure here loses nothing already
	// visible, so it is not reported.
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// Select returns the named profile, or the default one if name is "".
func (c *Config) Select(name string) (string, Profile, error) {
	if len(c.Profiles) == 0 {
		return "", Profile{}, errors.New("no profiles: run 'anvil login PROFILE URL KEY' first")
	}
	if name == "" {
		if c.Default == "" {
			return "", Profile{}, fmt.Errorf("no default profile: pass --profile (one of %s)", c.names())
		}
		name = c.Default
	}
	p, ok := c.Profiles[name]
	if !ok {
		return "", Profile{}, fmt.Errorf("no profile %q (known: %s)", name, c.names())
	}
	return name, p, nil
}

func (c *Config) names() string {
	names := make([]string, 0, len(c.Profiles))
	for n := range c.Profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
