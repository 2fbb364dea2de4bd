package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/password"
	"github.com/anvilmetal/anvil/internal/store"
)

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
		post("", adminOnly, s.createUser),
	}
}

// createUser is MAAS's users create: username, email, password and
// is_superuser are all required (MAAS's "No provided NAME!" otherwise);
// an administrator may be given an SSH key too.
func (s *Server) createUser(w http.ResponseWriter, r *request) error {
	for _, p := range []string{"username", "email", "password", "is_superuser"} {
		if !r.form.Has(p) {
			writeText(w, http.StatusBadRequest, "No provided "+p+"!")
			return nil
		}
	}
	name, email := r.form.Get("username"), r.form.Get("email")
	if name == "" || len(name) > 150 || !validName(name) {
		return badField("username", "a username of letters, digits and @.+-_ is required; at most 150")
	}
	if err := validEmail(email); err != nil {
		return badField("email", "%v", err)
	}
	hash, err := password.Hash(r.form.Get("password"))
	if err != nil {
		return badField("password", "%v", err)
	}
	admin, err := boolParam(r, "is_superuser")
	if err != nil {
		return err
	}
	var key string
	if v := r.form.Get("key"); v != "" && admin {
		if key, err = parseSSHKey(v); err != nil {
			return err
		}
	}
	u, err := s.store.CreateUser(r.Context(), store.User{Name: name, Email: email, Admin: admin}, hash)
	if err != nil {
		return err
	}
	if key != "" {
		if _, err := s.store.AddSSHKey(r.Context(), u.Name, key); err != nil {
			return fmt.Errorf("user %s was created but its SSH key was not added: %w", u.Name, err)
		}
	}
	s.log.Info("user created", "user", u.Name, "admin", u.Admin, "by", r.who.user.Name)
	writeJSON(w, http.StatusOK, renderUser(u))
	return nil
}

// validEmail bounds what an address may be; MAAS takes any text, so
// Anvil asks only for one address of sane length.
func validEmail(e string) error {
	if len(e) > 254 {
		return fmt.Errorf("an email address is at most 254 characters")
	}
	for _, c := range e {
		if c < ' ' || c == 0x7f {
			return fmt.Errorf("an email address has no control characters")
		}
	}
	return nil
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

// errNoUser is MAAS's answer for a user that does not exist (or that the
// caller may not see).
var errNoUser = fmt.Errorf("No User matches the given query: %w", store.ErrNotFound)

// oneUserRoutes serve users/{username}/. MAAS lets anyone read any user;
// Anvil shows others only to administrators, as its users/ list.
func (s *Server) oneUserRoutes() []route {
	return []route{
		get("", authenticated, func(w http.ResponseWriter, r *request) error {
			if !r.who.user.Admin && r.id != r.who.user.Name {
				return errNoUser
			}
			u, err := s.store.GetUser(r.Context(), r.id)
			if errors.Is(err, store.ErrNotFound) {
				return errNoUser
			}
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, renderUser(u))
			return nil
		}),
		del(adminOnly, s.deleteUser),
	}
}

// deleteUser follows MAAS's UserHandler.delete: never oneself, machines
// move to transfer_resources_to when given, and a user who still owns
// machines (or the last administrator) stays, with a 400 saying why.
func (s *Server) deleteUser(w http.ResponseWriter, r *request) error {
	ctx := r.Context()
	if r.id == r.who.user.Name {
		writeText(w, http.StatusBadRequest, "An administrator cannot self-delete.")
		return nil
	}
	to := r.form.Get("transfer_resources_to")
	if to != "" {
		if _, err := s.store.GetUser(ctx, to); errors.Is(err, store.ErrNotFound) {
			return errNoUser
		} else if err != nil {
			return err
		}
	}
	if _, err := s.store.GetUser(ctx, r.id); errors.Is(err, store.ErrNotFound) {
		// MAAS answers a delete of no such user as done.
		writeNoContent(w)
		return nil
	} else if err != nil {
		return err
	}
	if to != "" && to != r.id {
		if err := s.transferMachines(ctx, r.who.user.Name, r.id, to); err != nil {
			return err
		}
	}
	err := s.store.DeleteUser(ctx, r.id)
	if errors.Is(err, store.ErrInUse) {
		writeText(w, http.StatusBadRequest, trimErr(err, store.ErrInUse))
		return nil
	}
	if err != nil {
		return err
	}
	s.log.Info("user deleted", "user", r.id, "by", r.who.user.Name, "machines_to", to)
	s.svc.Hub.Notify()
	writeNoContent(w)
	return nil
}

// transferMachines gives every machine that from owns to the user to, each
// with an event on its timeline.
func (s *Server) transferMachines(ctx context.Context, by, from, to string) error {
	ms, err := s.store.ListMachines(ctx, store.MachineFilter{Owners: []string{from}})
	if err != nil {
		return err
	}
	for _, m := range ms {
		_, err := s.store.UpdateMachine(ctx, m.SystemID, func(m *machine.Machine) ([]machine.Event, error) {
			if m.Owner != from {
				return nil, nil
			}
			m.Owner = to
			return []machine.Event{{
				SystemID: m.SystemID, Hostname: m.Hostname, Type: "Owner changed", Level: machine.LevelInfo,
				User: by, Created: s.svc.Now(), Description: fmt.Sprintf("Machine passed from %s to %s as %s deleted the account %s", from, to, by, from),
			}}, nil
		})
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("transfer %s to %s: %w", m.SystemID, to, err)
		}
	}
	return nil
}

// trimErr drops a sentinel's text from the end of an error's message.
func trimErr(err, sentinel error) string {
	msg := err.Error()
	if n := len(msg) - len(sentinel.Error()) - 2; n > 0 && msg[n:] == ": "+sentinel.Error() {
		return msg[:n]
	}
	return msg
}
