package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/pace"
)

// TestArgumentErrors runs command lines whose arguments are wrong, and
// requires a usage error that says what was likely meant. None of them
// reaches the network.
func TestArgumentErrors(t *testing.T) {
	robots := filepath.Join(t.TempDir(), "robots.txt")
	if err := os.WriteFile(robots, []byte("User-agent: *\nDisallow: /private/\nDisalow: /typo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		want    string // in stderr
		notWant string // not in stderr, when set
		usage   bool   // the command's usage follows: the command line is malformed
	}{
		{"no scheme", []string{"get", "example.com/x"},
			`"example.com/x" is not an absolute http or https URL; did you mean http://example.com/x?`, "", false},
		{"no scheme, a host alone", []string{"crawl", "www.example.com"},
			"did you mean http://www.example.com?", "", false},
		{"no scheme, a host and port", []string{"get", "localhost:8080/x"},
			"did you mean http://localhost:8080/x?", "", false},
		{"no scheme, an address and port", []string{"check", "127.0.0.1:8080/x"},
			"did you mean http://127.0.0.1:8080/x?", "", false},
		{"no scheme, a network-path reference", []string{"get", "//example.com/x"},
			"did you mean http://example.com/x?", "", false},
		{"a word", []string{"get", "-"},
			`"-" is not an absolute http or https URL`, "did you mean", false},
		{"another scheme", []string{"get", "ftp://example.com/x"},
			`"ftp://example.com/x" is not an absolute http or https URL`, "did you mean", false},
		{"an opaque URL", []string{"crawl", "mailto:me@example.com"},
			`"mailto:me@example.com" is not an absolute http or https URL`, "did you mean", false},
		{"a path without -robots", []string{"check", "/private/x"},
			`"/private/x" is not an absolute http or https URL; a bare path needs -robots FILE`, "did you mean", false},
		{"a path without its slash", []string{"check", "-robots", robots, "private/x"},
			`"private/x" is not an absolute http or https URL, nor a path: a path must start with "/"; did you mean /private/x?`, "", false},
		{"a host without a scheme, with -robots", []string{"check", "-robots", robots, "example.com/x"},
			`a path must start with "/"; did you mean http://example.com/x?`, "", false},
		{"an unknown flag", []string{"crawl", "-depth", "2", "http://example.com/"},
			"flag provided but not defined: -depth\n", "", true},
		{"a flag without its value", []string{"get", "http://example.com/", "-o"},
			"flags must come before the URLs: -o\n", "", true},
		{"a last flag without its value", []string{"get", "-o"},
			"flag needs an argument: -o\n", "", true},
		{"no URL", []string{"check", "-delay", "2s"},
			"polite check: no URL given\n", "", true},
		{"a robots.txt that cannot be read", []string{"check", "-robots", "/nonexistent/robots.txt", "/a"},
			"polite check: open /nonexistent/robots.txt: no such file or directory\n", "", false},
		{"a flag after the URLs", []string{"get", "http://example.com/", "-delay", "2s"},
			"flags must come before the URLs: -delay\n", "is not an absolute", true},
		{"flags after the URLs", []string{"crawl", "http://example.com/", "-same-host", "-max-depth=2", "http://example.org/"},
			"flags must come before the URLs: -same-host -max-depth\n", "is not an absolute", true},
		{"a flag after a path", []string{"check", "-robots", robots, "/a", "-ua", "Bot"},
			"flags must come before the URLs: -ua\n", "is not an absolute", true},
		{"an error before the file's warnings", []string{"check", "-robots", robots, "private/x"},
			"did you mean /private/x?", "skipped", false},
		{"a delay without a unit", []string{"check", "-delay", "5", "http://example.com/"},
			`invalid value "5" for flag -delay: a duration needs a unit, such as 5s or 500ms` + "\n", "parse error", false},
		{"a fraction without a unit", []string{"get", "-delay", "0.5", "http://example.com/"},
			"a duration needs a unit, such as 0.5s or 500ms", "parse error", false},
		{"not a duration", []string{"get", "-delay", "soon", "http://example.com/"},
			`invalid value "soon" for flag -delay: not a duration, such as 5s or 500ms`, "parse error", false},
		{"an idle timeout without a unit", []string{"crawl", "-idle-timeout", "30", "http://example.com/"},
			"a duration needs a unit, such as 30s or 500ms", "parse error", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCmd(t, tt.args...)
			if code != exitError || stdout != "" {
				t.Errorf("exit status %d, stdout %q; want %d and nothing", code, stdout, exitError)
			}
			if !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr = %q; want it to contain %q", stderr, tt.want)
			}
			if tt.notWant != "" && strings.Contains(stderr, tt.notWant) {
				t.Errorf("stderr = %q; want it not to contain %q", stderr, tt.notWant)
			}
			if got := strings.Contains(stderr, "Usage:\n\n\tpolite "+tt.args[0]+" "); got != tt.usage {
				t.Errorf("stderr = %q; want the command's usage: %v", stderr, tt.usage)
			}
		})
	}
}

