package machine

import "time"

// Level is an event's severity, named as MAAS names them.
type Level string

const (
	LevelDebug    Level = "DEBUG"
	LevelInfo     Level = "INFO"
	LevelWarning  Level = "WARNING"
	LevelError    Level = "ERROR"
	LevelCritical Level = "CRITICAL"
	LevelAudit    Level = "AUDIT"
)

// levelRank orders levels so that a query for INFO also returns ERRORs.
var levelRank = map[Level]int{
	LevelDebug: 10, LevelInfo: 20, LevelAudit: 20, LevelWarning: 30, LevelError: 40, LevelCritical: 50,
}

// Rank returns the level's severity for comparisons; unknown levels rank 0.
func (l Level) Rank() int { return levelRank[l] }

// ParseLevel accepts a MAAS level name in any case.
func ParseLevel(v string) (Level, bool) {
	for l := range levelRank {
		if equalFold(string(l), v) {
			return l, true
		}
	}
	return "", false
}

// BootStepType begins the type of every event a rack reports of a
// machine's boot ("Boot dhcp", "Boot tftp", "Boot config"): the steps a
// timeline may leave out so that lifecycle events stay in view.
const BootStepType = "Boot "

// Event is one thing that happened to a machine: a status change, an action,
// a user request, a power result. Stores give it ID and keep it forever.
type Event struct {
	ID          int64
	SystemID    string
	Hostname    string
	Type        string // short, fixed phrase: "Deploying", "Powering on"
	Level       Level
	Description string // the details, in words
	User        string // who asked, if a person did
	Created     time.Time
}
