package api

import (
	"net/http"

	"github.com/anvilmetal/anvil/internal/settings"
)

// maasRoutes serve MAAS's maas/ endpoint: get_config and set_config under
// MAAS's configuration names (internal/settings). An unknown name is a 400
// in MAAS's words, never a silent no-op, so a script setting an option
// Anvil does not know learns it.
func (s *Server) maasRoutes() []route {
	return []route{
		get("get_config", authenticated, s.getConfig),
		post("set_config", adminOnly, s.setConfig),
	}
}

// getConfig answers the value as JSON, as MAAS does ("noble", true, 30,
// null). Secret values (a vCenter password, a K_g key) are for
// administrators only.
func (s *Server) getConfig(w http.ResponseWriter, r *request) error {
	name, err := configName(r)
	if err != nil {
		return err
	}
	if it, ok := settings.Lookup(name); ok && it.Secret && !r.who.user.Admin {
		writeText(w, http.StatusForbidden, "Only administrators may read "+it.Name)
		return nil
	}
	v, err := s.svc.Setting(r.Context(), name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// setConfig stores a value and answers "OK", as MAAS does.
func (s *Server) setConfig(w http.ResponseWriter, r *request) error {
	name, err := configName(r)
	if err != nil {
		return err
	}
	if !r.form.Has("value") {
		return badField("value", "This field is required.")
	}
	v, err := s.svc.SetSetting(r.Context(), name, r.form.Get("value"))
	if err != nil {
		return err
	}
	shown := any(settings.Encode(v))
	if it, _ := settings.Lookup(name); it.Secret {
		shown = "(secret)"
	}
	s.log.Info("setting changed", "name", name, "value", shown, "by", r.who.user.Name)
	writeText(w, http.StatusOK, "OK")
	return nil
}

func configName(r *request) (string, error) {
	name := r.form.Get("name")
	if name == "" {
		return "", badField("name", "This field is required.")
	}
	return name, nil
}
