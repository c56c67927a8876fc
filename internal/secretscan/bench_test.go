package secretscan

import (
	"fmt"
	"strings"
	"testing"
)

// sourceText returns n bytes of code-like text with no secret in it.
func sourceText(n int) string {
	const chunk = "func (s *Server) handle(ctx context.Context, req *Request) error {\n\tif err := s.check(req); err != nil {\n\t\treturn fmt.Errorf(\"checking %s: %w\", req.ID, err)\n\t}\n\tlog.Println(\"skipped gh light sk- high\")\n}\n"
	return strings.Repeat(chunk, n/len(chunk)+1)[:n]
}

// BenchmarkScan reports the cost of a scan per byte of text.
func BenchmarkScan(b *testing.B) {
	for _, n := range []int{1 << 10, 10 << 10, 100 << 10, 1 << 20, 4 << 20} {
		text := sourceText(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				Scan(text, 64)
			}
		})
	}
}
