package polite

import (
	"fmt"
	"net/http"
	"testing"
	"testing/synctest"
	"time"
)

func TestQuotaPartitionTransport(t *testing.T) {
	for _, partitioned := range []bool{false, true} {
		t.Run(fmt.Sprintf("partitioned %v", partitioned), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
					if r.Header.Get("Authorization") == "token A" {
						return respond(r, 200, "ok", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "6"), nil
					}
					return respond(r, 200, "ok", "X-RateLimit-Remaining", "4999", "X-RateLimit-Reset", "6"), nil
				}}
				opts := []Option{APIDefaults()}
				if partitioned {
					opts = append(opts, WithQuotaPartition(QuotaPartitionCredentials))
				}
				tr := New(base, opts...)
				call := func(token string) time.Duration {
					req, _ := http.NewRequest("GET", "http://api.example/user", nil)
					req.Header.Set("Authorization", token)
					t0 := time.Now()
					resp, err := tr.RoundTrip(req)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					return time.Since(t0)
				}
				call("token A")
				wantB := 6 * time.Second
				if partitioned {
					wantB = 0
				}
				if got := call("token B"); got != wantB {
					t.Errorf("token B waited %v after token A's quota ran out; want %v", got, wantB)
				}
			})
		})
	}
}

func TestQuotaPartitionCredentials(t *testing.T) {
	req := func(headers ...string) *http.Request {
		r, _ := http.NewRequest("GET", "http://h/", nil)
		for i := 0; i < len(headers); i += 2 {
			r.Header.Set(headers[i], headers[i+1])
		}
		return r
	}
	sigv4 := func(key, sig string) string {
		return "AWS4-HMAC-SHA256 Credential=" + key + "/20260504/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=" + sig
	}
	a := QuotaPartitionCredentials(req("Authorization", "Bearer A"))
	tests := []struct {
		name string
		r    *http.Request
		same bool // as a
	}{
		{"same token", req("Authorization", "Bearer A"), true},
		{"another token", req("Authorization", "Bearer B"), false},
		{"an API key header", req("X-Api-Key", "Bearer A"), false},
	}
	for _, tt := range tests {
		if got := QuotaPartitionCredentials(tt.r); (got == a) != tt.same || got == "" {
			t.Errorf("%s: %q, %q; want same %v, not empty", tt.name, got, a, tt.same)
		}
	}
	if got := QuotaPartitionCredentials(req()); got != "" {
		t.Errorf("no credentials: %q; want the partition \"\"", got)
	}
	if QuotaPartitionCredentials(req("Authorization", sigv4("AKID1", "aaa"))) != QuotaPartitionCredentials(req("Authorization", sigv4("AKID1", "bbb"))) ||
		QuotaPartitionCredentials(req("Authorization", sigv4("AKID1", "aaa"))) == QuotaPartitionCredentials(req("Authorization", sigv4("AKID2", "aaa"))) {
		t.Error("SigV4: want one partition per access key, whatever the signature")
	}
}

// TestRecoverAfter checks the successes that lower the backoff level: five
// by default, one with APIDefaults, never with pace.None.
