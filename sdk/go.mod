module github.com/polite-go/polite/sdk

go 1.25.0

require (
	github.com/hashicorp/go-retryablehttp v0.7.8
	github.com/polite-go/polite v0.1.0
)

require (
	github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
	golang.org/x/net v0.58.0 // indirect
	golang.org/x/text v0.41.0 // indirect
	golang.org/x/time v0.15.0 // indirect
)
