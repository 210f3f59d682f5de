package main

import (
	"testing"
	"time"

	"github.com/usermemory/usermemory/localtest/fault"
)

func TestParseFault(t *testing.T) {
	tests := []struct {
		kind    string
		amounts []string
		want    fault.Spec
		bad     bool
	}{
		{"stall", []string{"10s"}, fault.Spec{Kind: fault.Stall, For: 10 * time.Second}, false},
		{"throttle", []string{"20"}, fault.Spec{Kind: fault.Throttle, Requests: 20}, false},
		{"error", []string{"30s", "5"}, fault.Spec{Kind: fault.Error, For: 30 * time.Second, Requests: 5}, false},
		{"slow", []string{"1m"}, fault.Spec{Kind: fault.Slow, For: time.Minute, Delay: 3 * time.Second}, false},
		{"stall", []string{"5"}, fault.Spec{}, true},
		{"freeze", []string{"10s"}, fault.Spec{}, true},
		{"throttle", []string{"soon"}, fault.Spec{}, true},
	}
	for _, tt := range tests {
		got, err := parseFault(tt.kind, tt.amounts, 3*time.Second)
		if (err != nil) != tt.bad || (!tt.bad && got != tt.want) {
			t.Errorf("parseFault(%s, %v) = %+v, %v; want %+v (error: %t)", tt.kind, tt.amounts, got, err, tt.want, tt.bad)
		}
	}
}
