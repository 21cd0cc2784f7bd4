package politesdk_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-github/v89/github"
	"github.com/polite-go/polite"
	"github.com/polite-go/polite/pace"
	politesdk "github.com/polite-go/polite/sdk"
)

// fakeGitHub behaves like GitHub's REST API for what these tests need:
// GET /users/{name} counts against the "core" resource, GET
// /search/repositories against "search"; each response carries the
// X-RateLimit-* fields of the token's quota of that resource. Responses
// come from answer when it gives one.
type fakeGitHub struct {
	mu     sync.Mutex
	quota  map[string]map[string]int // token, resource: remaining
	limit  map[string]int            // resource: limit
	reset  map[string]time.Time      // resource: the window's end
	answer func(w http.ResponseWriter, r *http.Request, n int) bool
	n      int
}

func newFakeGitHub() *fakeGitHub {
	return &fakeGitHub{
		quota: map[string]map[string]int{},
		limit: map[string]int{"core": 5000, "search": 30},
		reset: map[string]time.Time{},
	}
}

// set sets token's remaining quota of resource, until the window ends in
// reset.
func (f *fakeGitHub) set(token, resource string, remaining int, reset time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.quota[token] == nil {
		f.quota[token] = map[string]int{}
	}
	f.quota[token][resource] = remaining
	f.reset[resource] = time.Now().Add(reset)
}

func (f *fakeGitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.n++
	n := f.n
	f.mu.Unlock()
	if f.answer != nil && f.answer(w, r, n) {
		return
	}
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	resource := "core"
	if strings.HasPrefix(r.URL.Path, "/search/") {
		resource = "search"
	}
	f.mu.Lock()
	if f.quota[token] == nil {
		f.quota[token] = map[string]int{}
	}
	left, ok := f.quota[token][resource]
	if !ok {
		left = f.limit[resource]
	}
	reset, ok := f.reset[resource]
	if !ok || !reset.After(time.Now()) {
		reset = time.Now().Add(time.Hour)
	}
	if left > 0 {
		left--
		f.quota[token][resource] = left
	}
	f.mu.Unlock()
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-RateLimit-Limit", strconv.Itoa(f.limit[resource]))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(left))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
	h.Set("X-RateLimit-Resource", resource)
	if resource == "search" {
		fmt.Fprint(w, `{"total_count":0,"incomplete_results":false,"items":[]}`)
		return
	}
	fmt.Fprintf(w, `{"login":%q}`, strings.TrimPrefix(r.URL.Path, "/users/"))
}

// secondaryLimit answers as GitHub does when a secondary rate limit is
// hit: a 403 whose body links to the documentation of those limits, with
// the fields given.
func secondaryLimit(w http.ResponseWriter, fields ...string) {
	for i := 0; i < len(fields); i += 2 {
		w.Header().Set(fields[i], fields[i+1])
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusForbidden)
	fmt.Fprint(w, `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",`+
		`"documentation_url":"https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`)
}

// githubClient returns a go-github client of token that sends its
// requests through tr to the fake, as its users build it.
func githubClient(t *testing.T, tr http.RoundTripper, token string) *github.Client {
	t.Helper()
	base := "http://api.github.test/"
	c, err := github.NewClient(github.WithTransport(tr), github.WithAuthToken(token), github.WithURLs(&base, &base))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The recipe's transport: APIDefaults, quotas partitioned by token and
// resource, and GitHub's secondary limits given their minute.
func githubTransport(s *server) *polite.PoliteTransport {
	return polite.New(politesdk.GitHubSecondaryLimits(s), polite.APIDefaults(), polite.WithQuotaPartition(politesdk.GitHubPartition))
}

// TestGitHubSecondaryLimit checks that GitHub's secondary rate limit
// holds the host, whatever the status it comes with: the next call, from
// another client of the same token through the same transport (go-github
// holds only the client that got the 403), reaches the server no sooner
// than the limit allows.
func TestGitHubSecondaryLimit(t *testing.T) {
	tests := []struct {
		name   string
		fields []string
		want   time.Duration // from the 403 to the next request the server sees
	}{
		{"403 with Retry-After", []string{"Retry-After", "3"}, 3 * time.Second},
		{"429 with Retry-After", []string{"Retry-After", "5"}, 5 * time.Second},
		{"403 with no quota left", []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "epoch+8"}, 8 * time.Second},
		{"403 with neither: at least a minute", nil, time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				toPresent()
				fake := newFakeGitHub()
				fake.answer = func(w http.ResponseWriter, r *http.Request, n int) bool {
					if n > 1 {
						return false
					}
					fields := append([]string(nil), tt.fields...)
					for i := range fields {
						if rest, ok := strings.CutPrefix(fields[i], "epoch+"); ok {
							secs, _ := strconv.Atoi(rest)
							fields[i] = strconv.FormatInt(time.Now().Add(time.Duration(secs)*time.Second).Unix(), 10)
						}
					}
					if tt.name == "429 with Retry-After" {
						w.Header().Set("Retry-After", "5")
						w.WriteHeader(http.StatusTooManyRequests)
						return true
					}
					secondaryLimit(w, fields...)
					return true
				}
				s := &server{handler: fake}
				tr := githubTransport(s)
				ctx := context.Background()
				_, _, err := githubClient(t, tr, "A").Users.Get(ctx, "octocat")
				var abuse *github.AbuseRateLimitError
				var primary *github.RateLimitError
				if !errors.As(err, &abuse) && !errors.As(err, &primary) && tt.name != "429 with Retry-After" {
					t.Fatalf("first call: %v; want a rate-limit error", err)
				}
				limited := time.Now()
				if _, _, err := githubClient(t, tr, "A").Users.Get(ctx, "octocat"); err != nil {
					t.Fatal(err)
				}
				hits := s.log()
				if got := hits[len(hits)-1].at.Sub(limited); got != tt.want {
					t.Errorf("the next call reached the server %v after the limit; want %v", got, tt.want)
				}
			})
		})
	}
}

