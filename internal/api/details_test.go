package api_test

import (
	"bytes"
	"context"
	"testing"

	"gopkg.in/mgo.v2/bson"
)

// details fetches op=details as the maas CLI sends it and decodes it with
// mgo's bson, as gomaasclient does.
func (e *env) details(path string) bson.M {
	e.t.Helper()
	a := e.mustCLI(200, "GET", path+"?op=details", e.admin, nil)
	if ct := a.header.Get("Content-Type"); ct != "application/bson" {
		e.t.Fatalf("%s details: Content-Type %q", path, ct)
	}
	var m bson.M
	if err := bson.Unmarshal(a.body, &m); err != nil {
		e.t.Fatalf("%s details: %v: %q", path, err, a.body)
	}
	return m
}

// TestDetailsBSON: op=details on machines/ and nodes/ is MAAS's BSON
// document, lshw and lldp null until there is such a dump and bytes once
// there is, readable as gomaasclient's NodeDetails.
func TestDetailsBSON(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		m := e.addMachine("node-d", "52:54:00:00:03:0d", nil)
		for _, p := range []string{"machines/", "nodes/"} {
			d := e.details(p + m.SystemID + "/")
			if v, ok := d["lshw"]; !ok || v != nil {
				t.Fatalf("%s: lshw %#v, want null", p, v)
			}
			if v, ok := d["lldp"]; !ok || v != nil {
				t.Fatalf("%s: lldp %#v, want null", p, v)
			}
		}
		xml := []byte("<?xml version=\"1.0\" standalone=\"yes\" ?>\n<list><node id=\"node-d\" class=\"system\"/></list>\n")
		if err := e.srv.Store.PutResults(context.Background(), m.SystemID, map[string][]byte{"lshw": xml, "cpuinfo": []byte("processor: 0\n")}); err != nil {
			t.Fatal(err)
		}
		a := e.mustCLI(200, "GET", "machines/"+m.SystemID+"/?op=details", e.user, nil)
		var nd struct {
			LLDP string `json:"lldp,omitempty"`
			LSHW string `json:"lshw,omitempty"`
		}
		if err := bson.Unmarshal(a.body, &nd); err != nil || nd.LSHW != string(xml) || nd.LLDP != "" {
			t.Fatalf("as NodeDetails: %+v, %v", nd, err)
		}
		d := e.details("nodes/" + m.SystemID + "/")
		raw, _ := d["anvil_results"].(bson.M)
		if !bytes.Equal(d["lshw"].([]byte), xml) || string(raw["cpuinfo"].([]byte)) != "processor: 0\n" || len(raw) != 1 {
			t.Fatalf("details %#v", d)
		}
	})
}
