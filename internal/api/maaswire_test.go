package api_test

import (
	"bytes"
	"encoding/base64"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The requests here are built byte for byte as the maas CLI and
// python-libmaas build them (their apiclient.multipart and maascli.api):
// every POST and PUT parameter is a multipart part of type text/plain
// with Content-Transfer-Encoding base64, the op in the query, the
// boundary quoted in the header, httplib2's headers, and oauthlib's
// PLAINTEXT header with the signature percent-encoded.

const cliBoundary = "===============1823174659316729452=="

// cliPart is one part as Python's email package writes it.
type cliPart struct {
	name, value string
	file        string // a filename: a file part (content@=FILE)
	headers     string // replaces the encoding headers when set
	raw         bool   // value is written as it is, not base64-encoded
}

// cliBody is the multipart body maascli sends for params; no params is
// python-libmaas's empty form (maascli sends no body then).
func cliBody(parts ...cliPart) []byte {
	var b bytes.Buffer
	if len(parts) == 0 {
		return []byte("--" + cliBoundary + "\r\n\r\n--" + cliBoundary + "--")
	}
	for _, p := range parts {
		b.WriteString("--" + cliBoundary + "\r\n")
		h := p.headers
		if h == "" {
			h = "Content-Transfer-Encoding: base64\r\n"
		}
		b.WriteString(h)
		if p.file != "" {
			b.WriteString(`Content-Disposition: form-data; name="` + p.name + `"; filename="` + p.file + "\"\r\n")
			b.WriteString("MIME-Version: 1.0\r\nContent-Type: application/octet-stream\r\n\r\n")
		} else {
			b.WriteString(`Content-Disposition: form-data; name="` + p.name + "\"\r\n")
			b.WriteString("MIME-Version: 1.0\r\nContent-Type: text/plain; charset=\"utf-8\"\r\n\r\n")
		}
		// A base64 payload ends in a line break of its own; the CRLF
		// before the next boundary belongs to the boundary.
		if p.raw {
			b.WriteString(p.value + "\r\n")
		} else {
			b.WriteString(pyBase64(p.value) + "\r\n\r\n")
		}
	}
	b.WriteString("--" + cliBoundary + "--")
	return b.Bytes()
}

// pyBase64 is Python's base64.encodebytes: lines of 76 characters, each
// ended (the CLI turns the line ends into CRLF).
func pyBase64(s string) string {
	enc := base64.StdEncoding.EncodeToString([]byte(s))
	var lines []string
	for len(enc) > 76 {
		lines = append(lines, enc[:76])
		enc = enc[76:]
	}
	lines = append(lines, enc)
	return strings.Join(lines, "\r\n")
}

// cliOAuth is oauthlib's PLAINTEXT header as maascli signs with it.
func cliOAuth(key string) string {
	p := strings.SplitN(key, ":", 3)
	return `OAuth oauth_nonce="169471262584837915511701409457", oauth_timestamp="1701409457", oauth_version="1.0", ` +
		`oauth_signature_method="PLAINTEXT", oauth_consumer_key="` + p[0] + `", oauth_token="` + p[1] +
		`", oauth_signature="%26` + p[2] + `"`
}

type wireAnswer struct {
	code   int
	header http.Header
	body   []byte
}

// cli sends one request as maascli does: a body (multipart) only for
// POST and PUT with parameters, everything else in the query.
func (e *env) cli(method, path, key string, body []byte) wireAnswer {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, e.base+"api/2.0/"+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", `multipart/form-data; boundary="`+cliBoundary+`"`)
		req.Header.Set("MIME-Version", "1.0")
	}
	req.Header.Set("User-Agent", "Python-httplib2/0.20.4 (gzip)")
	req.Header.Set("Accept-Encoding", "gzip, deflate")
	if key != "" {
		req.Header.Set("Authorization", cliOAuth(key))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return wireAnswer{resp.StatusCode, resp.Header, b}
}

func (e *env) mustCLI(want int, method, path, key string, body []byte) wireAnswer {
	e.t.Helper()
	a := e.cli(method, path, key, body)
	if a.code != want {
		e.t.Fatalf("%s %s: %d, want %d: %s", method, path, a.code, want, a.body)
	}
	if a.header.Get("Content-Type") == "" {
		e.t.Fatalf("%s %s: %d without a Content-Type (the maas CLI fails on that)", method, path, a.code)
	}
	return a
}

// TestMAASCLIWireFormat sends what `maas PROFILE machine update ID
// description=...`, `zone create`, `tag update-nodes` and `zone delete`
// send, and checks what is stored is what was typed.
func TestMAASCLIWireFormat(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		a := e.addMachine("node-a", "52:54:00:00:01:0a", nil)
		b := e.addMachine("node-b", "52:54:00:00:01:0b", nil)
		long := strings.Repeat("rack 4 slot 2, ", 10) + "ünïcode"
		e.mustCLI(200, "PUT", "machines/"+a.SystemID+"/", e.admin, cliBody(cliPart{name: "description", value: long}))
		var got struct{ Description string }
		e.must(200, "GET", "machines/"+a.SystemID+"/", e.admin, nil, &got)
		if got.Description != long {
			t.Fatalf("description stored as %q, want %q", got.Description, long)
		}

		e.mustCLI(200, "POST", "zones/", e.admin, cliBody(cliPart{name: "name", value: "rack4"}, cliPart{name: "description", value: "rack 4 slot 2"}))
		var z struct{ Name, Description string }
		e.must(200, "GET", "zones/rack4/", e.admin, nil, &z)
		if z.Name != "rack4" || z.Description != "rack 4 slot 2" {
			t.Fatalf("zone stored as %+v", z)
		}

		// Repeated keys: the CLI sends add=A add=B as two parts.
		e.must(200, "POST", "tags/", e.admin, url.Values{"name": {"fast"}}, nil)
		e.mustCLI(200, "POST", "tags/fast/?op=update_nodes", e.admin,
			cliBody(cliPart{name: "add", value: a.SystemID}, cliPart{name: "add", value: b.SystemID}))
		var tagged []apiMachine
		e.must(200, "GET", "tags/fast/?op=machines", e.admin, nil, &tagged)
		if len(tagged) != 2 {
			t.Fatalf("tag has %d machines, want 2", len(tagged))
		}

		// quoted-printable, which MIME allows as well.
		e.mustCLI(200, "PUT", "machines/"+b.SystemID+"/", e.admin, cliBody(cliPart{
			name: "description", value: "caf=C3=A9 =3D open", raw: true,
			headers: "Content-Transfer-Encoding: quoted-printable\r\n",
		}))
		e.must(200, "GET", "machines/"+b.SystemID+"/", e.admin, nil, &got)
		if got.Description != "café = open" {
			t.Fatalf("quoted-printable description stored as %q", got.Description)
		}

		// python-libmaas sends an empty multipart form on a POST without
		// parameters.
		e.mustCLI(200, "POST", "machines/"+b.SystemID+"/?op=mark_broken", e.admin, cliBody())

		// A delete answers 204 with a Content-Type (mustCLI checks it),
		// and every answer carries the description's hash.
		del := e.mustCLI(204, "DELETE", "zones/rack4/", e.admin, nil)
		desc := e.describe()
		if h := del.header.Get("X-MAAS-API-Hash"); h == "" || h != desc.Hash {
			t.Fatalf("X-MAAS-API-Hash %q, describe/ has %q", h, desc.Hash)
		}
	})
}

