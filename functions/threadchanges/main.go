package main

import "github.com/usermemory/usermemory/functions/wire"

// main builds the function once per execution environment from the
// environment (see wire.ServeFactAPI) and serves its routes.
func main() { wire.ServeFactAPI(newHandler) }
