// Package sse provides a strict, bounded reader of the server-sent event streams that model
// endpoints answer with.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// MaxEvent bounds one event's data, in bytes: far above any streamed model delta, and
// low enough that a broken endpoint cannot fill memory.
const MaxEvent = 4 << 20

// ErrMalformed is wrapped by every error about the stream's own shape (as opposed to the
// reader's I/O errors, which are returned as they are).
var ErrMalformed = errors.New("sse: malformed stream")

// Event is one dispatched event. Name is empty when the stream gave no "event:" field.
type Event struct {
	Name string
	Data string
}

// Reader reads events from a stream. Unlike a browser it is strict: a line that is not a
// comment or one of the fields event, data, id and retry is an error, because an endpoint
// that sends one is not speaking the protocol we parse. It is not safe for concurrent use.
type Reader struct {
	br   *bufio.Reader
	line int
}

// NewReader returns a Reader of r.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 64<<10)}
}

// Next returns the next event. It returns io.EOF when the stream ends between events, and
// an error wrapping [ErrMalformed] and io.ErrUnexpectedEOF when it ends inside one.
func (r *Reader) Next() (Event, error) {
	var (
		ev      Event
		data    bytes.Buffer
		hasData bool
		started bool
	)
	for {
		line, err := r.readLine()
		if err == io.EOF {
			if started {
				return Event{}, fmt.Errorf("%w: stream ends inside an event at line %d: %w", ErrMalformed, r.line, io.ErrUnexpectedEOF)
			}
			return Event{}, io.EOF
		}
		if err != nil {
			return Event{}, err
		}
		if len(line) == 0 {
			if !started {
				continue
			}
			ev.Data = data.String()
			return ev, nil
		}
		if line[0] == ':' {
			continue // a comment, often a keep-alive
		}
		started = true
		field, value, found := bytes.Cut(line, []byte{':'})
		if found {
			value = bytes.TrimPrefix(value, []byte{' '})
		}
		switch string(field) {
		case "event":
			ev.Name = string(value)
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			hasData = true
			if data.Len()+len(value) > MaxEvent {
				return Event{}, fmt.Errorf("%w: event at line %d is over %d bytes", ErrMalformed, r.line, MaxEvent)
			}
			data.Write(value)
		case "id", "retry":
		default:
			return Event{}, fmt.Errorf("%w: line %d is not an SSE field: %q", ErrMalformed, r.line, clip(line))
		}
	}
}

// readLine returns the next line without its terminator (\n or \r\n). A last line without
// a terminator is returned as a line; io.EOF comes after it.
func (r *Reader) readLine() ([]byte, error) {
	var long []byte
	for {
		frag, err := r.br.ReadSlice('\n')
		switch {
		case err == bufio.ErrBufferFull:
			if len(long)+len(frag) > MaxEvent {
				return nil, fmt.Errorf("%w: line %d is over %d bytes", ErrMalformed, r.line+1, MaxEvent)
			}
			long = append(long, frag...)
			continue
		case err == io.EOF && len(frag) == 0 && len(long) == 0:
			return nil, io.EOF
		case err != nil && err != io.EOF:
			return nil, err
		}
		r.line++
		line := frag
		if long != nil {
			line = append(long, frag...)
		}
		line = bytes.TrimSuffix(line, []byte{'\n'})
		line = bytes.TrimSuffix(line, []byte{'\r'})
		return line, nil
	}
}

// clip shortens a line for an error message.
func clip(b []byte) string {
	const n = 80
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
