package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/anvilmetal/anvil/internal/powerroute"
	"github.com/anvilmetal/anvil/internal/rack"
	"github.com/anvilmetal/anvil/internal/store"
)

// Rack enrolment and reports (see package rack's enrol.go): an
// administrator issues a one-time secret, a rack spends it on rack/
// op=enrol for a credential of its own, and reports its status with it.

func init() {
	addDocs(map[string]string{
		"RackControllersHandler enrol_secret": doc("Issue a one-time secret a rack enrols with (anvil rack --enrol-secret).",
			"expires_in: seconds the secret is valid (default 3600, from 60 to 604800). The secret is shown once; the region keeps only its hash.",
			"bmc_networks: networks (CIDRs, repeatable) whose BMCs the rack enrolling with it may power (its granted_bmc_networks); without any it powers only BMCs in the subnets it serves until an administrator grants it some.",
			"Answers {\"secret\": ..., \"expires\": ...}."),
		"AnvilRackHandler enrol": doc("Enrol a rack with a one-time secret from rackcontrollers/ op=enrol_secret (no credentials needed).",
			"secret: the secret; hostname: the rack's name. Answers the rack's system_id and its own API key, which only the rack API accepts. A rack enrolling again under its name keeps its system id; its earlier key stops working."),
		"AnvilRackHandler report": doc("A rack reports its interfaces, BMC networks and the health of its services (status: JSON, see rackcontrollers/).",
			"A malformed report is refused whole; the last good one stays."),
		"RackControllerHandler delete": doc("Delete a rack: it is forgotten and its credentials stop working at once; it must enrol again with a new secret."),
	})
}

const (
	defaultSecretLife = time.Hour
	maxSecretLife     = 7 * 24 * time.Hour
)

// rackEnrolRoutes are the enrolled rack's side, on rack/.
func (s *Server) rackEnrolRoutes() []route {
	return []route{
		post("enrol", anonymous, s.enrolRack),
		post("report", rackAccess, s.rackReport),
	}
}

func (s *Server) enrolSecret(w http.ResponseWriter, r *request) error {
	life := defaultSecretLife
	if v := r.form.Get("expires_in"); v != "" {
		n, err := strconv.Atoi(v)
		// Compared in seconds: n*time.Second overflows for large n.
		if err != nil || n < 60 || n > int(maxSecretLife/time.Second) {
			return badField("expires_in", "must be a number of seconds from 60 to %d", int(maxSecretLife.Seconds()))
		}
		life = time.Duration(n) * time.Second
	}
	nets, err := powerroute.ParseNetworks(r.form["bmc_networks"])
	if err != nil {
		return badField("bmc_networks", "%v", err)
	}
	expires := time.Now().Add(life).UTC()
	secret, err := s.store.CreateRackSecret(r.Context(), r.who.user.Name, expires, powerroute.Strings(nets)...)
	if err != nil {
		return err
	}
	s.log.Info("rack enrolment secret issued", "by", r.who.user.Name, "expires", expires.Format(time.RFC3339), "bmc_networks", powerroute.Strings(nets))
	writeJSON(w, http.StatusOK, map[string]string{"secret": secret, "expires": expires.Format(time.RFC3339)})
	return nil
}

func (s *Server) enrolRack(w http.ResponseWriter, r *request) error {
	secret := r.form.Get(rack.EnrolSecretField)
	if secret == "" || len(secret) > 200 {
		return badField(rack.EnrolSecretField, "This field is required.")
	}
	if r.form.Get(rack.EnrolHostnameField) == "" {
		return badField(rack.EnrolHostnameField, "This field is required.")
	}
	k := rackOf(r)
	c, err := s.store.EnrolRack(r.Context(), secret, k)
	if errors.Is(err, store.ErrNotFound) {
		s.log.Warn("rack enrolment refused", "hostname", k.Hostname, "address", k.Address)
		return &statusError{code: http.StatusForbidden, msg: "The enrolment secret is unknown, already used or expired."}
	}
	if err != nil {
		return err
	}
	s.log.Info("rack enrolled", "system_id", c.RackID, "hostname", c.Hostname, "address", k.Address)
	writeJSON(w, http.StatusOK, rack.Credentials{SystemID: c.RackID, Hostname: c.Hostname, APIKey: c.APIKey()})
	return nil
}

func (s *Server) rackReport(w http.ResponseWriter, r *request) error {
	st, err := rack.ParseStatus([]byte(r.form.Get("status")))
	if err != nil {
		return badField("status", "%v", err)
	}
	k := rackOf(r)
	// The DNS addresses follow the rack's interfaces: one added since
	// the rack connected is offered to machines from its next report.
	if st.DNS != nil {
		k.DNS = rackDNS(st.DNS)
	}
	b, _ := json.Marshal(st)
	k.Report = string(b)
	if err := s.store.ReportRack(r.Context(), k); errors.Is(err, store.ErrNotFound) {
		return errUnauthorized{"this rack has been deleted; enrol it again"}
	} else if err != nil {
		return err
	}
	s.noteReportAddresses(r, k)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) deleteRack(w http.ResponseWriter, r *request) error {
	if err := s.store.DeleteRack(r.Context(), r.id); err != nil {
		return err
	}
	s.log.Info("rack deleted; its credentials are revoked", "system_id", r.id, "by", r.who.user.Name)
	w.WriteHeader(http.StatusNoContent)
	return nil
}
