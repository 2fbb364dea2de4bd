package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/anvilmetal/anvil/internal/store"
)

// MAAS's account/: the calling user's authorisation tokens, which are
// Anvil's API keys ("consumer:token:secret"), each with a name.

func init() {
	addDocs(map[string]string{
		"AccountHandler": "The logged-in user's API keys (OAuth authorisation tokens).",
		"AccountHandler create_authorisation_token": doc("Create an API key for the calling user.",
			"Answers token_key, token_secret, consumer_key and name; the key is consumer_key:token_key:token_secret.",
			opt("name", "string", "A name for the key (default: MAAS consumer).")),
		"AccountHandler delete_authorisation_token": doc("Delete one of the calling user's API keys.",
			"Requests signed with it are refused from then on, this one's successors included.",
			req("token_key", "string", "The key's token_key (its middle part).")),
		"AccountHandler update_token_name": doc("Rename one of the calling user's API keys.", "",
			req("token", "string", "The whole key, or its token_key."),
			req("name", "string", "The new name.")),
		"AccountHandler list_authorisation_tokens": doc("List the calling user's API keys with their names."),
	})
}

func (s *Server) accountRoutes() []route {
	return []route{
		post("create_authorisation_token", authenticated, s.createToken),
		post("delete_authorisation_token", authenticated, s.deleteToken),
		post("update_token_name", authenticated, s.renameToken),
		get("list_authorisation_tokens", authenticated, s.listTokens),
	}
}

func (s *Server) createToken(w http.ResponseWriter, r *request) error {
	name := store.DefaultTokenName
	if v, ok := r.form["name"]; ok {
		if err := checkTokenName(v[0]); err != nil {
			return err
		}
		name = v[0]
	}
	t, err := s.store.CreateNamedToken(r.Context(), r.who.user.Name, name)
	if err != nil {
		return err
	}
	s.log.Info("api key created", "user", r.who.user.Name, "name", name)
	writeJSONType(w, http.StatusOK, jsonUTF8, map[string]string{
		"token_key": t.TokenKey, "token_secret": t.Secret, "consumer_key": t.ConsumerKey, "name": t.Name,
	})
	return nil
}

func (s *Server) deleteToken(w http.ResponseWriter, r *request) error {
	key, err := mandatory(r, "token_key")
	if err != nil {
		return err
	}
	if err := s.store.DeleteToken(r.Context(), r.who.user.Name, key); errors.Is(err, store.ErrNotFound) {
		return noSuch("Token")
	} else if err != nil {
		return err
	}
	s.log.Info("api key deleted", "user", r.who.user.Name)
	writeNoContent(w)
	return nil
}

func (s *Server) renameToken(w http.ResponseWriter, r *request) error {
	tok, err := mandatory(r, "token")
	if err != nil {
		return err
	}
	// The whole key or its token key, as MAAS takes it.
	if parts := strings.Split(tok, ":"); len(parts) == 3 {
		tok = parts[1]
	}
	name, err := mandatory(r, "name")
	if err != nil {
		return err
	}
	if err := checkTokenName(name); err != nil {
		return err
	}
	if err := s.store.RenameToken(r.Context(), r.who.user.Name, tok, name); errors.Is(err, store.ErrNotFound) {
		return noSuch("Token")
	} else if err != nil {
		return err
	}
	// Piston's rc.ACCEPTED.
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusAccepted)
	_, _ = w.Write([]byte("Accepted"))
	return nil
}

func (s *Server) listTokens(w http.ResponseWriter, r *request) error {
	ts, err := s.store.ListTokens(r.Context(), r.who.user.Name)
	if err != nil {
		return err
	}
	type tokenJSON struct {
		Name  string `json:"name"`
		Token string `json:"token"`
	}
	out := make([]tokenJSON, len(ts))
	for i, t := range ts {
		out[i] = tokenJSON{Name: t.Name, Token: t.APIKey()}
	}
	b, err := json.MarshalIndent(out, "", "    ")
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", jsonUTF8)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
	return nil
}

// checkTokenName keeps names to what MAAS's consumer name holds: at most
// 255 characters, on one line.
func checkTokenName(n string) error {
	if !utf8.ValidString(n) || utf8.RuneCountInString(n) > 255 || strings.IndexFunc(n, unicode.IsControl) >= 0 {
		return badField("name", "Ensure this value has at most 255 characters, on one line.")
	}
	return nil
}

// mandatory is MAAS's get_mandatory_param: a missing parameter is a 400 in
// its words.
func mandatory(r *request, name string) (string, error) {
	v, ok := r.form[name]
	if !ok || len(v) == 0 {
		return "", &badRequest{"No provided " + name + "!"}
	}
	return v[0], nil
}

// badRequest is a 400 with MAAS's plain-text message (a validation error
// with one message and no field).
type badRequest struct{ msg string }

func (e *badRequest) Error() string { return e.msg }
