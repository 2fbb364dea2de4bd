package api

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/anvilmetal/anvil/internal/machine"
)

// Request bodies are read as Django reads them for MAAS: urlencoded
// forms, multipart forms whose parts may carry a Content-Transfer-Encoding
// (the maas CLI and python-libmaas send every parameter as a base64 part),
// and JSON objects. Whatever the encoding, handlers see plain values in
// r.form; parts with a filename are files and go to r.files.

// maxFormParts bounds how many parts or keys one body may carry, so that
// a body of many tiny parameters costs no more than a few large ones.
const maxFormParts = 1000

// parseForm merges the query string with the body's parameters, refusing
// bodies over limit and any part it cannot decode in full.
func (s *Server) parseForm(w http.ResponseWriter, r *request, limit int64) error {
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	// URL.Query drops a query it cannot parse in full (a bad escape, or
	// more parameters than net/url takes): a filtered list would then
	// answer every machine. Refuse it instead.
	form, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return &fieldError{field: "query", msg: "cannot parse the query string: " + err.Error()}
	}
	if err := machine.CheckText(r.URL.Path); err != nil {
		return badField("path", "%v", err)
	}
	if r.Method == http.MethodPost || r.Method == http.MethodPut {
		if err := readBody(r, form); err != nil {
			return err
		}
	}
	if err := checkFormText(form); err != nil {
		return err
	}
	// A repeated op (query and body disagreeing) is ambiguous.
	if ops := form["op"]; len(ops) > 1 {
		for _, o := range ops[1:] {
			if o != ops[0] {
				return &fieldError{field: "op", msg: "op given twice with different values"}
			}
		}
		form["op"] = ops[:1]
	}
	r.form = form
	return nil
}

// checkFormText refuses, in one place for every handler, a parameter
// (from the query, a form, a multipart field or a JSON body) whose name
// or value is not text the store can keep. Files (multipart parts with a
// filename) are bytes and are not checked.
func checkFormText(form url.Values) error {
	for k, vs := range form {
		if err := machine.CheckText(k); err != nil {
			return badField("body", "a parameter name %v", err)
		}
		for _, v := range vs {
			if err := machine.CheckText(v); err != nil {
				return badField(fieldName(k), "%v", err)
			}
		}
	}
	return nil
}

func readBody(r *request, form url.Values) error {
	ct, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil && r.Header.Get("Content-Type") != "" {
		return &fieldError{field: "Content-Type", msg: "cannot parse the Content-Type header: " + err.Error()}
	}
	switch ct {
	case "multipart/form-data":
		files, err := readMultipart(r.Body, params["boundary"], form, multipartOptions{})
		r.files = files
		return err
	case "application/x-www-form-urlencoded", "":
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return badBody(err)
		}
		vs, err := url.ParseQuery(string(b))
		if err != nil {
			return &fieldError{field: "body", msg: "cannot parse the urlencoded body: " + err.Error()}
		}
		return merge(form, vs)
	case "application/json":
		return readJSONBody(r.Body, form)
	default:
		return &fieldError{field: "Content-Type", msg: fmt.Sprintf("%q is not accepted: send application/x-www-form-urlencoded, multipart/form-data or application/json", truncate(ct, 60))}
	}
}

func merge(form, vs url.Values) error {
	n := 0
	for k, v := range vs {
		if !utf8.ValidString(k) || !validValues(v) {
			return badField(fieldName(k), "is not valid UTF-8")
		}
		n += len(v)
		form[k] = append(form[k], v...)
	}
	if n > maxFormParts {
		return badField("body", "more than %d parameters", maxFormParts)
	}
	return nil
}

func validValues(vs []string) bool {
	for _, v := range vs {
		if !utf8.ValidString(v) {
			return false
		}
	}
	return true
}

// maxFilePart caps a file part kept in memory (the body limit caps the
// whole request first).
const maxFilePart = 4 << 20

