package politeotel_test

import (
	"context"
	"net/http"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/internal/cputime"
	politeotel "github.com/polite-go/polite/otel"
)

// BenchmarkRoundTrip measures what Telemetry adds to a request that does
// not wait (APIDefaults: no robots.txt, nothing paced), over a base that
// answers every request with one shared response: without its hook; with
// it, traces only (New(nil)); with the metrics of the SDK, read by a
// manual reader; and with those and a recording span in the request's
// context. It reports cpu-ns/op besides ns/op.
func BenchmarkRoundTrip(b *testing.B) {
	page := &http.Response{StatusCode: 200, Status: "200 OK", Header: http.Header{}, Body: http.NoBody}
	base := roundTripFunc(func(*http.Request) (*http.Response, error) { return page, nil })
	for _, bc := range []struct {
		name          string
		hook, metrics bool
		span          bool
	}{
		{"without", false, false, false},
		{"traces only", true, false, false},
		{"metrics", true, true, false},
		{"metrics and a recording span", true, true, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			opts := []polite.Option{polite.APIDefaults()}
			if bc.hook {
				var mp *sdkmetric.MeterProvider
				if bc.metrics {
					mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
				}
				var tel *politeotel.Telemetry
				var err error
				if mp != nil {
					tel, err = politeotel.New(mp)
				} else {
					tel, err = politeotel.New(nil)
				}
				if err != nil {
					b.Fatal(err)
				}
				opts = append(opts, tel.Option())
			}
			tr := polite.New(base, opts...)
			ctx := context.Background()
			if bc.span {
				ctx, _ = sdktrace.NewTracerProvider().Tracer("bench").Start(ctx, "request")
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.example/v1/items?page=2", nil)
			if err != nil {
				b.Fatal(err)
			}
			cputime.Loop(b, func() {
				resp, err := tr.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				resp.Body.Close()
			})
		})
	}
}
