package politeotel_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/polite-go/polite"
	politeotel "github.com/polite-go/polite/otel"
)

// newSite serves a robots.txt that disallows /private/, and "hello".
func newSite() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
			return
		}
		fmt.Fprint(w, "hello")
	}))
}

// crawl gets each path of site with client, within a span named "crawl"
// of tp's.
func crawl(tp *sdktrace.TracerProvider, client *http.Client, site string, paths ...string) {
	ctx, span := tp.Tracer("crawler").Start(context.Background(), "crawl")
	defer span.End()
	for _, path := range paths {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, site+path, nil)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
		}
	}
}

// show prints each span in the order they ended, under which span, and
// polite's events on it with their cause or reason; no time, which
// varies from run to run.
func show(spans []sdktrace.ReadOnlySpan) {
	names := map[string]string{}
	for _, s := range spans {
		names[s.SpanContext().SpanID().String()] = s.Name()
	}
	for _, s := range spans {
		line := s.Name()
		if parent, ok := names[s.Parent().SpanID().String()]; ok {
			line += ", under " + parent
		}
		if status := value(s.Attributes(), "http.response.status_code"); status != "" && s.Name() == "polite.robots_fetch" {
			line += ": status " + status
		}
		fmt.Println(line)
		for _, ev := range s.Events() {
			if strings.HasPrefix(ev.Name, "polite.") {
				fmt.Println(strings.TrimRight("  "+ev.Name+" "+value(ev.Attributes, "polite.wait.cause")+value(ev.Attributes, "polite.refusal.reason")+" "+value(ev.Attributes, "polite.robots.rule"), " "))
			}
		}
	}
}

// value returns the value of the attribute key in kvs, or "".
func value(kvs []attribute.KeyValue, key attribute.Key) string {
	if i := slices.IndexFunc(kvs, func(kv attribute.KeyValue) bool { return kv.Key == key }); i >= 0 {
		return kvs[i].Value.String()
	}
	return ""
}

// Around the transport, otelhttp's client span starts before polite's
// wait, and lasts as long as the caller waited: the first page's span
// says that it waited for robots.txt, whose fetch is a span under it, and
// then for its host's pace; the second page's span says why it was
// refused.
func Example_otelhttpOutside() {
	site := newSite()
	defer site.Close()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	mp := sdkmetric.NewMeterProvider()

	tel, err := politeotel.New(mp) // mp: the program's metric.MeterProvider
	if err != nil {
		log.Fatal(err)
	}
	t := polite.New(nil, polite.WithUserAgent("MyBot/1.0 (+https://example.com/bot)"), tel.Option())
	tel.Track(t)
	client := &http.Client{Transport: otelhttp.NewTransport(t)}

	crawl(tp, client, site.URL, "/a", "/private/b")
	show(spans.Ended())
	// Output:
	// polite.robots_fetch, under HTTP GET: status 200
	// HTTP GET, under crawl
	//   polite.wait robots.txt
	//   polite.wait pace
	// HTTP GET, under crawl
	//   polite.refused robots.txt Disallow: /private/
	// crawl
}

// As the transport's base, otelhttp's client span starts once the turn
// has come, and covers the exchange with the server alone; polite's
// events go on the caller's span, here "crawl", and so does the span of
// the robots.txt fetch. The refused page has no client span: nothing was
// sent.
func Example_otelhttpInside() {
	site := newSite()
	defer site.Close()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	tel, err := politeotel.New(nil) // traces only
	if err != nil {
		log.Fatal(err)
	}

	t := polite.New(otelhttp.NewTransport(http.DefaultTransport), polite.WithUserAgent("MyBot/1.0 (+https://example.com/bot)"), tel.Option())
	client := &http.Client{Transport: t}

	crawl(tp, client, site.URL, "/a", "/private/b")
	show(spans.Ended())
	// Output:
	// polite.robots_fetch, under crawl: status 200
	// HTTP GET, under crawl
	// crawl
	//   polite.wait robots.txt
	//   polite.wait pace
	//   polite.refused robots.txt Disallow: /private/
}

// The transport's metrics, read by a manual reader as an exporter would:
// two pages fetched after one robots.txt fetch, one refused, and the one
// host known, idle now.
func Example() {
	site := newSite()
	defer site.Close()
	reader := sdkmetric.NewManualReader()
	tel, err := politeotel.New(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	if err != nil {
		log.Fatal(err)
	}
	t := polite.New(nil, polite.WithUserAgent("MyBot/1.0 (+https://example.com/bot)"), tel.Option())
	tel.Track(t)
	client := &http.Client{Transport: t}
	for _, path := range []string{"/a", "/b", "/private/c"} {
		if resp, err := client.Get(site.URL + path); err == nil {
			resp.Body.Close()
		}
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		log.Fatal(err)
	}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		switch d := m.Data.(type) {
		case metricdata.Sum[int64]:
			for _, p := range d.DataPoints {
				fmt.Println(m.Name, p.Attributes.Encoded(attribute.DefaultEncoder()), p.Value)
			}
		case metricdata.Histogram[float64]:
			fmt.Println(m.Name, "count", d.DataPoints[0].Count) // the sum and buckets are times
		}
	}
	// Output:
	// polite.wait.duration count 2
	// polite.robots.disallowed polite.action=refused 1
	// polite.robots.fetches polite.robots.result=fetched,polite.robots.status_class=2xx 1
	// polite.hosts.tracked  1
	// polite.hosts.paused  0
	// polite.requests.waiting  0
	// polite.requests.in_flight  0
}
