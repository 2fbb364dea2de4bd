package api_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
)

// JSON kinds of a field, with MAAS's null rule: "string?" may be null,
// "null" must be (MAAS's value for what Anvil has no model of yet).
const (
	str     = "string"
	strNull = "string?"
	integer = "int"
	intNull = "int?"
	number  = "number"
	boolean = "bool"
	object  = "object"
	objNull = "object?"
	array   = "array"
	arrNull = "array?"
	null    = "null"
)

// schema is an object's fields as MAAS's handler lists them, each with its
// JSON kind.
type schema map[string]string

// kindOf names the JSON kind of a value decoded with UseNumber.
func kindOf(v any) string {
	switch x := v.(type) {
	case nil:
		return null
	case string:
		return str
	case bool:
		return boolean
	case json.Number:
		if strings.ContainsAny(x.String(), ".eE") {
			return number
		}
		return integer
	case map[string]any:
		return object
	case []any:
		return array
	}
	return "?"
}

// fits reports whether a value of kind got satisfies want.
func fits(got, want string) bool {
	switch want {
	case strNull:
		return got == str || got == null
	case intNull:
		return got == integer || got == null
	case objNull:
		return got == object || got == null
	case arrNull:
		return got == array || got == null
	case number:
		return got == number || got == integer
	}
	return got == want
}

// checkFields fails for every field of s that obj lacks, or whose kind or
// null rule is wrong. what names the object in messages.
func checkFields(t *testing.T, what string, obj map[string]any, s schema) {
	t.Helper()
	names := make([]string, 0, len(s))
	for f := range s {
		names = append(names, f)
	}
	sort.Strings(names)
	for _, f := range names {
		v, ok := obj[f]
		if !ok {
			t.Errorf("%s: field %q missing", what, f)
			continue
		}
		if got := kindOf(v); !fits(got, s[f]) {
			t.Errorf("%s: field %q is %s (%v), MAAS gives %s", what, f, got, v, s[f])
		}
	}
}

// decodeObject decodes one JSON object keeping numbers exact.
func decodeObject(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return m
}

func decodeList(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var l []map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&l); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return l
}

// answer sends a request and returns the body of the answer, failing unless
// the status is want.
func (e *env) answer(want int, method, path, key string, form url.Values) []byte {
	e.t.Helper()
	code, b := e.call(method, path, key, form)
	if code != want {
		e.t.Fatalf("%s %s: status %d, want %d: %s", method, path, code, want, b)
	}
	return b
}

func sub(t *testing.T, obj map[string]any, f string) map[string]any {
	t.Helper()
	m, ok := obj[f].(map[string]any)
	if !ok {
		t.Fatalf("%s is %v, not an object", f, obj[f])
	}
	return m
}

func items(t *testing.T, obj map[string]any, f string) []map[string]any {
	t.Helper()
	l, ok := obj[f].([]any)
	if !ok {
		t.Fatalf("%s is %v, not a list", f, obj[f])
	}
	out := make([]map[string]any, len(l))
	for i, v := range l {
		if out[i], ok = v.(map[string]any); !ok {
			t.Fatalf("%s[%d] is %v, not an object", f, i, v)
		}
	}
	return out
}

func TestSchemaKinds(t *testing.T) {
	for _, c := range []struct {
		json, want string
		ok         bool
	}{
		{`1`, integer, true}, {`1.5`, integer, false}, {`1.5`, number, true}, {`2`, number, true},
		{`null`, intNull, true}, {`null`, integer, false}, {`"x"`, strNull, true}, {`null`, str, false},
		{`{}`, objNull, true}, {`[]`, array, true}, {`[]`, object, false}, {`"1"`, integer, false},
	} {
		var v any
		d := json.NewDecoder(strings.NewReader(c.json))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			t.Fatal(err)
		}
		if got := fits(kindOf(v), c.want); got != c.ok {
			t.Errorf("%s as %s: %v, want %v", c.json, c.want, got, c.ok)
		}
	}
}

// userSchema is MAAS's user (UserHandler.fields and resource_uri).
var userSchema = schema{"username": str, "email": str, "is_superuser": boolean, "is_local": boolean, "resource_uri": str}

func TestUserFields(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		who := decodeObject(t, e.answer(http.StatusOK, "GET", "users/", e.user, url.Values{"op": {"whoami"}}))
		checkFields(t, "whoami", who, userSchema)
		if who["username"] != "alice" || who["is_superuser"] != false || who["is_local"] != true ||
			who["resource_uri"] != "/MAAS/api/2.0/users/alice/" {
			t.Errorf("whoami: %v", who)
		}
		made := decodeObject(t, e.answer(http.StatusOK, "POST", "users/", e.admin, url.Values{"username": {"bob"}, "email": {"bob@example.com"}, "password": {"correct horse"}, "is_superuser": {"0"}}))
		checkFields(t, "created user", made, userSchema)
		us := decodeList(t, e.answer(http.StatusOK, "GET", "users/", e.admin, nil))
		if len(us) < 3 {
			t.Fatalf("users: %v", us)
		}
		for _, u := range us {
			checkFields(t, "user "+u["username"].(string), u, userSchema)
		}
	})
}
