package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// verdictSites returns the demo's sites, and shop, news and flaky.
func verdictSites() (sites []*demoSite, shop, news, flaky *demoSite) {
	sites = demoSites(demoFast)
	return sites, sites[0], sites[1], sites[2]
}

func refusedRecord(s *demoSite, path string, atMs int) pageRecord {
	return pageRecord{URL: "http://" + s.ip + path, Host: s.ip, Blocked: "Disallow: x", At: at(atMs)}
}

func TestJudgeDisallowed(t *testing.T) {
	sites, shop, _, flaky := verdictSites()
	good := []pageRecord{refusedRecord(shop, "/calendar/2026/01/", 10), refusedRecord(flaky, "/tmp/cache", 20)}
	tests := []struct {
		name     string
		arrivals []arrival
		wire     []wireRequest
		records  []pageRecord
		wantOK   bool
		wantText string
	}{
		{"refused and never sent", []arrival{{site: shop, uri: "/calendar/"}}, []wireRequest{wreq(shop.ip, "/calendar/", 0, 1, 200)},
			good, true, "2 links to disallowed URLs were refused before the wire (shop 1, news 0, flaky 1)"},
		{"a server saw one", []arrival{{site: shop, uri: "/catalog/?sort=name"}}, nil,
			good, false, "shop/catalog/?sort=name"},
		{"the wire saw one", nil, []wireRequest{wreq(flaky.ip, "/tmp/x", 0, 1, 200)},
			good, false, "flaky/tmp/x"},
		{"an allowed URL refused", nil, nil,
			append(good, refusedRecord(shop, "/manuals/lamp.pdf", 30)), false, "URLs that robots.txt allows were refused"},
		{"nothing refused", nil, nil, nil, false, "nothing was tested"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := judgeDisallowed(evidence{sites: sites, siteOf: siteFinder(sites), arrivals: tt.arrivals, wire: tt.wire, records: tt.records})
			if v.ok != tt.wantOK || !strings.Contains(v.evidence, tt.wantText) {
				t.Errorf("judgeDisallowed = %v, %q; want %v and %q", v.ok, v.evidence, tt.wantOK, tt.wantText)
			}
		})
	}
}

func TestJudgeGaps(t *testing.T) {
	sites, shop, news, _ := verdictSites() // news has a Crawl-delay of 100ms
	floor := demoFloor(20*time.Millisecond, siteFinder(sites))
	tests := []struct {
		name     string
		wire     []wireRequest
		wantOK   bool
		wantText string
	}{
		{"all at least the pace", []wireRequest{
			wreq(shop.ip, "/robots.txt", 0, 1, 200), wreq(news.ip, "/robots.txt", 0, 1, 200),
			wreq(shop.ip, "/", 25, 26, 200), wreq(shop.ip, "/a", 45, 46, 200), wreq(news.ip, "/", 100, 101, 200),
		}, true, "3 gaps measured on the wire against paces of shop 20ms, news 100ms, flaky 20ms; the closest: 20ms for 20ms on 127.0.0.1"},
		{"a robots.txt fetch is held to the base delay", []wireRequest{
			wreq(news.ip, "/", 0, 1, 200), wreq(news.ip, "/robots.txt", 20, 21, 200), wreq(news.ip, "/a", 120, 121, 200),
		}, true, "the closest: 20ms for 20ms on 127.0.0.2"},
		{"shorter than the base delay", []wireRequest{
			wreq(shop.ip, "/", 0, 1, 200), wreq(news.ip, "/", 5, 6, 200), wreq(shop.ip, "/a", 19, 20, 200),
		}, false, "127.0.0.1 /a after /: 19ms < 20ms"},
		{"shorter than the Crawl-delay", []wireRequest{
			wreq(news.ip, "/robots.txt", 0, 1, 200), wreq(news.ip, "/", 99, 100, 200),
		}, false, "127.0.0.2 / after /robots.txt: 99ms < 100ms"},
		{"one request per host", []wireRequest{wreq(shop.ip, "/", 0, 1, 200), wreq(news.ip, "/", 0, 1, 200)}, false, "nothing was tested"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := judgeGaps(evidence{sites: sites, wire: tt.wire, floor: floor})
			if v.ok != tt.wantOK || !strings.Contains(v.evidence, tt.wantText) {
				t.Errorf("judgeGaps = %v, %q; want %v and %q", v.ok, v.evidence, tt.wantOK, tt.wantText)
			}
		})
	}
}

