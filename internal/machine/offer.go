package machine

import "time"

// Offered lists, in UserActions order, the user actions a may take on m
// as it is. Each is the action itself tried on a copy and thrown away, so
// what a page offers cannot drift from what Step would accept.
func Offered(m Machine, a Actor, cfg Config, now time.Time) []Action {
	var out []Action
	for _, act := range UserActions {
		if _, err := Step(m, Input{Action: act, Actor: a, Now: now}, cfg); err == nil {
			out = append(out, act)
		}
	}
	return out
}
