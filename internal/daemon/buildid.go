package daemon

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"syscall"
)

// Identity names the build of the ahp-opa executable exe for the
// handshake: Version() and the Go build ID the linker derived from the
// binary's content. Builds without version stamps all call themselves
// "(devel)"; the build ID still tells a rebuilt binary from the daemon
// started from the old one, which then leaves for a new daemon.
func Identity(exe string) string {
	return Version() + " build " + ExeID(exe)
}

var self struct {
	once sync.Once
	id   string
}

// SelfIdentity is Identity of the running executable, read once. On
// Linux it is read through /proc/self/exe, which is the file this process
// runs even after the path was given a new binary.
func SelfIdentity() string {
	self.once.Do(func() {
		exe := "/proc/self/exe"
		if runtime.GOOS != "linux" {
			exe, _ = os.Executable()
		}
		self.id = Identity(exe)
	})
	return self.id
}

// buildIDScan bounds what ExeID reads: the linker puts the build ID note
// (ELF) or string (Mach-O and others) within the first few KiB.
const buildIDScan = 32 << 10

// ExeID identifies the content of the executable at path cheaply: its Go
// build ID when one is found in the first 32 KiB, else the file's
// device, inode, size and modification time, which also change when a
// build replaces it. A path that cannot be read gives "unreadable".
func ExeID(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return "unreadable"
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return "unreadable"
	}
	buf := make([]byte, buildIDScan)
	n, err := io.ReadFull(f, buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return "unreadable"
	}
	if id := buildID(buf[:n]); id != "" {
		return id
	}
	id := fmt.Sprintf("size=%d mtime=%d", fi.Size(), fi.ModTime().UnixNano())
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id = fmt.Sprintf("dev=%d ino=%d %s", st.Dev, st.Ino, id)
	}
	return id
}

// maxBuildID bounds the build ID accepted (Go's are 83 bytes).
const maxBuildID = 256

var (
	elfMagic     = []byte("\x7fELF")
	noteName     = []byte("Go\x00\x00")
	stringPrefix = []byte("\xff Go build ID: \"")
)

// buildID finds the Go build ID in the start of an executable: in ELF the
// note of type 4 named "Go" (4-byte name and type, little or big
// endian), elsewhere the quoted string the linker puts at the start of
// the text. "" when there is none.
func buildID(b []byte) string {
	if bytes.HasPrefix(b, elfMagic) && len(b) > 5 {
		var order binary.ByteOrder = binary.LittleEndian
		if b[5] == 2 { // EI_DATA: ELFDATA2MSB
			order = binary.BigEndian
		}
		for off := 0; ; {
			i := bytes.Index(b[off:], noteName)
			if i < 0 {
				break
			}
			at := off + i
			off = at + 1
			if at < 12 {
				continue
			}
			namesz, descsz, typ := order.Uint32(b[at-12:]), order.Uint32(b[at-8:]), order.Uint32(b[at-4:])
			if namesz != 4 || typ != 4 || descsz == 0 || descsz > maxBuildID || uint64(at)+4+uint64(descsz) > uint64(len(b)) {
				continue
			}
			return string(b[at+4 : at+4+int(descsz)])
		}
		return ""
	}
	i := bytes.Index(b, stringPrefix)
	if i < 0 {
		return ""
	}
	rest := b[i+len(stringPrefix):]
	end := bytes.IndexByte(rest, '"')
	if end <= 0 || end > maxBuildID {
		return ""
	}
	return string(rest[:end])
}
