// Package localnet holds the two helpers the local stack, its parts and
// the tests share to find their place on this machine: a listener on a
// free loopback port, free ports for a program that opens them itself,
// and the module's root folder.
package localnet

import (
	"errors"
	"net"
	"os"
	"path/filepath"
)

// Listen returns a listener on a free port of 127.0.0.1.
func Listen() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }

// FreePorts returns n distinct TCP ports of 127.0.0.1 that were free a
// moment ago, for a program that opens them itself (moto_server, the
// Runtime Interface Emulator). All n are held open until the last is
// found, so that none is given twice.
func FreePorts(n int) ([]int, error) {
	ls := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := Listen()
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// ModuleRoot returns the nearest folder at or above the working folder
// that holds a go.mod: the repository's root when run from inside it.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod at or above the working folder; run from the repository")
		}
		dir = parent
	}
}
