package demo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/anvilmetal/anvil/internal/agentapi"
	"github.com/anvilmetal/anvil/internal/client"
)

// uploadImage sends the file at path to boot-resources/ as name, streamed
// in one multipart request with its SHA-256 and size.
func uploadImage(ctx context.Context, cl *client.Client, name, filetype, path string, key string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	size, err := io.Copy(h, f)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		fields := [][2]string{{"name", name}, {"architecture", "amd64/generic"}, {"filetype", filetype},
			{"sha256", hex.EncodeToString(h.Sum(nil))}, {"size", strconv.FormatInt(size, 10)}}
		for _, kv := range fields {
			if err := mw.WriteField(kv[0], kv[1]); err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		part, err := mw.CreateFormFile("content", filetype)
		if err == nil {
			_, err = io.Copy(part, f)
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	req, err := http.NewRequestWithContext(ctx, "POST", cl.BaseURL()+"api/2.0/boot-resources/", pr)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", agentapi.OAuthHeader(key))
	resp, err := cl.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("upload %s: %s: %s", name, resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}
