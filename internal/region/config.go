package region

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// ConfigPollInterval names the power monitor's poll interval (seconds) in
// the run-time settings: an operator changes it from the API or the web
// page, and the monitor picks it up at its next refresh.
const ConfigPollInterval = "power_poll_interval"

// Poll interval bounds: below ten seconds a large fleet's BMCs would be
// busier answering polls than doing anything else; above a day drift
// would go unseen for too long to be worth calling monitoring.
const (
	MinPollInterval = 10 * time.Second
	MaxPollInterval = 24 * time.Hour
)

// ParsePollInterval reads a setting's value: whole seconds, or a Go
// duration ("5m").
func ParsePollInterval(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		n, nerr := strconv.Atoi(v)
		if nerr != nil {
			return 0, fmt.Errorf("%q is neither seconds nor a duration like 5m", v)
		}
		d = time.Duration(n) * time.Second
	}
	if d < MinPollInterval || d > MaxPollInterval {
		return 0, fmt.Errorf("poll interval %s is outside %s to %s", d, MinPollInterval, MaxPollInterval)
	}
	return d, nil
}

// SetPollInterval validates and stores the poll interval.
func (s *Service) SetPollInterval(ctx context.Context, v string) (time.Duration, error) {
	d, err := ParsePollInterval(v)
	if err != nil {
		return 0, &ValidationError{Field: "value", Err: err}
	}
	if err := s.Store.SetConfig(ctx, ConfigPollInterval, strconv.Itoa(int(d.Seconds()))); err != nil {
		return 0, err
	}
	return d, nil
}

// PollInterval is the interval in effect: the stored setting, else the
// one the process was started with.
func (s *Service) PollInterval(ctx context.Context) time.Duration {
	v, ok, err := s.Store.GetConfig(ctx, ConfigPollInterval)
	if err == nil && ok {
		if d, err := ParsePollInterval(v); err == nil {
			return d
		}
	}
	if d := time.Duration(s.defaultPoll.Load()); d > 0 {
		return d
	}
	return defaultPollInterval
}
