package polite_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/pace"
	"github.com/polite-go/polite/robotstxt"
)

// A crawler that gathers training data declares it with WithUsage: the
// site's robots.txt lets it fetch every page, but asks that only those
// under /ai-ok/ be used to train AI models, so the others are refused
// before they are sent.
func ExampleWithUsage() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nAllow: /\nContent-Usage: train-ai=n\nContent-Usage: /ai-ok/ train-ai=y\n")
			return
		}
		w.Header().Set("Content-Usage", "search=y")
		fmt.Fprint(w, "content")
	}))
	defer site.Close()

	tr := polite.New(nil,
		polite.WithUserAgent("TrainBot/1.0 (+https://example.com/bot)"),
		polite.WithPacing(pace.Policy{BaseDelay: pace.None}),
		polite.WithUsage(polite.RobotsEnforce, robotstxt.TrainAI))
	client := &http.Client{Transport: tr}

	for _, path := range []string{"/ai-ok/essay", "/essay"} {
		resp, err := client.Get(site.URL + path)
		if errors.Is(err, polite.ErrRobotsBlocked) {
			fmt.Println(path, "refused: train-ai=n")
			continue
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		resp.Body.Close()
		pref, _ := tr.ResponseUsage(resp) // robots.txt's and the response's own
		fmt.Println(path, resp.Status, pref)
	}
	// Output:
	// /ai-ok/essay 200 OK train-ai=y, search=y
	// /essay refused: train-ai=n
}
