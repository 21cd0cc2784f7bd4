module github.com/polite-go/polite

go 1.25.0

require (
	github.com/temoto/robotstxt v1.1.2
	go.uber.org/goleak v1.3.0
	golang.org/x/net v0.58.0
	golang.org/x/time v0.15.0
)

require golang.org/x/text v0.41.0 // indirect
