package sitemap

import (
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"fmt"
	"io"
	"net/url"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// cpuNow returns the CPU time this process has used, user and system,
// which the host's stealing of cores does not inflate as it does ns/op.
func cpuNow() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// loop runs body in b.Loop, and reports cpu-ns/op and the URLs of a
// 50,000-URL file read per second of CPU.
func loop(b *testing.B, body func()) {
	b.ReportAllocs()
	var cpu int64
	for b.Loop() {
		c := cpuNow()
		body()
		cpu += cpuNow() - c
	}
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(50_000*b.N)/(float64(cpu)/1e9), "urls/cpu-s")
}

// sitemap50k returns a <urlset> of 50,000 URLs, each with the fields a
// typical generator writes, about 10 MB.
func sitemap50k() []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	for i := range 50_000 {
		fmt.Fprintf(&b, "  <url>\n    <loc>https://www.example.com/products/category-%d/item-%d.html</loc>\n"+
			"    <lastmod>2026-%02d-%02dT10:%02d:00+00:00</lastmod>\n    <changefreq>weekly</changefreq>\n"+
			"    <priority>0.%d</priority>\n  </url>\n", i%100, i, i%12+1, i%28+1, i%60, i%10)
	}
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

// text50k returns a text sitemap of the same 50,000 URLs.
func text50k() []byte {
	var b bytes.Buffer
	for i := range 50_000 {
		fmt.Fprintf(&b, "https://www.example.com/products/category-%d/item-%d.html\n", i%100, i)
	}
	return b.Bytes()
}

var benchBase, _ = url.Parse("https://www.example.com/sitemap.xml")

// readCount reads body and returns its entries, failing b on an error.
func readCount(b *testing.B, body []byte, each func(int)) int {
	r := NewReader(bytes.NewReader(body), benchBase)
	n := 0
	for {
		_, err := r.Next()
		if err == io.EOF {
			return n
		}
		if err != nil {
			b.Fatal(err)
		}
		if n++; each != nil {
			each(n)
		}
	}
}

// BenchmarkReader reads 50,000 URLs: a gzipped <urlset>, the same
// uncompressed, and a text file. It reports URLs read per second.
func BenchmarkReader(b *testing.B) {
	xmlBody, txt := sitemap50k(), text50k()
	for _, bc := range []struct {
		name string
		body []byte
	}{{"urlset.gz", gz(xmlBody)}, {"urlset", xmlBody}, {"text.gz", gz(txt)}} {
		b.Run(bc.name, func(b *testing.B) {
			loop(b, func() {
				if n := readCount(b, bc.body, nil); n != 50_000 {
					b.Fatalf("read %d URLs; want 50,000", n)
				}
			})
		})
	}
}

// BenchmarkFloor is what BenchmarkReader cannot do without: decompress
// the gzipped <urlset>, and that plus encoding/xml's tokens with nothing
// done with them.
func BenchmarkFloor(b *testing.B) {
	body := gz(sitemap50k())
	b.Run("gunzip", func(b *testing.B) {
		loop(b, func() {
			zr, _ := gzip.NewReader(bytes.NewReader(body))
			io.Copy(io.Discard, zr)
		})
	})
	b.Run("gunzip+RawToken", func(b *testing.B) {
		loop(b, func() {
			zr, _ := gzip.NewReader(bytes.NewReader(body))
			d := xml.NewDecoder(zr)
			d.Strict = false
			for {
				if _, err := d.RawToken(); err != nil {
					break
				}
			}
		})
	})
}

// BenchmarkReaderPeakHeap reports the most heap in use while a Reader
// reads a file, above what was in use before, sampled every 1,000 entries
// after a collection: for the gzipped 50,000 URLs; a gzip bomb of 1 GB of
// white space; and a file of one text node of 50 MB, which the reader
// stops at 1 MiB. Run it with -benchtime 1x.
func BenchmarkReaderPeakHeap(b *testing.B) {
	huge := []byte("<urlset><url><loc>https://www.example.com/" + strings.Repeat("a", 50<<20) + "</loc></url></urlset>")
	for _, bc := range []struct {
		name string
		body []byte
	}{
		{"urlset.gz", gz(sitemap50k())},
		{"bomb.gz", gz(bytes.Repeat([]byte{' '}, 1<<30))},
		{"token.gz", gz(huge)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var ms runtime.MemStats
			peak := uint64(0)
			for b.Loop() {
				runtime.GC()
				runtime.ReadMemStats(&ms)
				before := ms.HeapAlloc
				sample := func() {
					runtime.GC()
					runtime.ReadMemStats(&ms)
					if ms.HeapAlloc > before {
						peak = max(peak, ms.HeapAlloc-before)
					}
				}
				r := NewReader(bytes.NewReader(bc.body), benchBase)
				for n := 1; ; n++ {
					if _, err := r.Next(); err != nil {
						break
					}
					if n%1000 == 0 {
						sample()
					}
				}
				sample()
				runtime.KeepAlive(r)
			}
			b.ReportMetric(float64(peak), "peak-heap-B")
		})
	}
}