// multipartOptions bound a multipart body beyond its size.
type multipartOptions struct {
	maxParts int   // 0: maxFormParts
	maxField int64 // the longest field value; 0: only the body's limit
	// stream, when set, is offered each part first, decoded; it returns
	// false to leave the part to the form. Its errors are returned as
	// they are, except a broken transfer encoding, which names the part.
	stream func(name string, body io.Reader) (bool, error)
}

// readMultipart adds a multipart body's fields to form, decoding each
// part's transfer encoding, and returns its files (parts with a filename).
func readMultipart(body io.Reader, boundary string, form url.Values, o multipartOptions) (map[string][][]byte, error) {
	if boundary == "" {
		return nil, &fieldError{field: "Content-Type", msg: "multipart/form-data without a boundary"}
	}
	if o.maxParts == 0 {
		o.maxParts = maxFormParts
	}
	mr := multipart.NewReader(body, boundary)
	files := map[string][][]byte{}
	for parts := 0; ; parts++ {
		// NextRawPart: NextPart would decode quoted-printable itself and
		// drop the header, hiding a part that names two encodings.
		p, err := mr.NextRawPart()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, badBody(err)
		}
		if parts >= o.maxParts {
			return nil, badField("body", "more than %d parts", o.maxParts)
		}
		name := p.FormName()
		if name == "" {
			// As Django: a part without a name is no parameter. Python's
			// email package writes one empty such part for an empty form
			// (python-libmaas sends that on every POST without data).
			continue
		}
		dec, err := partDecoder(p.Header, p)
		if err != nil {
			return nil, badField(fieldName(name), "%v", err)
		}
		if o.stream != nil {
			took, err := o.stream(name, dec)
			var ee *encodingError
			if errors.As(err, &ee) {
				return nil, partError(name, err)
			}
			if err != nil {
				return nil, err
			}
			if took {
				continue
			}
		}
		if p.FileName() != "" {
			limit := int64(maxFilePart)
			if o.maxField > 0 {
				limit = o.maxField
			}
			b, err := io.ReadAll(io.LimitReader(dec, limit+1))
			if err != nil {
				return nil, partError(name, err)
			}
			if int64(len(b)) > limit {
				return nil, badField(fieldName(name), "file is larger than %d bytes", limit)
			}
			files[name] = append(files[name], b)
			continue
		}
		var rd io.Reader = dec
		if o.maxField > 0 {
			rd = io.LimitReader(dec, o.maxField+1)
		}
		b, err := io.ReadAll(rd)
		if err != nil {
			return nil, partError(name, err)
		}
		if o.maxField > 0 && int64(len(b)) > o.maxField {
			return nil, badField(fieldName(name), "longer than %d bytes", o.maxField)
		}
		if !utf8.Valid(b) {
			return nil, badField(fieldName(name), "is not valid UTF-8 text")
		}
		form.Add(name, string(b))
	}
}

// partDecoder undoes a part's Content-Transfer-Encoding. MIME allows one
// encoding per part; a part naming two (or one twice, differently) is
// ambiguous and refused, as is any encoding MIME does not define.
func partDecoder(h textproto.MIMEHeader, body io.Reader) (*decodedPart, error) {
	d := &decodedPart{raw: &tracked{r: body}}
	d.r = d.raw
	encs := h.Values("Content-Transfer-Encoding")
	if len(encs) == 0 {
		return d, nil
	}
	d.enc = strings.ToLower(strings.TrimSpace(encs[0]))
	for _, e := range encs[1:] {
		if strings.ToLower(strings.TrimSpace(e)) != d.enc {
			return nil, fmt.Errorf("the part names two transfer encodings (%s)", strings.Join(encs, ", "))
		}
	}
	switch d.enc {
	case "", "7bit", "8bit", "binary":
	case "base64":
		// Go's decoder skips the CR and LF that wrap base64 lines.
		d.r = base64.NewDecoder(base64.StdEncoding, d.raw)
	case "quoted-printable":
		d.r = quotedprintable.NewReader(d.raw)
	default:
		return nil, fmt.Errorf("unknown Content-Transfer-Encoding %q (Anvil reads base64, quoted-printable, 7bit, 8bit and binary)", truncate(encs[0], 40))
	}
	return d, nil
}

