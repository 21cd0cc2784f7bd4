package politesdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/polite-go/polite"
	"github.com/polite-go/polite/pace"
	politesdk "github.com/polite-go/polite/sdk"
)

// fakeOpenAI behaves like OpenAI's chat completions for what these tests
// need: it checks that each request's body is whole, then answers with
// the fields answer sets (none by default) and a completion, or with the
// status answer returns.
type fakeOpenAI struct {
	t      *testing.T
	mu     sync.Mutex
	n      int
	answer func(h http.Header, n int) int // the status of the n-th request, 1-based
}

func (f *fakeOpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Model    string `json:"model"`
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	if b, err := io.ReadAll(r.Body); err != nil || json.Unmarshal(b, &body) != nil || len(body.Messages) != 1 || body.Messages[0].Content != "hello" {
		f.t.Errorf("request body %+v (%v): not whole", body, err)
	}
	f.mu.Lock()
	f.n++
	n := f.n
	f.mu.Unlock()
	status := http.StatusOK
	if f.answer != nil {
		status = f.answer(w.Header(), n)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if status != http.StatusOK {
		fmt.Fprint(w, `{"error":{"message":"try again","type":"server_error"}}`)
		return
	}
	fmt.Fprint(w, `{"id":"chatcmpl-1","object":"chat.completion","created":0,"model":"gpt-4o-mini",`+
		`"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`)
}

// openAIClient returns an openai-go client that sends its requests
// through tr to the fake, with the recipe's middleware.
func openAIClient(tr http.RoundTripper) openai.Client {
	return openai.NewClient(
		option.WithAPIKey("sk-test"),
		option.WithBaseURL("http://api.openai.test/v1/"),
		option.WithHTTPClient(&http.Client{Transport: tr}),
		option.WithMiddleware(politesdk.OpenAIStopOnRefusal),
	)
}

// chat makes one chat completion.
func chat(ctx context.Context, c openai.Client) error {
	_, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:    openai.ChatModelGPT4oMini,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hello")},
	})
	return err
}

// TestOpenAIFields checks that OpenAI's rate-limit fields hold the next
// call until their reset, and that its retry-after-ms is the wait of a
// retry: each row's first response carries the fields, and the row gives
// the gap from it to the next request the server sees.
func TestOpenAIFields(t *testing.T) {
	tests := []struct {
		name   string
		status int // of the first response: a 429 is retried by openai-go
		fields []string
		want   time.Duration
	}{
		{"no requests left", 200, []string{"X-Ratelimit-Limit-Requests", "60", "X-Ratelimit-Remaining-Requests", "0", "X-Ratelimit-Reset-Requests", "3s"}, 3 * time.Second},
		{"no requests left for minutes", 200, []string{"X-Ratelimit-Remaining-Requests", "0", "X-Ratelimit-Reset-Requests", "6m0s"}, 6 * time.Minute},
		{"no tokens left", 200, []string{
			"X-Ratelimit-Limit-Requests", "60", "X-Ratelimit-Remaining-Requests", "59", "X-Ratelimit-Reset-Requests", "1s",
			"X-Ratelimit-Limit-Tokens", "150000", "X-Ratelimit-Remaining-Tokens", "0", "X-Ratelimit-Reset-Tokens", "20ms"}, 20 * time.Millisecond},
		{"ample quota", 200, []string{
			"X-Ratelimit-Limit-Requests", "60", "X-Ratelimit-Remaining-Requests", "59", "X-Ratelimit-Reset-Requests", "1s",
			"X-Ratelimit-Limit-Tokens", "150000", "X-Ratelimit-Remaining-Tokens", "149000", "X-Ratelimit-Reset-Tokens", "6m0s"}, 0},
		{"429 with retry-after-ms", 429, []string{"Retry-After-Ms", "200"}, 200 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fake := &fakeOpenAI{t: t, answer: func(h http.Header, n int) int {
					if n > 1 {
						return http.StatusOK
					}
					for i := 0; i < len(tt.fields); i += 2 {
						h.Set(tt.fields[i], tt.fields[i+1])
					}
					return tt.status
				}}
				s := &server{handler: fake}
				client := openAIClient(polite.New(s, polite.APIDefaults()))
				ctx := context.Background()
				if err := chat(ctx, client); err != nil {
					t.Fatal(err)
				}
				if tt.status == http.StatusOK {
					if err := chat(ctx, client); err != nil {
						t.Fatal(err)
					}
				}
				hits := s.log()
				if len(hits) != 2 {
					t.Fatalf("the server saw %d requests; want 2", len(hits))
				}
				if got := hits[1].at.Sub(hits[0].at); got != tt.want {
					t.Errorf("second request %v after the first; want %v", got, tt.want)
				}
			})
		})
	}
}

// TestOpenAIRefusal checks that openai-go stops at once on polite's
// refusal, with the recipe's middleware: a call whose context ends before
// the key's quota resets fails at once with a *pace.DeadlineError, sends
// nothing, and is not retried.
func TestOpenAIRefusal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := &fakeOpenAI{t: t, answer: func(h http.Header, n int) int {
			h.Set("X-Ratelimit-Remaining-Requests", "0")
			h.Set("X-Ratelimit-Reset-Requests", "30s")
			return http.StatusOK
		}}
		s := &server{handler: fake}
		client := openAIClient(polite.New(s, polite.APIDefaults()))
		if err := chat(context.Background(), client); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		asked := time.Now()
		err := chat(ctx, client)
		var late *pace.DeadlineError
		if !errors.As(err, &late) || !errors.Is(err, context.DeadlineExceeded) || time.Since(asked) != 0 {
			t.Errorf("call: %v after %v; want a *pace.DeadlineError at once", err, time.Since(asked))
		}
		if n := len(s.log()); n != 1 {
			t.Errorf("the server saw %d requests; want 1", n)
		}
	})
}

// TestOpenAIServerError checks that a 500 without a Retry-After costs what
// openai-go's own backoff costs, not more: its first retry waits 0.375 to
// 0.5s, jittered.
func TestOpenAIServerError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := &fakeOpenAI{t: t, answer: func(h http.Header, n int) int {
			if n == 1 {
				return http.StatusInternalServerError
			}
			return http.StatusOK
		}}
		s := &server{handler: fake}
		if err := chat(context.Background(), openAIClient(polite.New(s, polite.APIDefaults()))); err != nil {
			t.Fatal(err)
		}
		hits := s.log()
		if len(hits) != 2 {
			t.Fatalf("the server saw %d requests; want 2", len(hits))
		}
		if got := hits[1].at.Sub(hits[0].at); got < 375*time.Millisecond || got > 500*time.Millisecond {
			t.Errorf("retry %v after the 500; want openai-go's own 0.375-0.5s", got)
		}
	})
}

// TestOpenAIConcurrency checks that 32 calls made at once are all in
// flight at once.
func TestOpenAIConcurrency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 32
		b := newBarrier(n)
		fake := &fakeOpenAI{t: t, answer: func(http.Header, int) int { b.wait(); return http.StatusOK }}
		s := &server{handler: fake}
		client := openAIClient(polite.New(s, polite.APIDefaults()))
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				if err := chat(context.Background(), client); err != nil {
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
