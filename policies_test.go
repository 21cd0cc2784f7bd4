package polite

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/polite-go/polite/pace"
)

// TestPacingRulesPace checks end to end, on the fake clock, that a rule
// paces its host by its own policy and leaves the others the transport's:
// a link checker that calls one host once a minute and the rest ten times
// a second, two of them at once.
func TestPacingRulesPace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
			if r.URL.Host == "www.wide.example" {
				time.Sleep(time.Second) // in flight a while
			}
			return respond(r, 200, "ok"), nil
		}}
		tr := New(base, WithRobotsMode(RobotsOff),
			WithPacing(pace.Policy{BaseDelay: 100 * time.Millisecond, Jitter: pace.None, LatencyFactor: pace.None}),
			WithPacingRules(
				PacingRule{Host: "slow.example", Policy: pace.Policy{BaseDelay: time.Minute}},
				PacingRule{Domain: "wide.example", Policy: pace.Policy{MaxInFlight: 2, BaseDelay: pace.None}},
			))
		t0 := time.Now()
		var wg sync.WaitGroup
		for _, host := range []string{"slow.example", "fast.example", "www.wide.example"} {
			for i := range 3 {
				wg.Go(func() {
					time.Sleep(time.Duration(i) * time.Millisecond) // in order
					resp, err := get(tr, "http://"+host+"/", "")
					if err != nil {
						t.Error(err)
						return
					}
					resp.Body.Close()
				})
			}
		}
		wg.Wait()
		starts := map[string][]time.Duration{}
		for _, h := range base.hitList() {
			starts[h.url] = append(starts[h.url], h.at.Sub(t0).Truncate(time.Millisecond))
		}
		for url, want := range map[string][]time.Duration{
			"http://slow.example/":     {0, time.Minute, 2 * time.Minute},
			"http://fast.example/":     {0, 100 * time.Millisecond, 200 * time.Millisecond},
			"http://www.wide.example/": {0, time.Millisecond, time.Second}, // two in flight, no base delay
		} {
			if got := starts[url]; !slices.Equal(got, want) {
				t.Errorf("starts of %s: %v; want %v", url, got, want)
			}
		}
	})
}

// TestPoliciesShown checks that Check, Ready and Stats show the policy in
// force for a key, and that a pace.Pacer of WithPacer gets the overrides.
func TestPoliciesShown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		def := pace.Policy{Jitter: pace.None}.Effective()
		slow := def
		slow.BaseDelay, slow.MaxBandwidth = time.Minute, 1000
		var got pace.Config
		tr := New(site(""), WithPacing(pace.Policy{Jitter: pace.None}), WithRobotsMode(RobotsOff),
			WithPacingRules(PacingRule{Domain: "slow.example", Policy: pace.Policy{BaseDelay: time.Minute, MaxBandwidth: 1000}}),
			WithPacer(func(ps pace.Config) pace.Pacer {
				got = ps
				p, err := pace.NewMemory(ps)
				if err != nil {
					t.Fatal(err)
				}
				return p
			}))
		if p, err := got.For("www.slow.example"); p != slow || err != nil {
			t.Errorf("the Pacer's policy of www.slow.example: %+v, %v; want %+v", p, err, slow)
		}
		if p, err := got.For("other.example"); p != def || got.Policy != def || err != nil {
			t.Errorf("the Pacer's policy of other.example: %+v, %v, default %+v; want %+v", p, err, got.Policy, def)
		}
		for _, c := range []struct {
			url  string
			want pace.Policy
		}{{"http://www.slow.example/", slow}, {"http://other.example/", def}} {
			req, _ := http.NewRequest("GET", c.url, nil)
			d, err := tr.Check(req)
			if err != nil || d.Policy != c.want || d.Pace != c.want.BaseDelay {
				t.Errorf("Check(%s): policy %+v, pace %v, %v; want %+v", c.url, d.Policy, d.Pace, err, c.want)
			}
			r, err := tr.Ready(req)
			if err != nil || r.Policy != c.want {
				t.Errorf("Ready(%s): policy %+v, %v; want %+v", c.url, r.Policy, err, c.want)
			}
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		for _, s := range statsOf(t, tr) {
			want := map[string]pace.Policy{"www.slow.example": slow, "other.example": def}[s.Key]
			if s.Policy != want {
				t.Errorf("Stats of %s: policy %+v; want %+v", s.Key, s.Policy, want)
			}
		}
	})
}

// TestPacingFuncMemo checks that the in-memory pacer asks WithPacingFunc's
// function for a key's policy when it first keeps the key, and keeps it;
// the transport asks once a request.
func TestPacingFuncMemo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		asked := map[string]int{}
		tr := New(site(""), WithRobotsMode(RobotsOff), WithPacing(pace.Policy{BaseDelay: pace.None, Jitter: pace.None}),
			WithPacingFunc(func(key string) (pace.Policy, bool) {
				mu.Lock()
				asked[key]++
				mu.Unlock()
				return pace.Policy{BaseDelay: time.Duration(len(key)) * time.Second}, key != "x.example"
			}))
		t0 := time.Now()
		for range 3 {
			for _, h := range []string{"a.example", "bb.example", "x.example"} {
				resp, err := get(tr, "http://"+h+"/", "")
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
			}
		}
		if d := time.Since(t0); d != 2*10*time.Second {
			t.Errorf("three rounds took %v; want 20s, two gaps of bb.example's 10s", d)
		}
		if fmt.Sprint(asked) != "map[a.example:4 bb.example:4 x.example:4]" {
			t.Errorf("asked %v; want each key once a request and once by the pacer", asked)
		}
	})
}