// TestJSONBody: MAAS (Piston) takes a JSON object as the parameters.
func TestJSONBody(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		post := func(path, body string) (int, string) {
			req, _ := http.NewRequest("POST", e.base+"api/2.0/"+path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", oauth(e.admin))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b)
		}
		if code, b := post("resourcepools/", `{"name": "gpu", "description": "from JSON", "drift_policy": "warn"}`); code != 200 {
			t.Fatalf("JSON create: %d %s", code, b)
		}
		var p struct{ Description string }
		e.must(200, "GET", "resourcepool/gpu/", e.admin, nil, &p)
		if p.Description != "from JSON" {
			t.Fatalf("pool description %q", p.Description)
		}
		for _, bad := range []string{`{"name": `, `["name"]`, `{"name": "a"} {"x": 1}`, `{"name": [["a"]]}`} {
			if code, b := post("zones/", bad); code != 400 || !strings.Contains(b, "body") && !strings.Contains(b, "name") {
				t.Errorf("JSON body %s: %d %s, want 400 in words", bad, code, b)
			}
		}
		var zs []any
		e.must(200, "GET", "zones/", e.admin, nil, &zs)
		if len(zs) != 1 {
			t.Fatalf("%d zones after refused JSON bodies, want only the default", len(zs))
		}
	})
}

