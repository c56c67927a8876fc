package daemon

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// elfWithNote is the start of a little-endian ELF file whose Go build ID
// note holds id, at offset off.
func elfWithNote(id string, off int) []byte {
	b := make([]byte, off, off+12+4+len(id)+64)
	copy(b, "\x7fELF\x02\x01\x01")
	b = binary.LittleEndian.AppendUint32(b, 4)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(id)))
	b = binary.LittleEndian.AppendUint32(b, 4)
	b = append(b, "Go\x00\x00"...)
	b = append(b, id...)
	return append(b, make([]byte, 64)...)
}

// TestExeIDIdentifiesContent: two builds that both call themselves
// "(devel)" still differ in their identity, since the linker derives the
// build ID from the content; a file without one is told apart by its
// inode, size and time.
func TestExeIDIdentifiesContent(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bigEndian := append([]byte("\x7fELF\x02\x02\x01"), make([]byte, 100)...)
	bigEndian = binary.BigEndian.AppendUint32(bigEndian, 4)
	bigEndian = binary.BigEndian.AppendUint32(bigEndian, 3)
	bigEndian = binary.BigEndian.AppendUint32(bigEndian, 4)
	bigEndian = append(bigEndian, "Go\x00\x00abc"...)
	for _, tc := range []struct {
		name string
		file []byte
		want string // "" : the fallback
	}{
		{"ELF note", elfWithNote("aaa/bbb/ccc/ddd", 200), "aaa/bbb/ccc/ddd"},
		{"ELF note late in the scan", elfWithNote("late", buildIDScan-100), "late"},
		{"ELF note past the scan", elfWithNote("toolate", buildIDScan+10), ""},
		{"big-endian ELF", bigEndian, "abc"},
		{"a Go name that is no note", append([]byte("\x7fELF\x02\x01\x01"), "xxxxxxxxxxxxxxGo\x00\x00zzz"...), ""},
		{"Mach-O style string", []byte("\xcf\xfa\xed\xfe....\xff Go build ID: \"m/n/o/p\"\n \xff"), "m/n/o/p"},
		{"script", []byte("#!/bin/sh\nexit 0\n"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := write(strings.ReplaceAll(tc.name, " ", "_"), tc.file)
			got := ExeID(p)
			if tc.want != "" && got != tc.want {
				t.Errorf("ExeID = %q, want %q", got, tc.want)
			}
			if tc.want == "" && !strings.Contains(got, "ino=") {
				t.Errorf("ExeID = %q, want the file's identity", got)
			}
		})
	}
	a, b := write("a", elfWithNote("build-a", 100)), write("b", elfWithNote("build-b", 100))
	if Identity(a) == Identity(b) {
		t.Errorf("two builds share the identity %q", Identity(a))
	}
	if Identity(a) != Identity(write("a-copy", elfWithNote("build-a", 100))) {
		t.Error("one build copied elsewhere changed its identity")
	}
	if got := ExeID(filepath.Join(dir, "absent")); got != "unreadable" {
		t.Errorf("ExeID(absent) = %q", got)
	}
	if got := ExeID(dir); got != "unreadable" {
		t.Errorf("ExeID(dir) = %q", got)
	}
}

// TestExeIDMatchesTheToolchain: on a real binary, ExeID reads what `go
// tool buildid` reports.
func TestExeIDMatchesTheToolchain(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go toolchain not on PATH")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(gobin, "tool", "buildid", exe).Output()
	if err != nil {
		t.Skip("go tool buildid: ", err)
	}
	if want := string(bytes.TrimSpace(out)); ExeID(exe) != want {
		t.Errorf("ExeID = %q, go tool buildid = %q", ExeID(exe), want)
	}
	if !strings.HasSuffix(SelfIdentity(), " build "+ExeID(exe)) {
		t.Errorf("SelfIdentity = %q, want it to end in this binary's build ID", SelfIdentity())
	}
}

// FuzzBuildID: any start of a file gives either nothing or a bounded
// substring of it, and never panics.
func FuzzBuildID(f *testing.F) {
	f.Add(elfWithNote("aaa/bbb", 40))
	f.Add([]byte("\xff Go build ID: \"x/y\"\n"))
	f.Add([]byte("\x7fELF\x02\x02\x01Go\x00\x00"))
	f.Add([]byte("\x7fELF"))
	f.Fuzz(func(t *testing.T, b []byte) {
		id := buildID(b)
		if len(id) > maxBuildID || (id != "" && !bytes.Contains(b, []byte(id))) {
			t.Fatalf("buildID = %q", id)
		}
	})
}

// BenchmarkExeID is the cost a warm hook pays per call to name the build
// of the ahp-opa binary it would start.
func BenchmarkExeID(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		ExeID(exe)
	}
}

// BenchmarkResolve is the cost of resolving the configuration per call.
func BenchmarkResolve(b *testing.B) {
	dir := b.TempDir()
	env := append(os.Environ(), "AHP_OPA_POLICY=rules", "AHP_OPA_LOG_LEVEL=warn")
	for b.Loop() {
		PathsFor(dir, Resolve(dir, "", []string{"a.rego", "/b"}, true, env).Key)
	}
}
