package password

import (
	"errors"
	"strings"
	"testing"
)

func TestHashVerify(t *testing.T) {
	h, err := Hash("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "pbkdf2-sha256$600000$") || strings.Contains(h, "correct") {
		t.Fatalf("hash %q", h)
	}
	if err := Verify(h, "correct horse"); err != nil {
		t.Fatalf("right password refused: %v", err)
	}
	h2, _ := Hash("correct horse")
	if h2 == h {
		t.Fatal("two hashes of one password are equal: no salt")
	}
	for _, tc := range []struct{ stored, pw string }{
		{h, "correct hors"},
		{h, ""},
		{"", ""},
		{"", "anything"},
		{"pbkdf2-sha256$x$AAAA$AAAA", "correct horse"},
		{"pbkdf2-sha256$0$AAAA$AAAA", "correct horse"},
		{"pbkdf2-sha256$99999999999$AAAA$AAAA", "correct horse"},
		{"md5$1$AAAA$AAAA", "correct horse"},
		{"pbkdf2-sha256$1$!!$AAAA", "correct horse"},
	} {
		if err := Verify(tc.stored, tc.pw); !errors.Is(err, ErrMismatch) {
			t.Errorf("Verify(%q, %q) = %v; want ErrMismatch", tc.stored, tc.pw, err)
		}
	}
	if _, err := Hash("short"); err == nil {
		t.Fatal("a 5-character password was accepted")
	}
}
