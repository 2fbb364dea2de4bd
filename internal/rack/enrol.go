package rack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/anvilmetal/anvil/internal/client"
	"github.com/anvilmetal/anvil/internal/store"
)

// Enrolment: an administrator issues a one-time secret (anvil rack secret,
// or rackcontrollers/ op=enrol_secret); the rack presents it once
// (rack/ op=enrol) and gets a system id and a credential of its own, kept
// in its data directory. The credential opens the rack API and nothing
// else, and deleting the rack from rackcontrollers/ revokes it.

// CredentialsFile is where a rack keeps its credential, private to it.
const CredentialsFile = "rack-credentials.json"

// EnrolSecretField and EnrolHostnameField are the form fields of op=enrol.
const (
	EnrolSecretField   = "secret"
	EnrolHostnameField = "hostname"
)

// Credentials are an enrolled rack's identity and key.
type Credentials struct {
	SystemID string `json:"system_id"`
	Hostname string `json:"hostname"`
	APIKey   string `json:"api_key"`
}

// SigningKey is the key a rack signs its sightings of boots with: its
// own, with the secret replaced by its hash, which is all the region
// keeps of it.
func (c Credentials) SigningKey() string {
	cr, err := client.ParseAPIKey(c.APIKey)
	if err != nil {
		return ""
	}
	return cr.ConsumerKey + ":" + cr.TokenKey + ":" + store.HashSecret(cr.TokenSecret)
}

// LoadCredentials reads the credential in dir; ok is false when the rack
// has not enrolled.
func LoadCredentials(dir string) (c Credentials, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(dir, CredentialsFile))
	if errors.Is(err, os.ErrNotExist) {
		return Credentials{}, false, nil
	}
	if err != nil {
		return Credentials{}, false, fmt.Errorf("rack credentials: %w", err)
	}
	if err := json.Unmarshal(b, &c); err != nil || c.SystemID == "" {
		return Credentials{}, false, fmt.Errorf("rack credentials %s are unreadable; remove the file and enrol again", filepath.Join(dir, CredentialsFile))
	}
	if _, err := client.ParseAPIKey(c.APIKey); err != nil {
		return Credentials{}, false, fmt.Errorf("rack credentials %s: %w", filepath.Join(dir, CredentialsFile), err)
	}
	return c, true, nil
}

// SaveCredentials writes c to dir, readable by this user only, whole or
// not at all.
func SaveCredentials(dir string, c Credentials) error {
	b, _ := json.MarshalIndent(c, "", "  ")
	tmp, err := os.CreateTemp(dir, CredentialsFile+".*")
	if err != nil {
		return fmt.Errorf("save rack credentials: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err == nil {
		_, err = tmp.Write(append(b, '\n'))
		if err == nil {
			err = tmp.Sync()
		}
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp.Name(), filepath.Join(dir, CredentialsFile))
		}
	}
	if err != nil {
		return fmt.Errorf("save rack credentials: %w", err)
	}
	return nil
}

// Enrol presents secret to the region and returns the credential it
// issues. The answer is the only copy of the credential's secret: the
// caller saves it before anything else.
func Enrol(ctx context.Context, regionURL, caFile, secret, hostname, version string) (Credentials, error) {
	cl, err := client.New(regionURL, client.Anonymous)
	if err == nil {
		err = cl.TrustCAFile(caFile)
	}
	if err != nil {
		return Credentials{}, err
	}
	cl.UserAgent = RackAgent + version
	b, err := cl.Do(ctx, http.MethodPost, "rack/", url.Values{"op": {"enrol"}},
		url.Values{EnrolSecretField: {strings.TrimSpace(secret)}, EnrolHostnameField: {hostname}})
	if err != nil {
		return Credentials{}, fmt.Errorf("enrol with %s: %w", regionURL, err)
	}
	var c Credentials
	if err := json.Unmarshal(b, &c); err != nil || c.SystemID == "" {
		return Credentials{}, fmt.Errorf("enrol with %s: unreadable answer", regionURL)
	}
	if _, err := client.ParseAPIKey(c.APIKey); err != nil {
		return Credentials{}, fmt.Errorf("enrol with %s: %w", regionURL, err)
	}
	return c, nil
}

// credentials decides what the rack calls the region with: the
// credential it enrolled with before, else a new one from EnrolSecret,
// else the API key it was given. ok says it is enrolled.
func credentials(ctx context.Context, cfg Config) (c Credentials, ok bool, err error) {
	c, ok, err = LoadCredentials(cfg.DataDir)
	if err != nil || ok {
		return c, ok, err
	}
	if cfg.EnrolSecret == "" {
		if cfg.APIKey == "" {
			return Credentials{}, false, errors.New("this rack has not enrolled: give it an enrolment secret (anvil rack secret on the region)")
		}
		return Credentials{APIKey: cfg.APIKey}, false, nil
	}
	host := cfg.Hostname
	if host == "" {
		host, _ = os.Hostname()
	}
	// The first region that answers decides; one that refuses (a spent
	// secret) is not asked again elsewhere.
	for _, region := range RegionURLs(cfg.RegionURL) {
		c, err = Enrol(ctx, region, cfg.RegionCA, cfg.EnrolSecret, host, cfg.Version)
		var ae *client.APIError
		if err == nil || errors.As(err, &ae) {
			break
		}
		cfg.Log.Warn("region not reached for enrolment", "region", region, "err", err)
	}
	if err != nil {
		return Credentials{}, false, err
	}
	if err := SaveCredentials(cfg.DataDir, c); err != nil {
		return Credentials{}, false, err
	}
	cfg.Log.Info("rack enrolled", "system_id", c.SystemID, "hostname", c.Hostname)
	return c, true, nil
}

// RegionURLs are the regions a --region value names, separated by commas.
func RegionURLs(s string) []string {
	var out []string
	for _, u := range strings.Split(s, ",") {
		if u = strings.TrimSpace(u); u != "" {
			out = append(out, u)
		}
	}
	return out
}
