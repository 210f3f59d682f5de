// Package webtest holds the browser tests of the memory page (package
// web): the page, served by the local stack, runs in Debian's headless
// Chromium against the stack's real fact API. They live here, under
// localtest, because they start the local stack, which no package outside
// localtest may import.
//
// Every view (user, admin, no token, a dialog, a 375-pixel phone width) is
// audited with axe-core, a development dependency of this folder
// (package.json, installed from package-lock.json by `npm ci`, which the
// Makefile's browser step runs, and the tests too when it is missing):
// any WCAG 2.1 A or AA violation, or any of its best practices, fails.
//
//	go test ./localtest/webtest                  # the tests; screenshots in test-artifacts/browser
//	go test ./localtest/webtest -update-docs     # and web/README.md's screenshots in docs/images
package webtest
