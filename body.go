package polite

import (
	"io"
)

// drainBytes is how much of a body is read before closing it, so that a
// short remainder lets the connection be reused while a huge one is not
// downloaded.
const drainBytes = 4 << 10

// closeBody reads a short remainder of body, so the connection can be
// reused, and closes it.
func closeBody(body io.ReadCloser) {
	io.CopyN(io.Discard, body, drainBytes)
	body.Close()
}
