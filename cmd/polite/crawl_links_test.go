package main

import (
	"slices"
	"strings"
	"testing"
)

func TestExtractLinks(t *testing.T) {
	doc := mustParse(t, "http://example.com/dir/page.html")
	tests := []struct {
		name string
		html string
		want []string
	}{
		{
			name: "anchors resolved",
			html: `<a href="a">1</a><a href="/b">2</a><a href="../c?x=1">3</a><a href="//other.example/d">4</a>`,
			want: []string{"http://example.com/dir/a", "http://example.com/b", "http://example.com/c?x=1", "http://other.example/d"},
		},
		{
			name: "fragments dropped, duplicates once",
			html: `<a href="#top">1</a><a href="a#x">2</a><a href="a#y">3</a><a href="a">4</a>`,
			want: []string{"http://example.com/dir/page.html", "http://example.com/dir/a"},
		},
		{
			name: "canonical links, not other links",
			html: `<head><link rel="stylesheet" href="/s.css"><link rel="Canonical" href="/canon"><link rel="alternate canonical" href="/alt"><link rel="icon" href="/i.png"></head>`,
			want: []string{"http://example.com/canon", "http://example.com/alt"},
		},
		{
			name: "no images, scripts or frames",
			html: `<img src="/i.png"><script src="/s.js"></script><iframe src="/f"></iframe><area href="/map"><a>no href</a>`,
			want: []string{},
		},
		{
			name: "only http and https",
			html: `<a href="mailto:a@b.c">m</a><a href="javascript:void(0)">j</a><a href="ftp://x/y">f</a><a href="HTTPS://Example.COM/Z">h</a>`,
			want: []string{"https://example.com/Z"},
		},
		{
			name: "base href",
			html: `<head><base href="http://cdn.example/root/"><base href="/ignored/"></head><a href="x">x</a>`,
			want: []string{"http://cdn.example/root/x"},
		},
		{
			name: "base after the links still applies",
			html: `<a href="x">x</a><base href="/other/">`,
			want: []string{"http://example.com/other/x"},
		},
		{
			name: "broken markup",
			html: `<a href="a"><p><a href='b'<a href=c>`,
			want: []string{"http://example.com/dir/a", "http://example.com/dir/b"},
		},
		{
			name: "unparsable href skipped",
			html: `<a href="http://[::1">bad</a><a href=" ok ">ok</a>`,
			want: []string{"http://example.com/dir/ok"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := extractLinks(strings.NewReader(tt.html), doc)
			if !slices.Equal(got, tt.want) {
				t.Errorf("extractLinks = %q; want %q", got, tt.want)
			}
		})
	}
}

func TestIsHTML(t *testing.T) {
	tests := []struct {
		contentType string
		want        bool
	}{
		{"text/html", true},
		{"text/html; charset=utf-8", true},
		{"TEXT/HTML", true},
		{"application/xhtml+xml", true},
		{"text/plain", false},
		{"application/pdf", false},
		{"", false},
		{"text/html;;", false},
	}
	for _, tt := range tests {
		if got := isHTML(tt.contentType); got != tt.want {
			t.Errorf("isHTML(%q) = %v; want %v", tt.contentType, got, tt.want)
		}
	}
}
