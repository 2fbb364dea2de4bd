package region

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/settings"
)

// ConfigPollInterval names the power monitor's poll interval (seconds) in
// the run-time settings: an operator changes it from the API or the web
// page, and the monitor picks it up at its next refresh.
const ConfigPollInterval = settings.PowerPollInterval

// settingsTTL is how long a region trusts its copy of the settings: a
// change made through another region takes effect here within it.
const settingsTTL = 2 * time.Second

// settingsCache is the region's copy of the stored settings.
type settingsCache struct {
	mu   sync.Mutex
	at   time.Time
	vals map[string]string
}

// settingValues returns the stored settings, read again when the copy is
// older than settingsTTL. A store that cannot be read gives the last copy
// (defaults at first) and the error.
func (s *Service) settingValues(ctx context.Context) (map[string]string, error) {
	c := &s.settings
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.vals != nil && time.Since(c.at) < settingsTTL {
		return c.vals, nil
	}
	vals, err := s.Store.ListConfig(ctx)
	if err != nil {
		if c.vals == nil {
			return map[string]string{}, fmt.Errorf("read settings: %w", err)
		}
		return c.vals, fmt.Errorf("read settings: %w", err)
	}
	c.vals, c.at = vals, time.Now()
	return vals, nil
}

// Setting is the value of the named setting in effect: the stored one,
// else the default, which is the flag this process was started with where
// one sets it, else MAAS's.
func (s *Service) Setting(ctx context.Context, name string) (any, error) {
	it, ok := settings.Lookup(name)
	if !ok {
		return nil, &ValidationError{Field: name, Err: &settings.UnknownError{Name: name}}
	}
	vals, err := s.settingValues(ctx)
	return s.valueOf(it, vals), err
}

func (s *Service) valueOf(it settings.Item, vals map[string]string) any {
	if raw, ok := vals[it.Name]; ok {
		return it.Decode(raw)
	}
	if d, ok := s.defaultOf(it.Name); ok {
		return d
	}
	return it.Default
}

// defaultOf is the default this process's flags give a setting.
func (s *Service) defaultOf(name string) (any, bool) {
	switch name {
	case settings.EnlistCommissioning:
		return s.EnlistCommission, true
	case settings.AutoIPMIUser:
		return s.EnlistBMCUser, true
	case settings.NodeTimeout:
		return int(s.Config.Timeout / time.Minute), true
	case settings.PowerPollInterval:
		if d := time.Duration(s.defaultPoll.Load()); d > 0 {
			return int(d / time.Second), true
		}
		return int(defaultPollInterval / time.Second), true
	case settings.DefaultOSystem:
		return s.Config.DefaultOSystem, true
	case settings.DefaultDistroSeries:
		return s.Config.DefaultDistroSeries, true
	case settings.MAASName:
		if h, err := os.Hostname(); err == nil && h != "" {
			return h, true
		}
	}
	return nil, false
}

// SetSetting checks and stores a setting; it returns the value as it will
// be answered. Refusals are ValidationErrors naming the setting, as MAAS
// names the field.
func (s *Service) SetSetting(ctx context.Context, name, raw string) (any, error) {
	it, ok := settings.Lookup(name)
	if !ok {
		return nil, &ValidationError{Field: name, Err: &settings.UnknownError{Name: name}}
	}
	v, err := it.Parse(raw)
	if err != nil {
		return nil, &ValidationError{Field: it.Name, Err: err}
	}
	if err := s.checkImageSetting(ctx, it.Name, v); err != nil {
		return nil, &ValidationError{Field: it.Name, Err: err}
	}
	if err := s.Store.SetConfig(ctx, it.Name, settings.Encode(v)); err != nil {
		return nil, err
	}
	s.settings.mu.Lock()
	s.settings.vals = nil // this region sees its own change at once
	s.settings.mu.Unlock()
	return v, nil
}

// checkImageSetting refuses a default OS or release no uploaded image
// has, as MAAS offers only the releases it has images of.
func (s *Service) checkImageSetting(ctx context.Context, name string, v any) error {
	if name != settings.DefaultOSystem && name != settings.DefaultDistroSeries {
		return nil
	}
	rs, err := s.Store.ListBootResources(ctx)
	if err != nil {
		return err
	}
	osys, series := s.str(ctx, settings.DefaultOSystem), v.(string)
	if name == settings.DefaultOSystem {
		osys, series = v.(string), ""
	}
	var have []string
	for _, r := range rs {
		o, rel, ok := strings.Cut(r.Name, "/")
		if !ok {
			o, rel = "custom", r.Name
		}
		have = append(have, o+"/"+rel)
		if o == osys && (series == "" || rel == series) {
			return nil
		}
	}
	if len(have) == 0 {
		return errors.New("no images are uploaded yet (boot-resources/)")
	}
	if series == "" {
		return fmt.Errorf("no image of %q is uploaded (images: %s)", osys, strings.Join(have, ", "))
	}
	return fmt.Errorf("no image %s/%s is uploaded (images: %s)", osys, series, strings.Join(have, ", "))
}

// Typed readers for the settings Anvil acts on; a store that cannot be
// read gives the last values known (defaults at first), logged.
func (s *Service) str(ctx context.Context, name string) string {
	v, _ := s.setting(ctx, name).(string)
	return v
}

func (s *Service) boolean(ctx context.Context, name string) bool {
	v, _ := s.setting(ctx, name).(bool)
	return v
}

func (s *Service) integer(ctx context.Context, name string) int {
	v, _ := s.setting(ctx, name).(int)
	return v
}

func (s *Service) setting(ctx context.Context, name string) any {
	v, err := s.Setting(ctx, name)
	if err != nil {
		s.Log.Warn("setting", "name", name, "err", err)
	}
	return v
}

// SettingString, SettingBool and SettingInt read a setting for the API
// and the web pages.
func (s *Service) SettingString(ctx context.Context, name string) string { return s.str(ctx, name) }
func (s *Service) SettingBool(ctx context.Context, name string) bool     { return s.boolean(ctx, name) }
func (s *Service) SettingInt(ctx context.Context, name string) int       { return s.integer(ctx, name) }

// lifecycle is the lifecycle's configuration with the settings in effect.
func (s *Service) lifecycle(ctx context.Context) machine.Config {
	c := s.Config
	if n := s.integer(ctx, settings.NodeTimeout); n > 0 {
		c.Timeout = time.Duration(n) * time.Minute
	}
	c.DefaultOSystem = s.str(ctx, settings.DefaultOSystem)
	c.DefaultDistroSeries = s.str(ctx, settings.DefaultDistroSeries)
	return c
}

// SetPollInterval validates and stores the poll interval.
func (s *Service) SetPollInterval(ctx context.Context, v string) (time.Duration, error) {
	got, err := s.SetSetting(ctx, settings.PowerPollInterval, v)
	if err != nil {
		var ve *ValidationError
		if errors.As(err, &ve) {
			ve.Field = "value"
		}
		return 0, err
	}
	return time.Duration(got.(int)) * time.Second, nil
}

// PollInterval is the interval in effect: the stored setting, else the
// one the process was started with.
func (s *Service) PollInterval(ctx context.Context) time.Duration {
	return time.Duration(s.integer(ctx, settings.PowerPollInterval)) * time.Second
}
