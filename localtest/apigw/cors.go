package apigw

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// originAllowed returns the Access-Control-Allow-Origin value for origin,
// "" when CORS does not allow it.
func (g *Gateway) originAllowed(origin string) string {
	c := g.cfg.API.CORS
	if c == nil || origin == "" {
		return ""
	}
	for _, o := range c.AllowOrigins {
		if o == "*" {
			if c.AllowCredentials {
				return origin
			}
			return "*"
		}
		if strings.EqualFold(o, origin) {
			return origin
		}
	}
	return ""
}

// corsHeaders adds the CORS headers of an actual request's response.
func (g *Gateway) corsHeaders(h http.Header, origin string) {
	allow := g.originAllowed(origin)
	if allow == "" {
		return
	}
	c := g.cfg.API.CORS
	h.Set("Access-Control-Allow-Origin", allow)
	h.Add("Vary", "Origin")
	if c.AllowCredentials {
		h.Set("Access-Control-Allow-Credentials", "true")
	}
	if len(c.ExposeHeaders) > 0 {
		h.Set("Access-Control-Expose-Headers", strings.Join(c.ExposeHeaders, ","))
	}
}

// preflight answers a CORS preflight request, as API Gateway does when
// the API has a CORS configuration: 204, with the CORS headers when the
// origin, method and headers are allowed. It reports whether it answered.
func (g *Gateway) preflight(w http.ResponseWriter, r *http.Request, origin string) bool {
	c := g.cfg.API.CORS
	if c == nil || r.Method != http.MethodOptions || origin == "" || r.Header.Get("Access-Control-Request-Method") == "" {
		return false
	}
	h := w.Header()
	allow := g.originAllowed(origin)
	method := strings.ToUpper(r.Header.Get("Access-Control-Request-Method"))
	if allow != "" && (listAllows(c.AllowMethods, method) || method == http.MethodOptions) && headersAllowed(c.AllowHeaders, r.Header.Get("Access-Control-Request-Headers")) {
		h.Set("Access-Control-Allow-Origin", allow)
		h.Add("Vary", "Origin")
		h.Set("Access-Control-Allow-Methods", strings.Join(c.AllowMethods, ","))
		if len(c.AllowHeaders) > 0 {
			h.Set("Access-Control-Allow-Headers", strings.Join(c.AllowHeaders, ","))
		}
		if c.MaxAge > 0 {
			h.Set("Access-Control-Max-Age", strconv.Itoa(c.MaxAge))
		}
		if c.AllowCredentials {
			h.Set("Access-Control-Allow-Credentials", "true")
		}
	}
	w.WriteHeader(http.StatusNoContent)
	return true
}

func listAllows(list []string, v string) bool {
	return slices.ContainsFunc(list, func(x string) bool { return x == "*" || strings.EqualFold(x, v) })
}

func headersAllowed(allowed []string, requested string) bool {
	for h := range strings.SplitSeq(requested, ",") {
		if h = strings.TrimSpace(h); h != "" && !listAllows(allowed, h) {
			return false
		}
	}
	return true
}
