package audit

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
)

// maxLine is the longest line audit reads; a longer one is counted as
// unparsed, by its number, and skipped.
const maxLine = 64 << 10

// blockSize is how much of a log is read at once, ahead of the lines
// being judged, by a goroutine of its own.
const blockSize = 1 << 20

// ReadLog calls line for each line of the log r, without its line ending
// (LF or CR LF), with its number from 1; a log that starts with gzip's
// magic number is decompressed first, whatever its name. A line longer
// than 64 KiB is handed over cut to 64 KiB and a byte, enough for Line to
// tell that it is too long. A goroutine reads r ahead, a MiB at a time:
// with gzip, decompressing takes a core. When ctx ends, ReadLog stops
// after the block it is in and returns ctx's error.
func ReadLog(ctx context.Context, r io.Reader, line func(n int64, text []byte)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return err
		}
		return readLines(ctx, zr, line)
	}
	return readLines(ctx, br, line)
}

// readLines calls line for each line of r, without its line ending
// (LF or CR LF), with its number from 1. A line longer than maxLine is
// handed over cut to maxLine+1 bytes. A goroutine reads r ahead, a block
// at a time. When ctx ends, readLines stops after the block it is in and
// returns ctx's error.
func readLines(ctx context.Context, r io.Reader, line func(n int64, text []byte)) error {
	type block struct {
		buf []byte
		err error
	}
	blocks := make(chan block, 2)
	free := make(chan []byte, 3)
	for range cap(free) {
		free <- make([]byte, blockSize)
	}
	stop := make(chan struct{}) // the reader goroutine's end, when lines stop early
	defer close(stop)
	send := func(b block) bool {
		select {
		case blocks <- b:
			return true
		case <-stop:
			return false
		}
	}
	go func() {
		defer close(blocks)
		for {
			var buf []byte
			select {
			case buf = <-free:
			case <-stop:
				return
			}
			n, err := io.ReadFull(r, buf)
			if n > 0 && !send(block{buf: buf[:n]}) {
				return
			}
			switch {
			case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
				return
			case err != nil:
				send(block{err: err})
				return
			}
		}
	}()

	var n int64
	emit := func(text []byte) {
		n++
		if len(text) > 0 && text[len(text)-1] == '\r' {
			text = text[:len(text)-1]
		}
		line(n, text)
	}
	var carry []byte // a line that spans blocks, cut at maxLine+1 bytes
	var readErr error
	for b := range blocks {
		if b.err != nil {
			readErr = b.err
			continue
		}
		data := b.buf
		for len(data) > 0 {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				carry = appendCut(carry, data)
				break
			}
			if len(carry) > 0 {
				carry = appendCut(carry, data[:i])
				emit(carry)
				carry = carry[:0]
			} else {
				emit(data[:i])
			}
			data = data[i+1:]
		}
		free <- b.buf[:cap(b.buf)]
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if len(carry) > 0 {
		emit(carry)
	}
	return readErr
}

// appendCut appends b to line, up to maxLine+1 bytes in all: enough to
// tell that the line is too long.
func appendCut(line, b []byte) []byte {
	return append(line, b[:min(len(b), max(maxLine+1-len(line), 0))]...)
}
