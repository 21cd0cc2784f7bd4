package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The local site runs in a child process, so that the CPU time the parent
// measures with getrusage is the crawler's alone. It answers on loopback for
// any host name: the parent's transports dial every name to its addresses.

// siteConfig is what the site serves; the parent sets it before each run.
type siteConfig struct {
	// Robots holds robots.txt bodies by "scheme://host", then by host, then
	// by "" for every other host. A host with none gets 404.
	Robots map[string]string
	// PageBytes is the size of every page.
	PageBytes int
	// TooMany answers the first N page requests to a host with 429.
	TooMany map[string]int
	// RetryAfter is the Retry-After header of those answers, in seconds.
	RetryAfter int
	// Record makes the site log every request it receives.
	Record bool
	// WebPages, when not 0, makes every host a web of that many pages,
	// /p/0 to /p/N-1, instead of PageBytes of text: page i links to pages
	// i+1 and i+2 of its host, and to page i+1 of two other hosts of the
	// WebHosts named h0.test to h<WebHosts-1>.test.
	WebPages int
	WebHosts int
}

// arrival is one request as the site received it.
type arrival struct {
	Scheme string
	Host   string
	Path   string
	At     time.Duration // since the site started, on its monotonic clock
	Status int
}

// siteServer is the child's side.
type siteServer struct {
	start time.Time

	mu      sync.Mutex // guards the fields below
	cfg     siteConfig
	page    []byte
	log     []arrival
	tooMany map[string]int // 429s sent so far, by host
}

// serveSite runs the site until its standard input closes: it prints its
// addresses as one JSON line, then serves.
func serveSite() error {
	s := &siteServer{start: time.Now(), tooMany: map[string]int{}}
	plain := httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	plain.Config.ErrorLog = nil
	plain.Start()
	secure := httptest.NewTLSServer(http.HandlerFunc(s.serve))
	admin := httptest.NewServer(http.HandlerFunc(s.admin))
	defer plain.Close()
	defer secure.Close()
	defer admin.Close()
	addrs := map[string]string{
		"http":  plain.Listener.Addr().String(),
		"https": secure.Listener.Addr().String(),
		"admin": admin.Listener.Addr().String(),
	}
	if err := json.NewEncoder(os.Stdout).Encode(addrs); err != nil {
		return err
	}
	_, err := io.Copy(io.Discard, os.Stdin) // until the parent goes away
	return err
}

func (s *siteServer) serve(w http.ResponseWriter, r *http.Request) {
	at := time.Since(s.start)
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}

	s.mu.Lock()
	status, body, retryAfter := http.StatusOK, s.page, 0
	if r.URL.Path == "/robots.txt" {
		status, body = http.StatusNotFound, nil
		for _, key := range []string{scheme + "://" + host, host, ""} {
			if robots, ok := s.cfg.Robots[key]; ok {
				status, body = http.StatusOK, []byte(robots)
				break
			}
		}
	} else if s.tooMany[host] < s.cfg.TooMany[host] {
		s.tooMany[host]++
		status, body, retryAfter = http.StatusTooManyRequests, nil, s.cfg.RetryAfter
	}
	if s.cfg.Record {
		s.log = append(s.log, arrival{Scheme: scheme, Host: host, Path: r.URL.Path, At: at, Status: status})
	}
	s.mu.Unlock()

	if s.cfg.WebPages > 0 && status == http.StatusOK && r.URL.Path != "/robots.txt" {
		status, body = s.cfg.webPage(host, r.URL.Path)
	}
	if retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

// webPage returns page path of host in the web that cfg describes, or 404.
func (cfg siteConfig) webPage(host, path string) (int, []byte) {
	h, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(host, "h"), ".test"))
	i, err2 := strconv.Atoi(strings.TrimPrefix(path, "/p/"))
	if err != nil || err2 != nil || h < 0 || h >= cfg.WebHosts || i < 0 || i >= cfg.WebPages {
		return http.StatusNotFound, nil
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "<!doctype html><html><head><title>h%d page %d</title></head><body>\n", h, i)
	link := func(h, i int) {
		if i < cfg.WebPages {
			fmt.Fprintf(&b, "<a href=\"http://h%d.test/p/%d\">page %d</a>\n", h%cfg.WebHosts, i, i)
		}
	}
	link(h, i+1)
	link(h, i+2)
	link(h+1, i+1)
	link(h+cfg.WebHosts/2+1, i+1)
	b.WriteString("</body></html>\n")
	return http.StatusOK, b.Bytes()
}

// admin answers PUT /config with a siteConfig, and GET /log with the
// arrivals logged since the last GET /log.
func (s *siteServer) admin(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/config":
		var cfg siteConfig
		if err := json.NewDecoder(r.Body).Decode(&cfg); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		page := bytes.Repeat([]byte("<p>polite bench page</p>\n"), cfg.PageBytes/25+1)[:cfg.PageBytes]
		s.mu.Lock()
		s.cfg, s.page, s.log, s.tooMany = cfg, page, nil, map[string]int{}
		s.mu.Unlock()
	case "/log":
		s.mu.Lock()
		log := s.log
		s.log = nil
		s.mu.Unlock()
		json.NewEncoder(w).Encode(log)
	default:
		http.NotFound(w, r)
	}
}

// site is the parent's handle on the child.
type site struct {
	cmd                   *exec.Cmd
	stdin                 io.Closer
	http, https, adminURL string
}

// startSite starts the site in a child process running this program.
func startSite() (*site, error) { return startSiteOn("") }

// startSiteOn starts the site on the CPUs cpus lists, in taskset's syntax
// ("1", "0-1"), or on any CPU when cpus is "".
func startSiteOn(cpus string) (*site, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "serve")
	if cpus != "" {
		cmd = exec.Command("taskset", "-c", cpus, exe, "serve")
	}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	var addrs map[string]string
	if err := json.NewDecoder(bufio.NewReader(stdout)).Decode(&addrs); err != nil {
		stdin.Close()
		cmd.Wait()
		return nil, fmt.Errorf("site: reading its addresses: %v", err)
	}
	return &site{cmd: cmd, stdin: stdin, http: addrs["http"], https: addrs["https"], adminURL: "http://" + addrs["admin"]}, nil
}

// close stops the child: it exits when its standard input closes.
func (s *site) close() {
	s.stdin.Close()
	s.cmd.Wait()
}

func (s *site) configure(cfg siteConfig) error {
	body, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	req, err := http.NewRequest(http.MethodPut, s.adminURL+"/config", bytes.NewReader(body))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("site: configure: %s: %s", resp.Status, msg)
	}
	return nil
}

// arrivals returns what the site logged since the last call.
func (s *site) arrivals() ([]arrival, error) {
	resp, err := http.Get(s.adminURL + "/log")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var log []arrival
	err = json.NewDecoder(resp.Body).Decode(&log)
	return log, err
}

// transport returns a fresh base transport that reaches the site for every
// host name: http to its plain address, https to its TLS one. Idle
// connections are kept for every host, so that a run across many hosts
// measures requests, not dials.
func (s *site) transport() *http.Transport {
	var d net.Dialer
	return &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			target := s.http
			if strings.HasSuffix(addr, ":443") {
				target = s.https
			}
			return d.DialContext(ctx, network, target)
		},
		// The site's certificate is httptest's own, for another name; this
		// transport only ever reaches the child on loopback.
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: true},
		MaxIdleConns:        0, // no limit across hosts
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     time.Minute,
	}
}