// TestBadMultipart sends parts no decoder can read in full: each is a 400
// naming the part and what is wrong with it, and nothing is changed.
func TestBadMultipart(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		m := e.addMachine("node-a", "52:54:00:00:02:0a", url.Values{"description": {"before"}})
		cases := []struct {
			name string
			part cliPart
			says string
		}{
			{"malformed base64", cliPart{name: "description", value: "cmFjayA0!!!IHNsb3QgMg==", raw: true}, "base64"},
			{"truncated base64", cliPart{name: "description", value: "cmFjayA0IHNsb3QgM", raw: true}, "base64"},
			{"unknown encoding", cliPart{name: "description", value: "x", raw: true, headers: "Content-Transfer-Encoding: x-uuencode\r\n"}, "x-uuencode"},
			{"two encodings", cliPart{name: "description", value: "eA==", raw: true,
				headers: "Content-Transfer-Encoding: base64\r\nContent-Transfer-Encoding: quoted-printable\r\n"}, "two transfer encodings"},
			{"not UTF-8", cliPart{name: "description", value: base64.StdEncoding.EncodeToString([]byte{0xff, 0xfe, 'x'}), raw: true}, "UTF-8"},
		}
		for _, c := range cases {
			// The broken part comes after a good one: the good one must
			// not be applied either.
			body := cliBody(cliPart{name: "hostname", value: "renamed"}, c.part)
			a := e.cli("PUT", "machines/"+m.SystemID+"/", e.admin, body)
			if a.code != 400 || !strings.Contains(string(a.body), c.says) || !strings.Contains(string(a.body), "description") {
				t.Errorf("%s: %d %s, want 400 naming description and %q", c.name, a.code, a.body, c.says)
			}
			if got := e.machine(m.SystemID); got.Hostname != "node-a" {
				t.Fatalf("%s: hostname changed to %q by a refused request", c.name, got.Hostname)
			}
			a = e.cli("POST", "zones/", e.admin, cliBody(cliPart{name: "name", value: "z-" + strings.ReplaceAll(c.name, " ", "-")}, c.part))
			if a.code != 400 {
				t.Errorf("%s: zone create %d %s, want 400", c.name, a.code, a.body)
			}
		}
		var desc struct{ Description string }
		e.must(200, "GET", "machines/"+m.SystemID+"/", e.admin, nil, &desc)
		if desc.Description != "before" {
			t.Fatalf("description %q after refused requests", desc.Description)
		}
		var zs []any
		e.must(200, "GET", "zones/", e.admin, nil, &zs)
		if len(zs) != 1 {
			t.Fatalf("%d zones after refused requests, want only the default", len(zs))
		}
	})
}

