package api

import (
	"net/http"
	"strconv"

	"github.com/anvilmetal/anvil/internal/region"
)

// maasRoutes serve MAAS's maas/ endpoint: get_config and set_config for
// the run-time settings Anvil has. An unknown name is a 400, never a
// silent no-op, so a script setting a MAAS-only option learns it.
func (s *Server) maasRoutes() []route {
	return []route{
		get("get_config", authenticated, s.getConfig),
		post("set_config", adminOnly, s.setConfig),
	}
}

func (s *Server) getConfig(w http.ResponseWriter, r *request) error {
	switch name := r.form.Get("name"); name {
	case region.ConfigPollInterval:
		writeJSON(w, http.StatusOK, int(s.svc.PollInterval(r.Context()).Seconds()))
		return nil
	default:
		return badField("name", "unknown setting %q (Anvil has: %s)", name, region.ConfigPollInterval)
	}
}

func (s *Server) setConfig(w http.ResponseWriter, r *request) error {
	switch name := r.form.Get("name"); name {
	case region.ConfigPollInterval:
		d, err := s.svc.SetPollInterval(r.Context(), r.form.Get("value"))
		if err != nil {
			return err
		}
		s.log.Info("setting changed", "name", name, "value", d.String(), "by", r.who.user.Name)
		writeText(w, http.StatusOK, strconv.Itoa(int(d.Seconds())))
		return nil
	default:
		return badField("name", "unknown setting %q (Anvil has: %s)", name, region.ConfigPollInterval)
	}
}
