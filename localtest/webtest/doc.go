// Package webtest holds the browser tests of the memory page (package
// web): the page, served by the local stack, runs in Debian's headless
// Chromium against the stack's real fact API. They live here, under
// localtest, because they start the local stack, which no package outside
// localtest may import.
//
//	go test ./localtest/webtest                  # the tests; screenshots in test-artifacts/browser
//	go test ./localtest/webtest -update-docs     # and the README's screenshots in docs/images
package webtest
