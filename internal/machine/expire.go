package machine

import (
	"fmt"
	"time"
)

// Expired reports whether m's monitored status has run past its deadline.
func Expired(m *Machine, now time.Time) bool {
	return m.Status.Monitored() && !m.StatusExpires.IsZero() && !now.Before(m.StatusExpires)
}

// Expire fails a machine whose monitored status ran out, recording how long
// it waited. It reports false, and changes nothing, when m has not expired.
// The status monitor calls it for each candidate; because it re-checks the
// deadline against the machine it is given, a monitor acting on a stale list
// cannot fail a machine that has since made progress.
func Expire(m Machine, now time.Time, cfg Config) (Outcome, bool) {
	if !Expired(&m, now) {
		return Outcome{}, false
	}
	reason := fmt.Sprintf("timed out: no progress reported within %s", cfg.TimeoutFor(m.Status))
	if m.AwaitsLocalBoot() { // the image is on disk: only the OS's word is missing
		reason = fmt.Sprintf("timed out: the image was written, but the deployed OS never reported that it is up within %s "+
			"(cloud-init phone_home; an image without cloud-init needs deployed_at=%s)", cfg.TimeoutFor(m.Status), DeployedAtLocalBoot)
	}
	out, err := Step(m, Input{Action: Fail, Actor: SystemActor, Now: now, Comment: reason}, cfg)
	if err != nil {
		return Outcome{}, false
	}
	return out, true
}