// TestExactRouting: paths below a resource are other endpoints, which
// Anvil does not have.
func TestExactRouting(t *testing.T) {
	e := start(t, "")
	m := e.addMachine("node-a", "52:54:00:00:03:0a", nil)
	for _, p := range []string{
		"machines/" + m.SystemID + "/blockdevices/",
		"machines/" + m.SystemID + "/interfaces/7/",
		"zones/default/machines/",
		"nodes/" + m.SystemID + "/results/1/output/",
		"describe/extra/",
		"nosuch/",
	} {
		a := e.cli("GET", p, e.admin, nil)
		want := "Unknown API endpoint: /MAAS/api/2.0/" + p + "."
		if a.code != 404 || strings.TrimSpace(string(a.body)) != want {
			t.Errorf("GET %s: %d %q, want 404 %q", p, a.code, a.body, want)
		}
	}
	a := e.cli("GET", "users/nosuchuser/", e.admin, nil)
	if a.code != 404 || !strings.Contains(string(a.body), "No User matches the given query") {
		t.Errorf("users/nosuchuser/: %d %s", a.code, a.body)
	}
}

// TestUserHandler reads and deletes users as MAAS's UserHandler does.
func TestUserHandler(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		var u struct {
			Username    string `json:"username"`
			IsSuperuser bool   `json:"is_superuser"`
			ResourceURI string `json:"resource_uri"`
		}
		e.must(200, "GET", "users/alice/", e.admin, nil, &u)
		if u.Username != "alice" || u.IsSuperuser || u.ResourceURI != "/MAAS/api/2.0/users/alice/" {
			t.Fatalf("users/alice/: %+v", u)
		}
		e.must(200, "GET", "users/alice/", e.user, nil, nil)
		e.must(404, "GET", "users/admin/", e.user, nil, nil)
		e.must(403, "DELETE", "users/admin/", e.user, nil, nil)

		a := e.cli("DELETE", "users/admin/", e.admin, nil)
		if a.code != 400 || strings.TrimSpace(string(a.body)) != "An administrator cannot self-delete." {
			t.Fatalf("self-delete: %d %s", a.code, a.body)
		}

		m := e.addMachine("node-a", "52:54:00:00:04:0a", nil)
		e.ready(m.SystemID)
		e.must(200, "POST", "machines/?op=allocate", e.user, url.Values{"system_id": {m.SystemID}}, nil)
		a = e.cli("DELETE", "users/alice/", e.admin, nil)
		if want := "User alice cannot be deleted: 1 node(s) are still allocated"; a.code != 400 || strings.TrimSpace(string(a.body)) != want {
			t.Fatalf("delete an owner: %d %q, want 400 %q", a.code, a.body, want)
		}
		a = e.cli("DELETE", "users/alice/?transfer_resources_to=nobody", e.admin, nil)
		if a.code != 404 {
			t.Fatalf("transfer to no such user: %d %s", a.code, a.body)
		}
		e.must(200, "GET", "users/?op=whoami", e.user, nil, nil) // still there, key still works

		e.mustCLI(204, "DELETE", "users/alice/?transfer_resources_to=admin", e.admin, nil)
		if got := e.machine(m.SystemID); got.Owner == nil || *got.Owner != "admin" {
			t.Fatalf("machine owner after transfer: %v", got.Owner)
		}
		if code, _ := e.call("GET", "users/?op=whoami", e.user, nil); code != 401 {
			t.Fatalf("deleted user's key: %d, want 401", code)
		}
		e.must(404, "GET", "users/alice/", e.admin, nil, nil)
		// Deleting no such user is done already, as in MAAS.
		e.mustCLI(204, "DELETE", "users/alice/", e.admin, nil)

		// The store keeps the last administrator whoever asks.
		e.mustCLI(204, "DELETE", "machines/"+m.SystemID+"/", e.admin, nil)
		us, err := e.srv.Store.ListUsers(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var admins []string
		for _, u := range us {
			if u.Admin {
				admins = append(admins, u.Name)
			}
		}
		for _, n := range admins[1:] {
			if err := e.srv.Store.DeleteUser(t.Context(), n); err != nil {
				t.Fatalf("delete admin %s: %v", n, err)
			}
		}
		if err := e.srv.Store.DeleteUser(t.Context(), admins[0]); err == nil || !strings.Contains(err.Error(), "last administrator") {
			t.Fatalf("deleting the last administrator: %v", err)
		}
	})
}