// decodedPart reads a part through its decoder, telling a broken
// encoding (the client's data) from a failed read (the connection, or
// the body limit).
type decodedPart struct {
	r   io.Reader
	raw *tracked
	enc string
}

func (d *decodedPart) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	if err != nil && err != io.EOF && d.raw.err == nil {
		err = &encodingError{enc: d.enc, err: err}
	}
	return n, err
}

type tracked struct {
	r   io.Reader
	err error
}

func (t *tracked) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if err != nil && err != io.EOF {
		t.err = err
	}
	return n, err
}

type encodingError struct {
	enc string
	err error
}

func (e *encodingError) Error() string { return "malformed " + e.enc + ": " + e.err.Error() }

// partError words a failure to read one part: a broken encoding names
// the part, a body over the limit stays a 413.
func partError(name string, err error) error {
	var mbe *http.MaxBytesError
	var fe *fieldError
	var ee *encodingError
	switch {
	case errors.As(err, &mbe), errors.As(err, &fe):
		return err
	case errors.As(err, &ee):
		return badField(fieldName(name), "the part's %s is malformed: %v", ee.enc, ee.err)
	}
	return badBody(err)
}

// fieldName keeps a client-chosen name short enough to echo.
func fieldName(n string) string {
	if !utf8.ValidString(n) {
		return "body"
	}
	return truncate(n, 64)
}

// readJSONBody takes a JSON object as MAAS's Piston does: each member is
// a parameter. Strings are taken as they are, numbers and booleans in
// their JSON spelling, arrays as repeated values and objects as their
// JSON text (power_parameters, for one, is read as JSON either way).
func readJSONBody(body io.Reader, form url.Values) error {
	raw, err := io.ReadAll(body)
	if err != nil {
		return badBody(err)
	}
	// Before decoding: the decoder would replace invalid UTF-8, and a NUL
	// inside an object member (power_parameters) would pass as "\u0000".
	if path, err := machine.CheckJSONText(raw); err != nil {
		return badField(fieldName(firstOr(path, "body")), "%v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var obj map[string]json.RawMessage
	if err := dec.Decode(&obj); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return mbe
		}
		return badField("body", "the body is not a JSON object: %v", err)
	}
	if dec.More() {
		return badField("body", "the body has data after its JSON object")
	}
	if len(obj) > maxFormParts {
		return badField("body", "more than %d parameters", maxFormParts)
	}
	for k, raw := range obj {
		vs, err := jsonValues(raw, true)
		if err != nil {
			return badField(fieldName(k), "%v", err)
		}
		form[k] = append(form[k], vs...)
	}
	return nil
}

func jsonValues(raw json.RawMessage, top bool) ([]string, error) {
	var v any
	d := json.NewDecoder(strings.NewReader(string(raw)))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	switch t := v.(type) {
	case nil:
		return nil, nil
	case string:
		return []string{t}, nil
	case bool:
		return []string{strconv.FormatBool(t)}, nil
	case json.Number:
		return []string{t.String()}, nil
	case []any:
		if !top {
			return nil, errors.New("arrays inside arrays are not accepted")
		}
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, err
		}
		var out []string
		for _, it := range items {
			vs, err := jsonValues(it, false)
			if err != nil {
				return nil, err
			}
			out = append(out, vs...)
		}
		return out, nil
	default:
		return []string{string(raw)}, nil
	}
}

func badBody(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return mbe
	}
	return &fieldError{field: "body", msg: "cannot parse request body: " + err.Error()}
}
