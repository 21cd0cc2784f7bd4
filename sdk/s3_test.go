package politesdk_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/polite-go/polite"
	"github.com/polite-go/polite/pace"
)

// fakeS3 behaves like S3 for what these tests need: PUT and GET of an
// object in a bucket addressed by path, with SigV4 checked as S3 checks
// it: a request signed more than 15 minutes before it arrives is refused
// with RequestTimeTooSkewed, and a body whose SHA-256 is not the signed
// X-Amz-Content-Sha256 with XAmzContentSHA256Mismatch. fail, when it
// returns a status, answers the n-th request with that error instead.
type fakeS3 struct {
	mu      sync.Mutex
	objects map[string][]byte
	n       int
	fail    func(n int, h http.Header) (status int, code string)
}

func newFakeS3() *fakeS3 { return &fakeS3{objects: map[string][]byte{}} }

func (f *fakeS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.n++
	n := f.n
	f.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	signed, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	switch {
	case err != nil || !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential=AKID/"):
		s3Error(w, http.StatusForbidden, "AccessDenied")
		return
	case time.Since(signed) > 15*time.Minute:
		s3Error(w, http.StatusForbidden, "RequestTimeTooSkewed")
		return
	}
	if sum := sha256.Sum256(body); r.Method == http.MethodPut && hex.EncodeToString(sum[:]) != r.Header.Get("X-Amz-Content-Sha256") {
		s3Error(w, http.StatusBadRequest, "XAmzContentSHA256Mismatch")
		return
	}
	if f.fail != nil {
		if status, code := f.fail(n, w.Header()); status != 0 {
			s3Error(w, status, code)
			return
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch r.Method {
	case http.MethodPut:
		f.objects[r.URL.Path] = body
		w.Header().Set("ETag", `"etag"`)
	case http.MethodGet:
		b, ok := f.objects[r.URL.Path]
		if !ok {
			s3Error(w, http.StatusNotFound, "NoSuchKey")
			return
		}
		w.Write(b)
	}
}

func s3Error(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>%s</Message><RequestId>1</RequestId></Error>`, code, code)
}

// counting counts the attempts the SDK's HTTP client makes.
type counting struct {
	next http.RoundTripper
	n    atomic.Int32
}

func (c *counting) RoundTrip(req *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(req)
}

// s3Client returns an S3 client that sends its requests through tr to the
// fake, as its users build it, with the SDK's standard retryer; backoff,
// when not nil, replaces the retryer's backoff, so that a test can tell
// its waits from polite's.
func s3Client(tr http.RoundTripper, backoff func(attempt int, err error) (time.Duration, error)) *s3.Client {
	cfg := aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""),
		HTTPClient:  &http.Client{Transport: tr},
		Retryer: func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				if backoff != nil {
					o.Backoff = retry.BackoffDelayerFunc(backoff)
				}
			})
		},
	}
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.BaseEndpoint = aws.String("http://s3.test")
		o.UsePathStyle = true
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
	})
}

// fixed is an SDK backoff of 10ms.
func fixed(int, error) (time.Duration, error) { return 10 * time.Millisecond, nil }

func put(ctx context.Context, c *s3.Client, key string) error {
	_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bucket"), Key: aws.String(key), Body: bytes.NewReader([]byte("payload of " + key))})
	return err
}

// TestS3Refusals checks that aws-sdk-go-v2 stops at once on polite's
// refusal, with polite's error visible, no request sent and none of its
// retry budget spent: after 30 refused operations a real 503 SlowDown is
// still retried.
func TestS3Refusals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := newFakeS3()
		var slowDown atomic.Bool
		fake.fail = func(n int, h http.Header) (int, string) {
			if n == 1 {
				h.Set("Retry-After", "60")
				return http.StatusServiceUnavailable, "SlowDown"
			}
			if slowDown.CompareAndSwap(true, false) {
				return http.StatusServiceUnavailable, "SlowDown"
			}
			return 0, ""
		}
		s := &server{handler: fake}
		attempts := &counting{next: polite.New(s, polite.APIDefaults())}
		client := s3Client(attempts, fixed)

		for i := range 31 {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			asked := time.Now()
			before := attempts.n.Load()
			err := put(ctx, client, "k")
			cancel()
			var late *pace.DeadlineError
			if !errors.As(err, &late) {
				t.Fatalf("operation %d: %v; want a *pace.DeadlineError", i, err)
			}
			tries, took := attempts.n.Load()-before, time.Since(asked)
			if i == 0 {
				// The first attempt got the 503 that paused the host, and the
				// SDK waited its backoff before the one refused.
				tries, took = tries-1, took-10*time.Millisecond
			}
			if tries != 1 || took != 0 {
				t.Fatalf("operation %d: %d refused attempts in %v; want 1 at once", i, tries, took)
			}
		}
		if n := len(s.log()); n != 1 {
			t.Errorf("the server saw %d requests; want only the first", n)
		}
		time.Sleep(time.Minute)
		slowDown.Store(true)
		if err := put(context.Background(), client, "k"); err != nil {
			t.Errorf("after the refusals, a 503 SlowDown: %v; want it retried", err)
		}
	})
}

// TestS3Recovery checks that backoff recovers between operations: each of
// five operations in a row meets one 503, and each retry comes the larger
// of the SDK's backoff (10ms here) and polite's pause (50ms) after it, not
// a pause that doubles with each operation; and after clean operations
// too. A 500 costs the same.
func TestS3Recovery(t *testing.T) {
	for _, tt := range []struct{ status int }{{http.StatusServiceUnavailable}, {http.StatusInternalServerError}} {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fake := newFakeS3()
				failNext := true
				fake.fail = func(n int, h http.Header) (int, string) {
					if failNext {
						failNext = false
						return tt.status, map[int]string{503: "SlowDown", 500: "InternalError"}[tt.status]
					}
					return 0, ""
				}
				s := &server{handler: fake}
				client := s3Client(polite.New(s, polite.APIDefaults()), fixed)
				retryGap := func() time.Duration {
					hits := s.log()
					return hits[len(hits)-1].at.Sub(hits[len(hits)-2].at)
				}
				for i := range 5 {
					failNext = true
					if err := put(context.Background(), client, "k"); err != nil {
						t.Fatal(err)
					}
					if got := retryGap(); got != 50*time.Millisecond {
						t.Errorf("operation %d: retry %v after the %d; want 50ms", i+1, got, tt.status)
					}
				}
				for range 5 {
					if err := put(context.Background(), client, "k"); err != nil {
						t.Fatal(err)
					}
				}
				failNext = true
				if err := put(context.Background(), client, "k"); err != nil {
					t.Fatal(err)
				}
				if got := retryGap(); got != 50*time.Millisecond {
					t.Errorf("after five clean operations: retry %v after the %d; want 50ms", got, tt.status)
				}
			})
		})
	}
}

// TestS3Concurrency checks that 16 operations made at once are all in
// flight at once.
func TestS3Concurrency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 16
		b := newBarrier(n)
		fake := newFakeS3()
		fake.fail = func(int, http.Header) (int, string) { b.wait(); return 0, "" }
		s := &server{handler: fake}
		client := s3Client(polite.New(s, polite.APIDefaults()), nil)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				if err := put(context.Background(), client, fmt.Sprint("k", i)); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if got := s.maxInFlight(); got != n {
			t.Errorf("%d operations in flight at once; want all %d", got, n)
		}
	})
}

// TestS3Signing checks how SigV4 fares with polite's waits. The SDK signs
// each attempt inside its retry loop, above its HTTP client, so that the
// signature is made before the polite transport waits: a request that
// waits reaches S3 as old as its wait, and one held longer than SigV4's
// 15 minutes is refused. The recipe's waitBeforeSigning (Example_s3)
// waits for the host's turn before the SDK signs, so the signature is as
// fresh as the send; an operation whose deadline comes first fails at
// once with polite's *DeadlineError, nothing sent. Bodies come whole on
// every attempt (the fake checks their signed SHA-256).
func TestS3Signing(t *testing.T) {
	tests := []struct {
		name     string
		hold     []string      // the fields of the first response, which hold the host
		recipe   bool          // with waitBeforeSigning
		deadline time.Duration // of the second operation; 0 for none
		want     string        // how the second operation ends: "", an S3 error code, or "deadline"
		age      time.Duration // of the second request's signature when it arrives
	}{
		{"a 2s hold, signed before it", []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "2"}, false, 0, "", 2 * time.Second},
		{"a 2s hold, signed after it", []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "2"}, true, 0, "", 0},
		{"a 20-minute hold, signed before it", []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "1200"}, false, 0, "RequestTimeTooSkewed", 20 * time.Minute},
		{"a 20-minute hold, signed after it", []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "1200"}, true, 0, "", 0},
		{"a 20-minute hold, a 10-minute operation", []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "1200"}, true, 10 * time.Minute, "deadline", 0},
		{"a retry after a 503's Retry-After, signed after it", []string{"Retry-After", "2", "status", "503"}, true, 0, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				toPresent()
				fake := newFakeS3()
				fake.fail = func(n int, h http.Header) (int, string) {
					if n > 1 {
						return 0, ""
					}
					for i := 0; i < len(tt.hold); i += 2 {
						if tt.hold[i] == "status" {
							return http.StatusServiceUnavailable, "SlowDown"
						}
						h.Set(tt.hold[i], tt.hold[i+1])
					}
					return 0, ""
				}
				s := &server{handler: fake}
				tr := polite.New(s, polite.APIDefaults())
				client := s3Client(tr, fixed)
				if tt.recipe {
					client = s3.New(client.Options(), func(o *s3.Options) { o.APIOptions = append(o.APIOptions, waitBeforeSigning(tr)) })
				}
				retried := tt.hold[0] == "Retry-After"
				if err := put(context.Background(), client, "a"); err != nil && !retried {
					t.Fatal(err)
				}
				ctx := context.Background()
				if tt.deadline > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tt.deadline)
					defer cancel()
				}
				asked := time.Now()
				var err error
				if !retried { // the first operation's retry is the request to look at
					err = put(ctx, client, "b")
				}
				var late *pace.DeadlineError
				switch {
				case tt.want == "deadline":
					if !errors.As(err, &late) || time.Since(asked) != 0 || len(s.log()) != 1 {
						t.Errorf("operation: %v after %v, %d requests sent; want a *pace.DeadlineError at once, nothing sent", err, time.Since(asked), len(s.log())-1)
					}
					return
				case tt.want != "":
					if err == nil || !strings.Contains(err.Error(), tt.want) {
						t.Errorf("operation: %v; want S3's %s", err, tt.want)
					}
				case err != nil:
					t.Errorf("operation: %v", err)
				}
				hits := s.log()
				last := hits[len(hits)-1]
				signed, _ := time.Parse("20060102T150405Z", last.header.Get("X-Amz-Date"))
				if got := last.at.Sub(signed); got != tt.age {
					t.Errorf("the request arrived %v after it was signed; want %v", got, tt.age)
				}
			})
		})
	}
}
