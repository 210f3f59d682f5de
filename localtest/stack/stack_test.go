package stack

import (
	"context"
	"errors"
	"net"
	"testing"
)

// TestPortTaken: a port that is taken is a *PortError naming the part,
// before anything slow starts.
func TestPortTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	for _, o := range []Options{{APIPort: port}, {PagePort: port}} {
		o.StateDir = t.TempDir()
		want := "api"
		if o.PagePort != 0 {
			want = "page"
		}
		s, err := Start(context.Background(), o)
		var pe *PortError
		if !errors.As(err, &pe) || pe.Part != want || pe.Port != port {
			if s != nil {
				s.Close()
			}
			t.Errorf("Start on taken %s port: %v, want a *PortError for %s port %d", want, err, want, port)
		}
	}
}
