package human

import (
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0"},
		{423 * time.Microsecond, "420µs"},
		{-423 * time.Microsecond, "-420µs"},
		{1234567 * time.Microsecond, "1.235s"},
		{12345 * time.Millisecond, "12.3s"},
		{90 * time.Minute, "1h30m0s"},
	}
	for _, tt := range tests {
		if got := Duration(tt.d); got != tt.want {
			t.Errorf("Duration(%v) = %q; want %q", tt.d, got, tt.want)
		}
	}
}

func TestBytes(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0 B"},
		{999, "999 B"},
		{1000, "1.0 kB"},
		{1_234_567, "1.2 MB"},
		{2_100_000_000, "2.1 GB"},
		{3_000_000_000_000_000, "3.0 PB"},
	}
	for _, tt := range tests {
		if got := Bytes(tt.n); got != tt.want {
			t.Errorf("Bytes(%d) = %q; want %q", tt.n, got, tt.want)
		}
	}
}

func TestOrNone(t *testing.T) {
	for _, tt := range []struct{ s, want string }{{"", "none"}, {"*", "*"}, {"gptbot", "gptbot"}} {
		if got := OrNone(tt.s); got != tt.want {
			t.Errorf("OrNone(%q) = %q; want %q", tt.s, got, tt.want)
		}
	}
}
