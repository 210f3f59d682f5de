package stack

import (
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
)

// serialDynamoDB returns a reverse proxy to moto_server that lets one
// DynamoDB request through at a time. moto serves each request on its own
// thread with no lock per item, so two conditional writes to one item sent
// at once can both pass their condition; DynamoDB applies each request to
// an item atomically. The functions reach DynamoDB through this proxy, so
// the local stack keeps DynamoDB's guarantee and a lost update seen
// locally is a real bug. The stack puts a fault injector in front of it.
func serialDynamoDB(motoEndpoint string, errorLog *log.Logger) (http.Handler, error) {
	proxy, err := reverseProxy(motoEndpoint, errorLog)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		proxy.ServeHTTP(w, r)
	}), nil
}

// reverseProxy returns a reverse proxy to endpoint that writes its errors
// (a caller that gave up, mostly) to errorLog.
func reverseProxy(endpoint string, errorLog *log.Logger) (http.Handler, error) {
	target, err := url.Parse(endpoint)
	if err != nil {
		return nil, err
	}
	p := httputil.NewSingleHostReverseProxy(target)
	p.ErrorLog = errorLog
	return p, nil
}
