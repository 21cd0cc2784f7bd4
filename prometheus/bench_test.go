package politeprom_test

import (
	"net/http"
	"testing"

	"github.com/polite-go/polite"
	politeprom "github.com/polite-go/polite/prometheus"
	"github.com/prometheus/client_golang/prometheus"
)

// BenchmarkRoundTrip measures what the metrics add to a request that does
// not wait, over a base that answers at once.
func BenchmarkRoundTrip(b *testing.B) {
	for _, bc := range []struct {
		name    string
		metrics bool
	}{{"without", false}, {"with", true}} {
		b.Run(bc.name+" metrics", func(b *testing.B) {
			opts := []polite.Option{polite.APIDefaults()}
			if bc.metrics {
				opts = append(opts, politeprom.New(prometheus.NewRegistry()).Option())
			}
			tr := polite.New(site(""), opts...)
			req, _ := http.NewRequest(http.MethodGet, "http://api.example/v1/items?page=2", nil)
			b.ReportAllocs()
			for b.Loop() {
				resp, err := tr.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				resp.Body.Close()
			}
		})
	}
}
