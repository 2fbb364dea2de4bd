package redfish

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/common"
	"github.com/stmcginnis/gofish/redfish"

	"github.com/anvilmetal/anvil/internal/power"
)

// system is the ComputerSystem an operation acts on, with what gofish
// does not expose parsed from its raw JSON.
type system struct {
	*redfish.ComputerSystem
	p params

	hasReset    bool     // the system offers ComputerSystem.Reset
	bootTargets []string // allowed BootSourceOverrideTarget values; nil if not advertised
	hasBootMode bool     // the system reports BootSourceOverrideMode
	nics        string   // EthernetInterfaces collection
}

// withSystem connects, finds the system node_id names, runs f on it and
// closes the connection; every error comes back classified.
func withSystem(ctx context.Context, raw map[string]string, op string, f func(*system) error) error {
	p, err := parse(raw)
	if err != nil {
		return &power.Error{Kind: power.BadParams, Op: op, Err: err}
	}
	c, closeConn, err := connect(ctx, p)
	if err != nil {
		return classify(ctx, op, p, err)
	}
	defer closeConn()
	s, err := findSystem(c, p)
	if err != nil {
		return classify(ctx, op, p, err)
	}
	return classify(ctx, op, p, f(s))
}

// connect opens a client bound to ctx: gofish issues every request with
// the context given at connect time, so ctx bounds the whole operation.
// Basic auth rather than a session: nothing to log out of, so nothing is
// left on the BMC when ctx ends mid-operation (BMCs have few session
// slots). Keep-alives are off, and the returned func drops whatever
// connection is still idle.
func connect(ctx context.Context, p params) (*gofish.APIClient, func(), error) {
	tr := &http.Transport{
		// No proxy from the environment: BMCs sit on management networks.
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout: 15 * time.Second,
		// Verification is on unless power_verify_tls=false opts out.
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: !p.verify}, //nolint:gosec // explicit per-machine opt-out
		DisableKeepAlives: true,
	}
	c, err := gofish.ConnectContext(ctx, gofish.ClientConfig{
		Endpoint: p.endpoint, Username: p.user, Password: p.pass, BasicAuth: true,
		HTTPClient: &http.Client{Transport: tr},
	})
	if err != nil {
		tr.CloseIdleConnections()
		return nil, nil, err
	}
	return c, tr.CloseIdleConnections, nil
}

// findSystem resolves node_id: an @odata.id is fetched directly; an Id is
// looked up in the Systems collection. Without node_id the service must
// list exactly one system.
func findSystem(c *gofish.APIClient, p params) (*system, error) {
	if strings.HasPrefix(p.nodeID, "/") {
		s, err := getSystem(c, p, p.nodeID)
		var re *common.Error
		if errors.As(err, &re) && re.HTTPReturnedStatusCode == http.StatusNotFound {
			return nil, &power.Error{Kind: power.BadParams, Err: fmt.Errorf("%s=%q: no such system at %s", ParamNodeID, p.nodeID, p.endpoint)}
		}
		return s, err
	}
	links, err := memberLinks(c, systemsLink(c))
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(links))
	for i, l := range links {
		ids[i] = path.Base(strings.TrimRight(l, "/"))
	}
	switch {
	case len(links) == 0:
		return nil, &power.Error{Kind: power.BMCError, Err: fmt.Errorf("%s lists no systems", p.endpoint)}
	case p.nodeID == "" && len(links) == 1:
		return getSystem(c, p, links[0])
	case p.nodeID == "":
		return nil, &power.Error{Kind: power.BadParams, Err: fmt.Errorf("%s fronts %d systems (%s); set %s to one of them", p.endpoint, len(links), strings.Join(ids, ", "), ParamNodeID)}
	}
	if i := slices.Index(ids, p.nodeID); i >= 0 {
		return getSystem(c, p, links[i])
	}
	// Ids are nearly always the last path segment; look inside if not.
	for _, l := range links {
		s, err := getSystem(c, p, l)
		if err != nil {
			return nil, err
		}
		if s.ID == p.nodeID {
			return s, nil
		}
	}
	return nil, &power.Error{Kind: power.BadParams, Err: fmt.Errorf("%s=%q is not among the systems of %s (%s)", ParamNodeID, p.nodeID, p.endpoint, strings.Join(ids, ", "))}
}

