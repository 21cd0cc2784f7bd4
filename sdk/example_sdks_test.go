package politesdk_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/google/go-github/v89/github"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/polite-go/polite"
	"github.com/polite-go/polite/pace"
	politesdk "github.com/polite-go/polite/sdk"
)

// go-github over one polite transport shared by every client of the
// program: quotas are partitioned by token and by GitHub's resource
// (GitHubPartition), so that one token's, or the search resource's,
// exhausted quota holds no other call; and a secondary rate limit with no
// Retry-After gets GitHub's documented minute (GitHubSecondaryLimits,
// under the polite transport). The token goes on the request above the
// transport, as go-github's WithAuthToken puts it. go-github does not
// retry; a refusal comes back at once, polite's error inside its own.
func Example_github() {
	var calls atomic.Int32
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("X-RateLimit-Limit", "30")
		w.Header().Set("X-RateLimit-Resource", "search")
		w.Header().Set("X-RateLimit-Remaining", "0") // token A's search quota is spent
		w.Header().Set("X-RateLimit-Reset", fmt.Sprint(time.Now().Add(time.Minute).Unix()))
		fmt.Fprint(w, `{"total_count":0,"items":[]}`)
	}))
	defer api.Close()

	tr := polite.New(politesdk.GitHubSecondaryLimits(nil), polite.APIDefaults(),
		polite.WithQuotaPartition(politesdk.GitHubPartition))
	client := func(token string) *github.Client {
		c, _ := github.NewClient(github.WithTransport(tr), github.WithAuthToken(token),
			github.WithURLs(github.Ptr(api.URL+"/"), github.Ptr(api.URL+"/")))
		return c
	}
	a, b := client("token-a"), client("token-b")
	a.Search.Repositories(context.Background(), "polite", nil)

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, _, errB := b.Search.Repositories(ctx, "polite", nil) // another token: not held
	_, _, errA := client("token-a").Search.Repositories(ctx, "polite", nil)
	var late *pace.DeadlineError
	fmt.Println("token B's search:", errB)
	fmt.Println("token A's search refused at once:", errors.As(errA, &late))
	fmt.Println("requests the server saw:", calls.Load())
	// Output:
	// token B's search: <nil>
	// token A's search refused at once: true
	// requests the server saw: 2
}

// openai-go over polite: APIDefaults reads OpenAI's own fields
// (x-ratelimit-*-requests and -tokens, retry-after-ms), and the
// middleware OpenAIStopOnRefusal ends openai-go's retries on polite's
// refusals, which it would otherwise retry as network errors until the
// context's deadline. The API key is on the request before the transport
// sees it, so WithQuotaPartition(polite.QuotaPartitionCredentials) keeps
// the quotas of several keys apart.
func Example_openai() {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Ratelimit-Remaining-Requests", "0")
		w.Header().Set("X-Ratelimit-Reset-Requests", "6m0s")
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"1","object":"chat.completion","created":0,"model":"gpt-4o-mini","choices":[]}`)
	}))
	defer api.Close()

	tr := polite.New(nil, polite.APIDefaults(), polite.WithQuotaPartition(polite.QuotaPartitionCredentials))
	client := openai.NewClient(
		option.WithAPIKey("sk-example"),
		option.WithBaseURL(api.URL+"/v1/"),
		option.WithHTTPClient(&http.Client{Transport: tr}),
		option.WithMiddleware(politesdk.OpenAIStopOnRefusal),
	)
	params := openai.ChatCompletionNewParams{
		Model:    openai.ChatModelGPT4oMini,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hello")},
	}
	client.Chat.Completions.New(context.Background(), params)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	asked := time.Now()
	_, err := client.Chat.Completions.New(ctx, params) // no requests left for six minutes
	var late *pace.DeadlineError
	fmt.Println("refused:", errors.As(err, &late), "at once:", time.Since(asked) < time.Second)
	// Output:
	// refused: true at once: true
}

// aws-sdk-go-v2 over polite: the polite transport is the SDK's HTTP
// client's, under its retryer and its signer, so that each attempt is
// paced. The retryer asks an error RetryableError, which polite's
// refusals answer false: it stops at once, spending none of its retry
// budget. The SDK signs each attempt before its HTTP client sends it; so
// that a request does not reach S3 as old as polite's wait (SigV4 refuses
// one signed more than 15 minutes before), waitBeforeSigning waits for
// the host's turn (PoliteTransport.Ready) before the SDK signs, and the
// operation's context bounds any wait that remains.
func Example_s3() {
	var signedAfter atomic.Value
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		signedAfter.Store(r.Header.Get("X-Amz-Date"))
		w.Header().Set("X-RateLimit-Remaining", "0") // as some S3-compatible stores say
		w.Header().Set("X-RateLimit-Reset", "1")
	}))
	defer api.Close()

	tr := polite.New(nil, polite.APIDefaults())
	client := s3.NewFromConfig(aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""),
		HTTPClient:  &http.Client{Transport: tr},
	}, func(o *s3.Options) {
		o.BaseEndpoint, o.UsePathStyle = aws.String(api.URL), true
		o.APIOptions = append(o.APIOptions, waitBeforeSigning(tr))
	})
	get := func() error {
		_, err := client.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String("b"), Key: aws.String("k")})
		return err
	}
	get()
	first := signedAfter.Load()
	asked := time.Now()
	err := get() // the host is held for a second: signed when its turn came
	fmt.Println(err, time.Since(asked) > 500*time.Millisecond, signedAfter.Load() != first)
	// Output:
	// <nil> true true
}

// waitBeforeSigning is an aws-sdk-go-v2 option (s3.Options.APIOptions, or
// any client's) that waits before the SDK signs an attempt until tr would
// let it start, so that the signature is made after polite's wait rather
// than before it. A wait that would end after the operation's deadline is
// left to the transport, which fails it at once with a
// *pace.DeadlineError.
func waitBeforeSigning(tr *polite.PoliteTransport) func(*middleware.Stack) error {
	wait := middleware.FinalizeMiddlewareFunc("PoliteWaitBeforeSigning",
		func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			if req, ok := in.Request.(*smithyhttp.Request); ok {
				r, err := tr.Ready(req.Request.WithContext(ctx))
				deadline, bounded := ctx.Deadline()
				if err == nil && r.Next.After(time.Now()) && (!bounded || r.Next.Before(deadline)) {
					t := time.NewTimer(time.Until(r.Next))
					select {
					case <-t.C:
					case <-ctx.Done():
						t.Stop()
						return middleware.FinalizeOutput{}, middleware.Metadata{}, ctx.Err()
					}
				}
			}
			return next.HandleFinalize(ctx, in)
		})
	return func(stack *middleware.Stack) error {
		return stack.Finalize.Insert(wait, "Signing", middleware.Before)
	}
}