// TestNodes: nodes/ is MAAS's collection of every node type.
func TestNodes(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		m := e.addMachine("node-a", "52:54:00:00:05:0a", nil)
		var ns []apiMachine
		e.must(200, "GET", "nodes/", e.admin, url.Values{"hostname": {"node-a"}}, &ns)
		if len(ns) != 1 || ns[0].SystemID != m.SystemID {
			t.Fatalf("nodes/: %+v", ns)
		}
		e.must(200, "GET", "nodes/"+m.SystemID+"/", e.admin, nil, nil)
		e.must(200, "GET", "nodes/"+m.SystemID+"/?op=details", e.admin, nil, nil)
		e.must(403, "GET", "nodes/"+m.SystemID+"/?op=power_parameters", e.user, nil, nil)
		var reg bool
		e.must(200, "GET", "nodes/?op=is_registered", "", url.Values{"mac_address": {"52:54:00:00:05:0a"}}, &reg)
		if !reg {
			t.Fatal("is_registered: false for a known MAC")
		}
		// MAAS's NodeHandler has no POST: lifecycle actions are on machines/.
		if code, b := e.call("POST", "nodes/"+m.SystemID+"/?op=commission", e.admin, nil); code != 405 {
			t.Fatalf("commission on nodes/: %d %s", code, b)
		}
		e.must(403, "DELETE", "nodes/"+m.SystemID+"/", e.user, nil, nil)
		e.mustCLI(204, "DELETE", "nodes/"+m.SystemID+"/", e.admin, nil)
		e.must(404, "GET", "machines/"+m.SystemID+"/", e.admin, nil, nil)
	})
}

// TestBootResourceCLIUpload: `maas PROFILE boot-resources create ...
// content@=FILE` first posts the fields (base64 parts, sorted, with the
// content's sha256 and size), then PUTs the bytes in chunks; other
// clients send the content as a base64 file part in the one request.
func TestBootResourceCLIUpload(t *testing.T) {
	eachImagesDB(t, func(t *testing.T, e *env) {
		data, sum := image(10_000)
		fields := func(name string) []cliPart {
			return []cliPart{{name: "architecture", value: "amd64/generic"}, {name: "filetype", value: "ddraw"},
				{name: "name", value: name}, {name: "sha256", value: sum}, {name: "size", value: "10000"}}
		}
		a := e.mustCLI(201, "POST", "boot-resources/", e.admin, cliBody(fields("custom/chunked")...))
		var r apiBootResource
		decode(t, a.body, &r)
		f := r.only(t)
		if r.Name != "chunked" || f.Complete || f.UploadURI == "" {
			t.Fatalf("created %+v", r)
		}
		if code, b := e.chunk(f.UploadURI, data, "application/octet-stream"); code != 200 {
			t.Fatalf("chunk: %d %s", code, b)
		}
		if !e.showFile(r.ID).Complete {
			t.Fatal("file not complete after its bytes")
		}

		one := append(fields("custom/one"), cliPart{name: "content", file: "content", value: string(data)})
		a = e.mustCLI(201, "POST", "boot-resources/", e.admin, cliBody(one...))
		decode(t, a.body, &r)
		if f := r.only(t); !f.Complete || f.SHA256 != sum {
			t.Fatalf("one-request upload: %+v", r)
		}

		bad := append(fields("custom/bad"), cliPart{name: "content", file: "content", raw: true, value: "AAAA!!!!" + pyBase64(string(data))})
		a = e.cli("POST", "boot-resources/", e.admin, cliBody(bad...))
		if a.code != 400 || !strings.Contains(string(a.body), "content") || !strings.Contains(string(a.body), "base64") {
			t.Fatalf("malformed base64 content: %d %s", a.code, a.body)
		}
		var list []apiBootResource
		e.must(200, "GET", "boot-resources/", e.admin, nil, &list)
		if len(list) != 2 {
			t.Fatalf("%d boot resources after a refused upload, want 2", len(list))
		}
	})
}
