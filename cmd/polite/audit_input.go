package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"sync/atomic"
)

// maxLine is the longest line audit reads; a longer one is counted as
// unparsed, by its number, and skipped.
const maxLine = 64 << 10

// blockSize is how much of a log is read at once, ahead of the lines
// being judged, by a goroutine of its own: with gzip, decompressing
// takes a core.
const blockSize = 1 << 20

// auditStdin is what a LOG of "-" reads: standard input, or a test's.
var auditStdin io.Reader = os.Stdin

// openLog opens the log name, "-" for standard input, and decompresses it
// when it starts with gzip's magic number, whatever its name. read counts
// the bytes read from the file, compressed or not, for the progress line.
func openLog(name string, read *atomic.Int64) (r io.Reader, closeFn func() error, err error) {
	var src io.Reader = auditStdin
	closeFn = func() error { return nil }
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, nil, err
		}
		src, closeFn = f, f.Close
	}
	br := bufio.NewReaderSize(countingReader{src, read}, 64<<10)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			closeFn()
			return nil, nil, err
		}
		return zr, closeFn, nil
	}
	return br, closeFn, nil
}

// logSize returns the size of the log name, or -1 when it is not a
// regular file, as standard input may not be.
func logSize(name string) int64 {
	if name == "-" {
		f, ok := auditStdin.(*os.File)
		if !ok {
			return -1
		}
		name = f.Name()
	}
	fi, err := os.Stat(name)
	if err != nil || !fi.Mode().IsRegular() {
		return -1
	}
	return fi.Size()
}

type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
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
