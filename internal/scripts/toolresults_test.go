package scripts

import (
	"os"
	"strings"
	"testing"
)

// The testdata files are real outputs: fio 3.33 (--output-format=json,
// --direct=1 --iodepth=64 --bs=4096) on a 16 MiB file, and badblocks -v
// -s on the same file, in -n mode and read-only.
func TestParseFio(t *testing.T) {
	for _, c := range []struct {
		file, mode string
		want       FioPass
	}{
		{"fio-randread.json", "randread", FioPass{BW: 103696, IOPS: 25924}},
		{"fio-write.json", "write", FioPass{BW: 136533, IOPS: 34133}},
	} {
		b, err := os.ReadFile("testdata/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseFio(b, c.mode)
		if err != nil || got != c.want {
			t.Errorf("%s: %+v %v, want %+v", c.file, got, err, c.want)
		}
		// fio's warnings come before the JSON.
		if got, err := ParseFio(append([]byte("fio: note: something\n"), b...), c.mode); err != nil || got != c.want {
			t.Errorf("%s after a warning: %+v %v", c.file, got, err)
		}
	}
	// The read job's write side is zero: the mode picks the direction.
	b, _ := os.ReadFile("testdata/fio-randread.json")
	if got, _ := ParseFio(b, "randwrite"); got.BW != 0 {
		t.Errorf("randread's write side: %+v", got)
	}
	failed, _ := os.ReadFile("testdata/fio-error.json")
	for name, in := range map[string][]byte{"job error": failed, "empty": nil, "not json": []byte("{oops"),
		"no jobs": []byte(`{"jobs": []}`), "negative": []byte(`{"jobs": [{"read": {"bw": -1, "iops": 1}}]}`)} {
		if _, err := ParseFio(in, "read"); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestFioResults(t *testing.T) {
	got := FioResults(map[string]FioPass{"randread": {BW: 10, IOPS: 2}, "write": {BW: 30, IOPS: 4}})
	want := map[string]any{"random_read": "10 KB/s", "random_read_iops": int64(2), "sequential_write": "30 KB/s", "sequential_write_iops": int64(4)}
	if len(got) != len(want) {
		t.Fatalf("%v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %v, want %v", k, got[k], v)
		}
	}
}

func TestParseBadblocks(t *testing.T) {
	for _, f := range []string{"badblocks-n.txt", "badblocks-ro.txt"} {
		b, err := os.ReadFile("testdata/" + f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseBadblocks(b)
		if err != nil || got != (Badblocks{}) || got.Failed() {
			t.Errorf("%s: %+v %v", f, got, err)
		}
		// The same run had it found blocks: the summary line's counts.
		bad := strings.Replace(string(b), "0 bad blocks found. (0/0/0 errors)", "7 bad blocks found. (3/2/2 errors)", 1)
		got, err = ParseBadblocks([]byte(bad))
		if err != nil || got != (Badblocks{Bad: 7, Read: 3, Write: 2, Comparison: 2}) || !got.Failed() {
			t.Errorf("%s with bad blocks: %+v %v", f, got, err)
		}
		if r := got.Results(); r["badblocks"] != int64(7) || r["comparison_errors"] != int64(2) {
			t.Errorf("results %v", r)
		}
	}
	if _, err := ParseBadblocks([]byte("Checking blocks 0 to 4095\nbadblocks: Input/output error\n")); err == nil {
		t.Error("a run without its summary parsed")
	}
}