// TestGitHubQuotaPartitions checks that through one shared transport, as
// the README advises, a quota holds only the calls that would spend it:
// one token's empty quota holds none of another token's calls, and the
// search resource's holds no core call; while GitHub's primary limit still
// holds its own calls until the reset.
func TestGitHubQuotaPartitions(t *testing.T) {
	type call struct {
		token  string
		search bool
	}
	tests := []struct {
		name        string
		token       string // whose quota is set
		resource    string
		remaining   int
		reset       time.Duration
		first, then call
		wantGap     time.Duration // from the first call's response to the second's start
	}{
		{"token A's empty quota, token B's call", "A", "core", 0, 6 * time.Second, call{"A", false}, call{"B", false}, 0},
		{"token A's empty quota, token A's call", "A", "core", 0, 6 * time.Second, call{"A", false}, call{"A", false}, 6 * time.Second},
		{"empty search quota, a core call", "A", "search", 0, 9 * time.Second, call{"A", true}, call{"A", false}, 0},
		{"empty search quota, a search call", "A", "search", 0, 9 * time.Second, call{"A", true}, call{"A", true}, 9 * time.Second},
		{"low search quota, a core call", "A", "search", 3, 7 * time.Second, call{"A", true}, call{"A", false}, 0},
		{"low search quota, a search call", "A", "search", 3, 7 * time.Second, call{"A", true}, call{"A", true}, 7 * time.Second / 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				toPresent()
				fake := newFakeGitHub()
				fake.set(tt.token, tt.resource, tt.remaining, tt.reset)
				s := &server{handler: fake}
				tr := githubTransport(s)
				clients := map[string]*github.Client{"A": githubClient(t, tr, "A"), "B": githubClient(t, tr, "B")}
				do := func(c call) {
					ctx := context.Background()
					var err error
					if c.search {
						_, _, err = clients[c.token].Search.Repositories(ctx, "polite", nil)
					} else {
						_, _, err = clients[c.token].Users.Get(ctx, "octocat")
					}
					var primary *github.RateLimitError
					if err != nil && !errors.As(err, &primary) {
						t.Fatal(err)
					}
				}
				do(tt.first)
				answered := time.Now()
				// go-github holds a client that saw a limit itself; a client
				// of its own for the second call, as a program with one per
				// worker has, shows what polite holds.
				clients[tt.then.token] = githubClient(t, tr, tt.then.token)
				do(tt.then)
				hits := s.log()
				got := hits[len(hits)-1].at.Sub(answered)
				if got != tt.wantGap {
					t.Errorf("second call reached the server %v after the first's response; want %v", got, tt.wantGap)
				}
			})
		})
	}
}

// TestGitHubRefusalVisible checks that a call polite cannot start before
// its context's deadline fails at once, with polite's *DeadlineError
// visible through go-github's error, and that nothing is sent.
func TestGitHubRefusalVisible(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		toPresent()
		fake := newFakeGitHub()
		fake.answer = func(w http.ResponseWriter, r *http.Request, n int) bool {
			if n == 1 {
				secondaryLimit(w, "Retry-After", "30")
				return true
			}
			return false
		}
		s := &server{handler: fake}
		tr := githubTransport(s)
		githubClient(t, tr, "A").Users.Get(context.Background(), "octocat")
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		asked := time.Now()
		_, _, err := githubClient(t, tr, "A").Users.Get(ctx, "octocat")
		var late *pace.DeadlineError
		if !errors.As(err, &late) || !politesdk.Refused(err) || time.Since(asked) != 0 {
			t.Errorf("call: %v after %v; want a *pace.DeadlineError at once", err, time.Since(asked))
		}
		if n := len(s.log()); n != 1 {
			t.Errorf("the server saw %d requests; want 1", n)
		}
	})
}

// TestGitHubConcurrency checks that APIDefaults caps nothing the server
// did not ask for: 20 calls made at once are all in flight at once.
func TestGitHubConcurrency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		toPresent()
		const n = 20
		b := newBarrier(n)
		fake := newFakeGitHub()
		fake.answer = func(w http.ResponseWriter, r *http.Request, _ int) bool { b.wait(); return false }
		s := &server{handler: fake}
		client := githubClient(t, githubTransport(s), "A")
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				if _, _, err := client.Users.Get(context.Background(), "octocat"); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if got := s.maxInFlight(); got != n {
			t.Errorf("%d calls in flight at once; want all %d", got, n)
		}
	})
}
