package storetest

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/store"
)

func bootFile(sha byte, size int64, complete bool) store.BootResourceFile {
	return store.BootResourceFile{Filename: "ddraw", Filetype: "ddraw", SHA256: strings.Repeat(string("0123456789abcdef"[sha%16]), 64),
		Size: size, Complete: complete}
}

func testBootResources(t *testing.T, s store.Store) {
	ctx := t.Context()
	day := time.Now().UTC().Format("20060102")
	r, err := s.CreateBootResource(ctx, store.BootResource{Name: "noble-web", Architecture: "amd64/generic", Title: "Web",
		BaseImage: "ubuntu/noble"}, bootFile(1, 100, false))
	if err != nil || r.ID == 0 || r.Name != "noble-web" || r.Title != "Web" || r.BaseImage != "ubuntu/noble" || r.Created.IsZero() {
		t.Fatalf("CreateBootResource = %+v, %v", r, err)
	}
	if len(r.Files) != 1 || r.Files[0].Version != day || r.Files[0].Label != "uploaded" || r.Files[0].Complete ||
		r.Files[0].ResourceID != r.ID || r.Files[0].Size != 100 || r.Files[0].Created.IsZero() {
		t.Fatalf("files = %+v", r.Files)
	}
	first := r.Files[0]
	got, err := s.GetBootResource(ctx, r.ID)
	if err != nil || got.ID != r.ID || len(got.Files) != 1 || got.Files[0] != first || !got.Created.Equal(r.Created) {
		t.Fatalf("GetBootResource = %+v, %v", got, err)
	}
	_, err = s.GetBootResource(ctx, r.ID+100)
	wantErrIs(t, err, store.ErrNotFound)

	// The same bytes under another size are refused.
	_, err = s.CreateBootResource(ctx, store.BootResource{Name: "other", Architecture: "amd64/generic"}, bootFile(1, 101, false))
	wantErrIs(t, err, store.ErrConflict)

	// A second upload to the same resource is a new set; the old one
	// stays until the new one completes.
	r2, err := s.CreateBootResource(ctx, store.BootResource{Name: "noble-web", Architecture: "amd64/generic", Title: "Web 2"}, bootFile(2, 200, false))
	if err != nil || r2.ID != r.ID || len(r2.Files) != 2 || r2.Files[0].Version != day+".1" || r2.Title != "Web 2" || r2.BaseImage != "ubuntu/noble" {
		t.Fatalf("second upload = %+v, %v", r2, err)
	}
	removed, err := s.CompleteBootResourceFile(ctx, r2.Files[0].ID)
	if err != nil || len(removed) != 1 || removed[0].ID != first.ID {
		t.Fatalf("CompleteBootResourceFile = %+v, %v", removed, err)
	}
	got, _ = s.GetBootResource(ctx, r.ID)
	if len(got.Files) != 1 || !got.Files[0].Complete || got.Files[0].SHA256 != bootFile(2, 0, false).SHA256 {
		t.Fatalf("after completion: %+v", got.Files)
	}
	_, err = s.CompleteBootResourceFile(ctx, 999999)
	wantErrIs(t, err, store.ErrNotFound)

	// A complete upload replaces the older sets at once.
	arm, err := s.CreateBootResource(ctx, store.BootResource{Name: "ubuntu/noble", Architecture: "arm64/generic"}, bootFile(3, 300, true))
	if err != nil || len(arm.Files) != 1 || !arm.Files[0].Complete {
		t.Fatalf("complete create = %+v, %v", arm, err)
	}
	arm, err = s.CreateBootResource(ctx, store.BootResource{Name: "ubuntu/noble", Architecture: "arm64/generic"}, bootFile(2, 200, true))
	if err != nil || len(arm.Files) != 1 || arm.Files[0].SHA256 != bootFile(2, 0, false).SHA256 {
		t.Fatalf("replacing create = %+v, %v", arm, err)
	}

	list, err := s.ListBootResources(ctx)
	if err != nil || len(list) != 2 || list[0].Name != "noble-web" || list[1].Name != "ubuntu/noble" ||
		len(list[0].Files) != 1 || len(list[1].Files) != 1 || !list[0].LastDeployed.IsZero() {
		t.Fatalf("ListBootResources = %+v, %v", list, err)
	}
	deployed := time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)
	if err := s.MarkBootResourceDeployed(ctx, r.ID, deployed); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetBootResource(ctx, r.ID); err != nil || !got.LastDeployed.Equal(deployed) {
		t.Fatalf("after MarkBootResourceDeployed: %v, %v", got.LastDeployed, err)
	}
	wantErrIs(t, s.MarkBootResourceDeployed(ctx, 999999, deployed), store.ErrNotFound)
	files, err := s.BootResourceFilesBySHA256(ctx, bootFile(2, 0, false).SHA256)
	if err != nil || len(files) != 2 {
		t.Fatalf("BootResourceFilesBySHA256 = %+v, %v", files, err)
	}

	removed, err = s.DeleteBootResource(ctx, arm.ID)
	if err != nil || len(removed) != 1 || removed[0].ResourceID != arm.ID {
		t.Fatalf("DeleteBootResource = %+v, %v", removed, err)
	}
	_, err = s.DeleteBootResource(ctx, arm.ID)
	wantErrIs(t, err, store.ErrNotFound)
	if files, _ := s.BootResourceFilesBySHA256(ctx, bootFile(2, 0, false).SHA256); len(files) != 1 || files[0].ResourceID != r.ID {
		t.Fatalf("files after delete = %+v", files)
	}
}

// testBootResourcesConcurrent uploads to one resource at once: every
// upload gets its own set and version.
func testBootResourcesConcurrent(t *testing.T, s store.Store) {
	ctx := t.Context()
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			_, err := s.CreateBootResource(ctx, store.BootResource{Name: "race", Architecture: "amd64/generic"}, bootFile(byte(i), int64(10+i), false))
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	list, err := s.ListBootResources(ctx)
	if err != nil || len(list) != 1 || len(list[0].Files) != n {
		t.Fatalf("after concurrent uploads: %+v, %v", list, err)
	}
	seen := map[string]bool{}
	for _, f := range list[0].Files {
		if seen[f.Version] {
			t.Fatalf("version %s given twice", f.Version)
		}
		seen[f.Version] = true
	}
}
