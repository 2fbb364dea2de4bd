package api

import (
	"net/http"

	"github.com/anvilmetal/anvil/internal/store"
)

func (s *Server) versionRoutes() []route {
	return []route{get("", anonymous, func(w http.ResponseWriter, r *request) error {
		// version is the MAAS API level Anvil speaks; clients gate
		// features on it. subversion names Anvil itself.
		writeJSON(w, http.StatusOK, map[string]any{
			"version":      "3.5.0",
			"subversion":   "anvil " + s.opts.Version,
			"capabilities": []string{"authenticate-api", "anvil-event-watch", "anvil-power-queue"},
		})
		return nil
	})}
}

type userJSON struct {
	Username    string `json:"username"`
	Email       string `json:"email"`
	IsSuperuser bool   `json:"is_superuser"`
	IsLocal     bool   `json:"is_local"`
	ResourceURI string `json:"resource_uri"`
}

func renderUser(u store.User) userJSON {
	return userJSON{Username: u.Name, Email: u.Email, IsSuperuser: u.Admin, IsLocal: true, ResourceURI: Prefix + "users/" + u.Name + "/"}
}

func (s *Server) userRoutes() []route {
	return []route{
		get("whoami", authenticated, func(w http.ResponseWriter, r *request) error {
			writeJSON(w, http.StatusOK, renderUser(*r.who.user))
			return nil
		}),
		get("", adminOnly, func(w http.ResponseWriter, r *request) error {
			us, err := s.store.ListUsers(r.Context())
			if err != nil {
				return err
			}
			out := make([]userJSON, 0, len(us))
			for _, u := range us {
				out = append(out, renderUser(u))
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		}),
		post("", adminOnly, func(w http.ResponseWriter, r *request) error {
			name := r.form.Get("username")
			if name == "" || len(name) > 150 || !validName(name) {
				return badField("username", "a username of letters, digits and @.+-_ is required")
			}
			admin, err := boolParam(r, "is_superuser")
			if err != nil {
				return err
			}
			if _, err := s.store.GetUser(r.Context(), name); err == nil {
				return &conflict{sprintf("user %q already exists", name)}
			}
			u, err := s.store.EnsureUser(r.Context(), name, admin)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, renderUser(u))
			return nil
		}),
	}
}

func validName(n string) bool {
	for _, c := range n {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '@' || c == '.' || c == '+' || c == '-' || c == '_'
		if !ok {
			return false
		}
	}
	return true
}
