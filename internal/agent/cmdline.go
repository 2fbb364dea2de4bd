package agent

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/anvilmetal/anvil/internal/agentapi"
)

// Purposes anvil.purpose takes.
const (
	PurposeEnlist    = "enlist"
	PurposeEphemeral = "ephemeral"
	PurposeInstall   = "install"
)

// DefaultHeartbeat is how often a working phase signals WORKING unless
// anvil.heartbeat says otherwise.
const DefaultHeartbeat = 30 * time.Second

// Cmdline is what the agent reads from the kernel command line.
type Cmdline struct {
	URL       string        // anvil.url: the region's metadata URL (…/MAAS/metadata/)
	Purpose   string        // anvil.purpose
	Enrol     string        // anvil.enrol; never printed
	Seen      string        // anvil.seen: the rack's sighting of this boot
	BootMAC   string        // from BOOTIF (01-aa-bb-cc-dd-ee-ff), normalised
	Heartbeat time.Duration // anvil.heartbeat=<seconds>
	// Boot is the rack's boot HTTP server (anvil.boot), which serves
	// images from its verified cache.
	Boot string
}

// String shows the command line without the enrolment secret.
func (c Cmdline) String() string {
	enrol := "no"
	if c.Enrol != "" {
		enrol = "yes"
	}
	return fmt.Sprintf("url=%s purpose=%s boot_mac=%s heartbeat=%s enrol=%s", c.URL, c.Purpose, c.BootMAC, c.Heartbeat, enrol)
}

// ParseCmdline parses /proc/cmdline's contents. anvil.url is required;
// anvil.purpose defaults to enlist.
func ParseCmdline(s string) (Cmdline, error) {
	c := Cmdline{Purpose: PurposeEnlist, Heartbeat: DefaultHeartbeat}
	for _, f := range splitCmdline(s) {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case agentapi.ParamURL:
			c.URL = v
		case agentapi.ParamPurpose:
			c.Purpose = v
		case agentapi.ParamEnrol:
			c.Enrol = v
		case agentapi.ParamBoot:
			c.Boot = v
		case agentapi.ParamSeen:
			c.Seen = v
		case "BOOTIF":
			c.BootMAC = parseBootIF(v)
		case "anvil.heartbeat":
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				c.Heartbeat = time.Duration(n) * time.Second
			}
		}
	}
	if c.URL == "" {
		return c, errors.New("no " + agentapi.ParamURL + " on the kernel command line")
	}
	switch c.Purpose {
	case PurposeEnlist, PurposeEphemeral, PurposeInstall:
	default:
		return c, fmt.Errorf("unknown %s=%q", agentapi.ParamPurpose, c.Purpose)
	}
	return c, nil
}

// splitCmdline splits on spaces outside double quotes and drops the quotes,
// as the kernel does.
func splitCmdline(s string) []string {
	var out []string
	var cur strings.Builder
	quoted, any := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted, any = !quoted, true
		case !quoted && (r == ' ' || r == '\t' || r == '\n'):
			if any {
				out = append(out, cur.String())
			}
			cur.Reset()
			any = false
		default:
			cur.WriteRune(r)
			any = true
		}
	}
	if any {
		out = append(out, cur.String())
	}
	return out
}

// parseBootIF turns PXELINUX's BOOTIF (hardware type 01, then the MAC with
// dashes) into a normalised MAC, or "" when it is not one.
func parseBootIF(v string) string {
	v = strings.ReplaceAll(v, "-", ":")
	if len(v) == 20 && strings.HasPrefix(v, "01:") {
		v = v[3:]
	}
	return NormaliseMAC(v)
}

// NormaliseMAC lower-cases a 6-byte MAC with colons, or returns "".
func NormaliseMAC(s string) string {
	hw, err := net.ParseMAC(strings.TrimSpace(s))
	if err != nil || len(hw) != 6 {
		return ""
	}
	return hw.String()
}
