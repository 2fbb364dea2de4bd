package api

import (
	"errors"
	"net/http"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

// MAAS's operations on one machine that are not lifecycle actions.

// restore serves MAAS's restore_*_configuration with MAAS's checks. The
// storage configuration goes back to the default layout over the disks
// commissioning found; Anvil has no editable network configuration yet
// (a machine's interfaces are the ones enlistment and commissioning
// found), so that part resets nothing.
func (s *Server) restore(what machine.Restore) handlerFunc {
	return func(w http.ResponseWriter, r *request) error {
		if what == machine.RestoreStorage || what == machine.RestoreDefault {
			m, err := s.svc.RestoreStorage(r.Context(), r.who.actor(), r.id, what)
			if err != nil {
				return err
			}
			return s.writeMachine(w, r, http.StatusOK, &m)
		}
		m, err := s.visibleMachine(r)
		if err != nil {
			return err
		}
		if err := machine.CheckRestore(r.who.actor(), &m, what); err != nil {
			return err
		}
		return s.writeMachine(w, r, http.StatusOK, &m)
	}
}

// getToken is MAAS's get_token: the machine's metadata token, or null
// when it has none. Anvil keeps a token's secret only as a hash, so
// token_secret is null: the keys say which token the machine holds, and
// a token that could be read back would let anyone with this answer act
// as the machine.
func (s *Server) getToken(w http.ResponseWriter, r *request) error {
	if _, err := s.store.GetMachine(r.Context(), r.id); err != nil {
		return err
	}
	t, st, err := s.store.MachineToken(r.Context(), r.id)
	if errors.Is(err, store.ErrNotFound) {
		writeJSON(w, http.StatusOK, nil)
		return nil
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"token_key": t.TokenKey, "consumer_key": t.ConsumerKey, "token_secret": nil,
		"issued_for": st.String(), "created": t.Created.UTC().Format(time.RFC3339),
	})
	return nil
}
