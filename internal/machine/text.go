package machine

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"
)

// Text from outside (API parameters, what an environment reports) ends
// up in the store's text columns, and PostgreSQL's text refuses invalid
// UTF-8 and NUL where SQLite keeps them: refused where it arrives, such
// text is a 400 naming the field on both databases instead of a failed
// write. Binary data (files, script output) travels as files or base64
// and is stored as bytes; it is not text and is not checked here.

// Why a string is not text.
var (
	ErrInvalidUTF8 = errors.New("is not valid UTF-8 text")
	ErrNUL         = errors.New("contains a NUL character")
)

// CheckText refuses a string that is not text a database can keep.
func CheckText(s string) error {
	if !utf8.ValidString(s) {
		return ErrInvalidUTF8
	}
	if strings.IndexByte(s, 0) >= 0 {
		return ErrNUL
	}
	return nil
}

// CheckJSONText refuses a JSON document whose bytes are not UTF-8 (the
// decoder would silently replace them) or any of whose strings, keys
// included, holds a NUL (written \u0000). It names the member that
// holds it, as a dotted path; a document that does not parse is left to
// its decoder to refuse.
func CheckJSONText(raw []byte) (path string, err error) {
	if !utf8.Valid(raw) {
		return "", ErrInvalidUTF8
	}
	if !bytes.Contains(raw, []byte(`\u0000`)) {
		return "", nil // the common case: no escaped NUL anywhere
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return "", nil
	}
	if p, bad := nulIn(v, ""); bad {
		return p, ErrNUL
	}
	return "", nil
}

// nulIn finds a string holding a NUL in a decoded JSON value.
func nulIn(v any, path string) (string, bool) {
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	switch t := v.(type) {
	case string:
		return path, strings.IndexByte(t, 0) >= 0
	case map[string]any:
		for k, e := range t {
			if strings.IndexByte(k, 0) >= 0 {
				return join("(a key)"), true
			}
			if p, bad := nulIn(e, join(k)); bad {
				return p, true
			}
		}
	case []any:
		for _, e := range t {
			if p, bad := nulIn(e, path); bad {
				return p, true
			}
		}
	}
	return "", false
}