// TestOptionsValidatedByLibrary gives each network command an invalid
// -delay, which only the library's option rejects.
func TestOptionsValidatedByLibrary(t *testing.T) {
	for _, cmd := range []string{"check", "get", "crawl"} {
		t.Run(cmd, func(t *testing.T) {
			code, stdout, stderr := runCmd(t, cmd, "-delay", "-1s", "http://example.com/")
			want := "polite " + cmd + ": invalid -delay: polite: WithPacing: BaseDelay -1s: must not be negative (None turns it off)\n"
			if code != exitError || stdout != "" || !strings.HasPrefix(stderr, want) {
				t.Errorf("exit status %d, stdout %q, stderr %q; want %d, nothing, and %q first", code, stdout, stderr, exitError, want)
			}
		})
	}
}

func TestNewTransport(t *testing.T) {
	tests := []struct {
		name    string
		opts    []flagOption
		wantErr string // "" for none
	}{
		{"valid", []flagOption{
			{"-ua", "WithUserAgent", "", polite.WithUserAgent("Bot/1")},
			{"-delay", "WithPacing", "BaseDelay", polite.WithPacing(pace.Policy{BaseDelay: pace.None})},
		}, ""},
		{"named by its flag", []flagOption{
			{"-ua", "WithUserAgent", "", polite.WithUserAgent("Bot/1")},
			{"-delay", "WithPacing", "BaseDelay", polite.WithPacing(pace.Policy{BaseDelay: -2})},
		}, "invalid -delay: polite: WithPacing: BaseDelay -2ns: must not be negative (None turns it off)"},
		{"the first invalid option", []flagOption{
			{"-jitter", "WithPacing", "Jitter", polite.WithPacing(pace.Policy{Jitter: -2})},
			{"-max", "WithPacing", "MaxDelay", polite.WithPacing(pace.Policy{MaxDelay: -2})},
		}, "invalid -jitter: polite: WithPacing: Jitter -2: must not be negative (None turns it off)"},
		{"the flag of the option's field", []flagOption{
			{"-delay", "WithPacing", "BaseDelay", polite.WithPacing(pace.Policy{BaseDelay: time.Second})},
			{"-max", "WithPacing", "MaxDelay", polite.WithPacing(pace.Policy{MaxDelay: -2})},
		}, "invalid -max: polite: WithPacing: MaxDelay -2ns: must not be negative (None turns it off)"},
		{"an option no flag names", []flagOption{
			{"-delay", "WithPacing", "BaseDelay", polite.WithPacing(pace.Policy{MaxDelay: -2})},
		}, "polite: WithPacing: MaxDelay -2ns: must not be negative (None turns it off)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := newTransport(http.DefaultTransport, tt.opts)
			switch {
			case tt.wantErr == "" && (err != nil || tr == nil):
				t.Errorf("newTransport = %v, %v; want a transport", tr, err)
			case tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr):
				t.Errorf("newTransport error = %v; want %q", err, tt.wantErr)
			}
		})
	}
}

// TestDelayFlag checks the base delay that -delay gives the transport:
// -delay 0 is none, not the library's default.
func TestDelayFlag(t *testing.T) {
	tests := []struct {
		delay time.Duration
		want  time.Duration
	}{
		{0, pace.None},
		{2 * time.Second, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.delay.String(), func(t *testing.T) {
			var got pace.Policy
			opts := []polite.Option{polite.WithPacer(func(p pace.Config) pace.Pacer {
				got = p.Policy
				pacer, _ := pace.NewMemory(p)
				return pacer
			})}
			for _, o := range (&commonFlags{ua: defaultUA, delay: tt.delay}).options() {
				opts = append(opts, o.option)
			}
			polite.New(http.DefaultTransport, opts...)
			if got.BaseDelay != tt.want {
				t.Errorf("-delay %v: BaseDelay %v; want %v", tt.delay, got.BaseDelay, tt.want)
			}
		})
	}
}