func TestJudgeRetryAfter(t *testing.T) {
	_, shop, news, _ := verdictSites()
	sent := sentRetryAfter{site: news, uri: "/live", status: 429, retryAfter: 8 * time.Second, at: at(1000)}
	tests := []struct {
		name     string
		sent     []sentRetryAfter
		arrivals []arrival
		wantOK   bool
		wantText string
	}{
		{"waited out", []sentRetryAfter{sent}, []arrival{{site: news, at: at(1000)}, {site: shop, at: at(2000)}, {site: news, at: at(9000)}},
			true, "news /live: 429 asked 8s, the next request came 8.000s later"},
		{"longer pause", []sentRetryAfter{sent}, []arrival{{site: news, at: at(10_500)}},
			true, "(the backoff pause was longer)"},
		{"too soon", []sentRetryAfter{sent}, []arrival{{site: shop, at: at(2000)}, {site: news, at: at(8999)}},
			false, "the next request came 7.999s later: TOO SOON"},
		{"nothing followed", []sentRetryAfter{sent}, nil, true, "nothing followed"},
		{"none sent", nil, nil, false, "nothing was tested"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := judgeRetryAfter(evidence{retryAfters: tt.sent, arrivals: tt.arrivals})
			if v.ok != tt.wantOK || !strings.Contains(v.evidence, tt.wantText) {
				t.Errorf("judgeRetryAfter = %v, %q; want %v and %q", v.ok, v.evidence, tt.wantOK, tt.wantText)
			}
		})
	}
}

func TestJudgeAdaptation(t *testing.T) {
	tests := []struct {
		name     string
		wire     []wireRequest
		wantOK   bool
		wantText string
	}{
		{"twice the latency", []wireRequest{wreq("h", "/slow", 0, 400, 200), wreq("x", "/", 100, 101, 200), wreq("h", "/next", 850, 851, 200)},
			true, "1 answers took 400ms or more; each next start came at least 2.12×"},
		{"too soon after a slow answer", []wireRequest{wreq("h", "/slow", 0, 400, 200), wreq("h", "/next", 799, 800, 200)},
			false, "h /slow took 400ms, the next start came 799ms after it"},
		{"no slow answer", []wireRequest{wreq("h", "/a", 0, 1, 200), wreq("h", "/b", 300, 301, 200)},
			false, "nothing was tested"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := judgeAdaptation(evidence{wire: tt.wire, slow: 400 * time.Millisecond})
			if v.ok != tt.wantOK || !strings.Contains(v.evidence, tt.wantText) {
				t.Errorf("judgeAdaptation = %v, %q; want %v and %q", v.ok, v.evidence, tt.wantOK, tt.wantText)
			}
		})
	}
}

func TestJudgeRecovery(t *testing.T) {
	sites, _, _, flaky := verdictSites()
	failed := wreq(flaky.ip, "/robots.txt", 0, 1, 503)
	recovered := wreq(flaky.ip, "/robots.txt", 6000, 6001, 200)
	tests := []struct {
		name     string
		wire     []wireRequest
		records  []pageRecord
		wantOK   bool
		wantText string
	}{
		{"recovered", []wireRequest{failed, recovered}, []pageRecord{refusedRecord(flaky, "/tmp/x", 6500)},
			true, "flaky's robots.txt answered 503, was fetched again 5.999s later and answered 200; its rules then refused 1 URLs"},
		{"never fetched again", []wireRequest{failed}, []pageRecord{refusedRecord(flaky, "/tmp/x", 6500)},
			false, "answered [503]"},
		{"rules never applied", []wireRequest{failed, recovered}, nil, false, "refused 0 URLs"},
		{"no 503", []wireRequest{recovered}, nil, false, "nothing was tested"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := judgeRecovery(evidence{sites: sites, siteOf: siteFinder(sites), wire: tt.wire, records: tt.records})
			if v.ok != tt.wantOK || !strings.Contains(v.evidence, tt.wantText) {
				t.Errorf("judgeRecovery = %v, %q; want %v and %q", v.ok, v.evidence, tt.wantOK, tt.wantText)
			}
		})
	}
}

func TestWriteVerdict(t *testing.T) {
	tests := []struct {
		name  string
		lines []verdictLine
		want  bool
	}{
		{"all hold", []verdictLine{{ok: true, claim: "a", evidence: "e"}, {ok: true, claim: "b"}}, true},
		{"one fails", []verdictLine{{ok: true, claim: "a"}, {ok: false, claim: "b", evidence: "why"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if got := writeVerdict(&buf, tt.lines); got != tt.want {
				t.Errorf("writeVerdict = %v; want %v", got, tt.want)
			}
			if strings.Contains(buf.String(), "FAIL") == tt.want {
				t.Errorf("output %q; FAIL shown = %v, want %v", buf.String(), !tt.want, !tt.want)
			}
		})
	}
}
