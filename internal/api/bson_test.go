package api

import (
	"bytes"
	"testing"

	"gopkg.in/mgo.v2/bson"
)

// TestEncodeBSON decodes what encodeBSON writes with mgo's bson, the
// library gomaasclient reads op=details with.
func TestEncodeBSON(t *testing.T) {
	xml := []byte("<?xml version=\"1.0\"?>\n<list>\x00\xff</list>")
	b, err := encodeBSON(bsonDoc{
		{"lshw", xml}, {"lldp", nil}, {"name", "nöde"}, {"n", int64(-1) << 40}, {"ok", true},
		{"sub", bsonDoc{{"cpuinfo", []byte("model name: x")}, {"empty", []byte{}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got bson.M
	if err := bson.Unmarshal(b, &got); err != nil {
		t.Fatalf("mgo cannot decode it: %v", err)
	}
	sub, _ := got["sub"].(bson.M)
	if !bytes.Equal(got["lshw"].([]byte), xml) || got["lldp"] != nil || got["name"] != "nöde" || got["n"] != int64(-1)<<40 ||
		got["ok"] != true || string(sub["cpuinfo"].([]byte)) != "model name: x" || len(sub["empty"].([]byte)) != 0 {
		t.Fatalf("decoded %#v", got)
	}
	// gomaasclient's entity.NodeDetails.
	var details struct {
		LLDP string `json:"lldp,omitempty"`
		LSHW string `json:"lshw,omitempty"`
	}
	if err := bson.Unmarshal(b, &details); err != nil || details.LSHW != string(xml) || details.LLDP != "" {
		t.Fatalf("NodeDetails %+v, %v", details, err)
	}
	if _, err := encodeBSON(bsonDoc{{"a\x00b", nil}}); err == nil {
		t.Fatal("a key with a NUL was encoded")
	}
	if _, err := encodeBSON(bsonDoc{{"f", 1.5}}); err == nil {
		t.Fatal("an unsupported type was encoded")
	}
}
