package pathread_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ahp-opa/ahp-opa/internal/pathread"
	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ok := write("token", "s3cret\n")
	big := write("big", strings.Repeat("x", 2048))
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	toFIFO := filepath.Join(dir, "to-fifo")
	if err := os.Symlink(fifo, toFIFO); err != nil {
		t.Fatal(err)
	}
	toFile := filepath.Join(dir, "to-token")
	if err := os.Symlink(ok, toFile); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	before := testkit.SnapshotTree(t, dir)

	tests := []struct {
		name    string
		path    string
		max     int64
		want    string
		wantIs  error
		wantErr string
	}{
		{name: "regular file", path: ok, want: "s3cret\n"},
		{name: "symlink to a regular file", path: toFile, want: "s3cret\n"},
		{name: "exactly the cap", path: big, max: 2048, want: strings.Repeat("x", 2048)},
		{name: "over the cap", path: big, max: 2047, wantIs: pathread.ErrTooLarge,
			wantErr: big + ": is 2048 bytes, over the 2047 bytes limit"},
		{name: "FIFO does not block", path: fifo, wantIs: pathread.ErrNotRegular,
			wantErr: fifo + ": is a named pipe (FIFO), not a regular file"},
		{name: "symlink to a FIFO", path: toFIFO, wantIs: pathread.ErrNotRegular,
			wantErr: toFIFO + ": is a named pipe (FIFO), not a regular file"},
		{name: "directory", path: sub, wantIs: pathread.ErrNotRegular,
			wantErr: sub + ": is a directory, not a regular file"},
		{name: "endless device", path: "/dev/zero", wantIs: pathread.ErrNotRegular,
			wantErr: "/dev/zero: is a character device, not a regular file"},
		{name: "missing", path: filepath.Join(dir, "nope"), wantIs: os.ErrNotExist,
			wantErr: filepath.Join(dir, "nope") + ": does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := pathread.Read(tt.path, pathread.Limits{MaxBytes: tt.max})
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr || !errors.Is(err, tt.wantIs) {
					t.Fatalf("err = %v, want %q (is %v)", err, tt.wantErr, tt.wantIs)
				}
				var pe *pathread.Error
				if !errors.As(err, &pe) || pe.Path != tt.path {
					t.Fatalf("err %v is not a *pathread.Error naming %s", err, tt.path)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("Read = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	testkit.AssertSameTree(t, before, testkit.SnapshotTree(t, dir))
}
