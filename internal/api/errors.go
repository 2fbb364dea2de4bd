package api

import (
	"encoding/json"
	"errors"
	"github.com/anvilmetal/anvil/internal/session"
	"net/http"

	"github.com/anvilmetal/anvil/internal/fielderr"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/powerroute"
	"github.com/anvilmetal/anvil/internal/region"
	"github.com/anvilmetal/anvil/internal/storage"
	"github.com/anvilmetal/anvil/internal/store"
)

// fieldError is a bad request parameter. It is answered as MAAS answers
// form errors: 400 with {"field": ["message"]}.
type fieldError struct {
	field string
	msg   string
}

func (e *fieldError) Error() string { return e.field + ": " + e.msg }

func badField(field, format string, args ...any) error {
	return &fieldError{field: field, msg: sprintf(format, args...)}
}

// notFoundError is MAAS's 404 for an object that does not exist (or that
// the caller may not see): Django's get_object_or_404 text, naming the
// model, which clients match on.
type notFoundError struct{ model string }

func (e *notFoundError) Error() string { return "No " + e.model + " matches the given query." }
func (e *notFoundError) Unwrap() error { return store.ErrNotFound }

func noSuch(model string) error { return &notFoundError{model: model} }

// namedNotFound gives a not-found error that names no model the model of
// the resource whose path was asked for: the object the path names is what
// was not found, as in MAAS's handlers. Lookups of other objects name
// theirs with noSuch.
func namedNotFound(err error, model string) error {
	var nf *notFoundError
	if model == "" || !errors.Is(err, store.ErrNotFound) || errors.As(err, &nf) {
		return err
	}
	return noSuch(model)
}

// writeError maps an error to MAAS's status codes. Unexpected errors are
// logged and answered without detail, since they may carry internals.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var (
		fe  *fieldError
		ve  *region.ValidationError
		ua  errUnauthorized
		te  *machine.TransitionError
		ce  *store.ConflictError
		mbe *http.MaxBytesError
		cf  *conflict
		mv  *machine.Violation
		mi  *machine.InputError
		nf  *notFoundError
		br  *badRequest
		fes fielderr.Errors
		sbr *storage.BadRequest
		lr  *region.LayoutRefused
		sr  *region.StorageRefused
		se  *statusError
		nr  *powerroute.NoRackError
	)
	switch {
	case errors.As(err, &nf):
		// MAAS sends the bare text, as text/plain, without a line end.
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(nf.Error()))
	case errors.As(err, &br):
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(br.msg))
	case errors.As(err, &fes):
		writeJSONType(w, http.StatusBadRequest, jsonUTF8, fes)
	case errors.As(err, &sr):
		writeJSONType(w, http.StatusBadRequest, jsonUTF8, map[string][]string{"storage": sr.Issues})
	case errors.As(err, &sbr), errors.As(err, &lr):
		writeText(w, http.StatusBadRequest, err.Error())
	case errors.As(err, &fe):
		writeJSONType(w, http.StatusBadRequest, jsonUTF8, map[string][]string{fe.field: {fe.msg}})
	case errors.As(err, &nr): // MAAS's PowerProblem
		writeText(w, http.StatusServiceUnavailable, err.Error())
	case errors.As(err, &se):
		writeText(w, se.code, se.msg)
	case errors.As(err, &fes):
		writeJSONType(w, http.StatusBadRequest, jsonUTF8, fes)
	case errors.As(err, &mi):
		writeJSONType(w, http.StatusBadRequest, jsonUTF8, map[string][]string{mi.Field: {mi.Msg}})
	case errors.As(err, &mv):
		writeText(w, http.StatusConflict, mv.Msg)
	case errors.As(err, &ve):
		writeJSONType(w, http.StatusBadRequest, jsonUTF8, map[string][]string{ve.Field: {ve.Err.Error()}})
	case errors.As(err, &ua):
		w.Header().Set("WWW-Authenticate", `OAuth realm="OAuth"`)
		writeText(w, http.StatusUnauthorized, ua.Error())
	case errors.As(err, &mbe):
		writeText(w, http.StatusRequestEntityTooLarge, sprintf("request body is larger than %d bytes", mbe.Limit))
	case errors.Is(err, machine.ErrForbidden), errors.Is(err, session.ErrCSRF):
		writeText(w, http.StatusForbidden, err.Error())
	case errors.Is(err, store.ErrNotFound):
		writeText(w, http.StatusNotFound, err.Error())
	case errors.As(err, &te), errors.As(err, &cf):
		writeText(w, http.StatusConflict, err.Error())
	case errors.As(err, &ce) && ce.Holder != "":
		// Which machine holds a BMC or MAC is for administrators: to
		// others it would confirm machines they cannot see.
		if p := principalFrom(r.Context()); p.user != nil && p.user.Admin {
			writeText(w, http.StatusConflict, err.Error())
		} else {
			writeText(w, http.StatusConflict, ce.What+" is already in use by another machine")
		}
	case errors.As(err, &ce), errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrInUse), errors.Is(err, region.ErrNoMatch),
		errors.Is(err, region.ErrNothingHeld):
		writeText(w, http.StatusConflict, err.Error())
	default:
		s.log.Error("api request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		writeText(w, http.StatusInternalServerError, "internal error; the server log has the details")
	}
}

// statusError is an answer in MAAS's words with MAAS's status, where
// MAAS's is not the one Anvil's errors map to (an address already taken
// is MAAS's 404, an exhausted subnet its 503).
type statusError struct {
	code int
	msg  string
}

func (e *statusError) Error() string { return e.msg }

func writeText(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(msg + "\n"))
}

// jsonUTF8 is the Content-Type of MAAS's JSON error bodies.
const jsonUTF8 = "application/json; charset=utf-8"

func writeJSON(w http.ResponseWriter, code int, v any) { writeJSONType(w, code, "application/json", v) }

// writeNoContent answers 204 with a Content-Type, as MAAS does: the maas
// CLI reads the header of every answer and fails without one.
func writeNoContent(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusNoContent)
}

func writeJSONType(w http.ResponseWriter, code int, ct string, v any) {
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
