package redfishbmc

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
)

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("OData-Version", "4.0")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// writeError answers with a Redfish error body, which clients such as
// gofish parse for the message they show.
func writeError(w http.ResponseWriter, status int, messageID, message string) {
	writeJSON(w, status, obj{"error": obj{
		"code":    "Base.1.8.GeneralError",
		"message": message,
		"@Message.ExtendedInfo": []obj{{
			"@odata.type": "#Message.v1_1_1.Message",
			"MessageId":   messageID, "Message": message, "Severity": "Critical",
		}},
	}})
}

func notFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, http.StatusNotFound, "Base.1.8.ResourceMissingAtURI", fmt.Sprintf("the resource at %s was not found", r.URL.Path))
}

func methodNotAllowed(w http.ResponseWriter, allowed string) {
	w.Header().Set("Allow", allowed)
	writeError(w, http.StatusMethodNotAllowed, "Base.1.8.OperationNotAllowed", "the method is not allowed; allowed: "+allowed)
}

func newToken() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}
