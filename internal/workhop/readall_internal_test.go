package workhop

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestReadAll checks that readAll reads what io.ReadAll reads, whatever length the
// request says (none, the body's, a wrong one) and however the reader splits it, and
// that a body of known length is read into one buffer.
func TestReadAll(t *testing.T) {
	for _, size := range []int{0, 1, 511, 512, 513, 700, 4096, 70000} {
		body := []byte(strings.Repeat("x", size))
		for _, length := range []int64{-1, 0, int64(size), int64(size) - 1, int64(size) + 1, 1 << 30} {
			for name, r := range map[string]func() io.Reader{
				"whole":    func() io.Reader { return bytes.NewReader(body) },
				"one byte": func() io.Reader { return iotest.OneByteReader(bytes.NewReader(body)) },
				"EOF with data": func() io.Reader {
					return iotest.DataErrReader(bytes.NewReader(body))
				},
			} {
				got, err := readAll(r(), length, 1<<20)
				if err != nil || !bytes.Equal(got, body) {
					t.Fatalf("readAll(%s, %d bytes, length %d) = %d bytes, %v; want the body", name, size, length, len(got), err)
				}
			}
		}
	}
	failed := iotest.ErrReader(io.ErrUnexpectedEOF)
	if _, err := readAll(io.MultiReader(strings.NewReader("abc"), failed), 10, 1<<20); err != io.ErrUnexpectedEOF {
		t.Fatalf("readAll of a failing reader = %v, want its error", err)
	}

	body := []byte(strings.Repeat("x", 900)) // about a Claim's body
	r := bytes.NewReader(body)
	allocs := testing.AllocsPerRun(100, func() {
		r.Reset(body)
		if _, err := readAll(r, int64(len(body)), DefaultMaxBody); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1 {
		t.Fatalf("reading a body of known length allocates %.0f times, want 1 (io.ReadAll takes 4)", allocs)
	}
}
