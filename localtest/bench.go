package main

import (
	"context"
	"errors"
)

func bench(ctx context.Context, args []string) error {
	_ = ctx
	_ = args
	return errors.New("bench: not written yet")
}
