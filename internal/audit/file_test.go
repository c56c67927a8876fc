package audit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func readRecords(t *testing.T, path string) []Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []Record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s line %d is not a whole record: %q", path, n, sc.Text())
		}
		out = append(out, r)
	}
	return out
}

func TestFileRotatesAndReopens(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	f, err := OpenFile(FileConfig{Path: path, MaxSizeMB: 1, MaxBackups: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	big := strings.Repeat("x", 1000)
	for i := range 2500 { // ~2.5 MB: at least two rotations
		if err := f.Write(&Record{Kind: KindDecision, EventID: fmt.Sprint(i), Reason: big}); err != nil {
			t.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Errorf("files after rotation = %d, want the log and 2 backups", len(entries))
	}
	for _, e := range entries {
		readRecords(t, filepath.Join(dir, e.Name())) // every file holds whole lines
	}

	// An external rotation moves the file away; Reopen starts a new one.
	moved := path + ".moved"
	if err := os.Rename(path, moved); err != nil {
		t.Fatal(err)
	}
	if err := f.Reopen(); err != nil {
		t.Fatal(err)
	}
	if err := f.Write(&Record{Kind: KindDecision, EventID: "after"}); err != nil {
		t.Fatal(err)
	}
	if recs := readRecords(t, path); len(recs) != 1 || recs[0].EventID != "after" {
		t.Errorf("after reopen: %+v", recs)
	}
}

func TestOpenFileFailsEarly(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	os.WriteFile(blocker, nil, 0o600)
	if _, err := OpenFile(FileConfig{Path: filepath.Join(blocker, "a.jsonl")}); err == nil {
		t.Error("opened an audit log below a regular file")
	}
}

// TestKillNineLeavesWholeLines kills a process that writes records as fast
// as it can; the log must still parse line by line.
func TestKillNineLeavesWholeLines(t *testing.T) {
	if os.Getenv("AUDIT_WRITER") != "" {
		writeForever(os.Getenv("AUDIT_WRITER"))
		return
	}
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillNineLeavesWholeLines$")
	cmd.Env = append(os.Environ(), "AUDIT_WRITER="+path)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if fi, err := os.Stat(path); err == nil && fi.Size() > 1<<20 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("writer produced less than 1 MiB in 10s")
		}
		time.Sleep(10 * time.Millisecond) // polling a file another process grows
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	recs := readRecords(t, path)
	if len(recs) < 100 {
		t.Errorf("only %d records", len(recs))
	}
}

func writeForever(path string) {
	f, err := OpenFile(FileConfig{Path: path, MaxSizeMB: 1000})
	if err != nil {
		os.Exit(3)
	}
	reason := strings.Repeat("r", 3000) // records large enough to need many writes' worth of pages
	for i := 0; ; i++ {
		f.Write(&Record{Kind: KindDecision, EventID: fmt.Sprint(i), Reason: reason})
	}
}
