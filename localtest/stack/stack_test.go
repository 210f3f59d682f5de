package stack

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
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

// TestPortsTaken: when both ports are taken, Start tells both at once.
func TestPortsTaken(t *testing.T) {
	var ports []int
	for range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	s, err := Start(context.Background(), Options{StateDir: t.TempDir(), PagePort: ports[0], APIPort: ports[1]})
	if s != nil {
		s.Close()
	}
	var got []string
	for _, pe := range TakenPorts(err) {
		got = append(got, fmt.Sprintf("%s %d", pe.Part, pe.Port))
	}
	if want := []string{fmt.Sprintf("page %d", ports[0]), fmt.Sprintf("api %d", ports[1])}; !slices.Equal(got, want) {
		t.Errorf("TakenPorts(Start on two taken ports) = %v (%v), want %v", got, err, want)
	}
}
