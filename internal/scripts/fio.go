package scripts

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// FioPass is one fio run's figures for the direction it ran: bandwidth
// in KiB/s (fio's JSON "bw") and I/O operations per second.
type FioPass struct {
	BW   int64
	IOPS int64
}

// FioPasses are the four runs MAAS's fio test makes, by fio --readwrite
// mode, and the result names it reports them under.
var FioPasses = []struct{ Mode, Result string }{
	{"randread", "random_read"},
	{"read", "sequential_read"},
	{"randwrite", "random_write"},
	{"write", "sequential_write"},
}

// ParseFio reads fio's --output-format=json for one job run in mode
// (randread, read, randwrite, write). Text before the JSON (fio prints
// warnings there) is skipped; a job fio reports as failed is an error.
func ParseFio(out []byte, mode string) (FioPass, error) {
	i := bytes.IndexByte(out, '{')
	if i < 0 {
		return FioPass{}, fmt.Errorf("fio %s: no JSON in its output", mode)
	}
	var doc struct {
		Jobs []struct {
			Name  string `json:"jobname"`
			Error int    `json:"error"`
			Read  fioDir `json:"read"`
			Write fioDir `json:"write"`
		} `json:"jobs"`
	}
	if err := json.NewDecoder(bytes.NewReader(out[i:])).Decode(&doc); err != nil {
		return FioPass{}, fmt.Errorf("fio %s: reading its JSON: %w", mode, err)
	}
	if len(doc.Jobs) == 0 {
		return FioPass{}, fmt.Errorf("fio %s: no job in its output", mode)
	}
	job := doc.Jobs[0]
	if job.Error != 0 {
		return FioPass{}, fmt.Errorf("fio %s: job %s failed with error %d", mode, job.Name, job.Error)
	}
	d := job.Write
	if strings.Contains(mode, "read") {
		d = job.Read
	}
	if d.BW < 0 || d.IOPS < 0 || math.IsNaN(d.IOPS) || math.IsInf(d.IOPS, 0) {
		return FioPass{}, fmt.Errorf("fio %s: figures out of range (bw %d, iops %v)", mode, d.BW, d.IOPS)
	}
	return FioPass{BW: d.BW, IOPS: int64(d.IOPS)}, nil
}

type fioDir struct {
	BW   int64   `json:"bw"`
	IOPS float64 `json:"iops"`
}

// FioResults is the result YAML's "results" MAAS's fio test writes:
// bandwidth as "N KB/s" and IOPS as a number, per pass.
func FioResults(passes map[string]FioPass) map[string]any {
	out := map[string]any{}
	for _, p := range FioPasses {
		r, ok := passes[p.Mode]
		if !ok {
			continue
		}
		out[p.Result] = fmt.Sprintf("%d KB/s", r.BW)
		out[p.Result+"_iops"] = r.IOPS
	}
	return out
}