func getSystem(c common.Client, p params, link string) (*system, error) {
	cs, err := redfish.GetComputerSystem(c, link)
	if err != nil {
		return nil, err
	}
	var raw struct {
		Actions struct {
			Reset *struct{} `json:"#ComputerSystem.Reset"`
		}
		Boot struct {
			Targets []string `json:"BootSourceOverrideTarget@Redfish.AllowableValues"`
			Mode    *string  `json:"BootSourceOverrideMode"`
		}
		EthernetInterfaces common.Link
	}
	if err := json.Unmarshal(cs.RawData, &raw); err != nil {
		return nil, err
	}
	return &system{
		ComputerSystem: cs, p: p, hasReset: raw.Actions.Reset != nil,
		bootTargets: raw.Boot.Targets, hasBootMode: raw.Boot.Mode != nil, nics: raw.EthernetInterfaces.String(),
	}, nil
}

// systemsLink reads the Systems link from the service root; gofish parses
// it but keeps it to itself.
func systemsLink(c common.Client) string {
	const fallback = "/redfish/v1/Systems" // mandated by the specification
	resp, err := c.Get(common.DefaultServiceRoot)
	if err != nil {
		return fallback
	}
	defer resp.Body.Close()
	var root struct{ Systems common.Link }
	if json.NewDecoder(resp.Body).Decode(&root) != nil || root.Systems == "" {
		return fallback
	}
	return root.Systems.String()
}

// memberLinks lists a collection's members, following next links. Unlike
// gofish's collection helpers it keeps the first error as it was, so it can
// be classified.
func memberLinks(c common.Client, link string) ([]string, error) {
	var links []string
	for link != "" {
		coll, err := common.GetCollection(c, link)
		if err != nil {
			return nil, err
		}
		links = append(links, coll.ItemLinks...)
		link = coll.MembersNextLink
	}
	return links, nil
}

// reset posts the first of choices the system allows. Systems that do not
// advertise allowable values are sent the first choice.
func (s *system) reset(choices ...redfish.ResetType) error {
	if !s.hasReset {
		return &power.Error{Kind: power.Unsupported, Err: fmt.Errorf("system %s has no ComputerSystem.Reset action", s.ID)}
	}
	t := choices[0]
	if allowed := s.SupportedResetTypes; len(allowed) > 0 {
		i := slices.IndexFunc(choices, func(c redfish.ResetType) bool { return slices.Contains(allowed, c) })
		if i < 0 {
			return &power.Error{Kind: power.Unsupported, Err: fmt.Errorf("system %s allows ResetType %v, none of %v", s.ID, allowed, choices)}
		}
		t = choices[i]
	}
	return s.Reset(t)
}

// setBoot patches the boot override. In auto mode the override's mode is
// sent only when UEFI is asked for and the system reports a mode at all:
// many BMCs reject a mode they do not implement, and sending Legacy for a
// caller that did not care would break UEFI machines.
func (s *system) setBoot(target redfish.BootSourceOverrideTarget, dev power.BootDevice) error {
	if len(s.bootTargets) > 0 && !slices.Contains(s.bootTargets, string(target)) {
		return &power.Error{Kind: power.Unsupported, Err: fmt.Errorf("system %s allows boot targets %v, not %s", s.ID, s.bootTargets, target)}
	}
	b := redfish.Boot{BootSourceOverrideTarget: target, BootSourceOverrideEnabled: redfish.OnceBootSourceOverrideEnabled}
	if dev.Persistent {
		b.BootSourceOverrideEnabled = redfish.ContinuousBootSourceOverrideEnabled
	}
	switch {
	case s.p.bootType == "efi", s.p.bootType == "auto" && dev.EFI && s.hasBootMode:
		b.BootSourceOverrideMode = redfish.UEFIBootSourceOverrideMode
	case s.p.bootType == "legacy":
		b.BootSourceOverrideMode = redfish.LegacyBootSourceOverrideMode
	}
	return s.SetBoot(b)
}
