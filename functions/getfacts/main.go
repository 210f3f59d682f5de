package main

import "github.com/usermemory/usermemory/functions/httpapi"

// main wires the function once per execution environment (see
// httpapi.Run) and serves its routes.
func main() { httpapi.Run(newHandler) }
