package main

import (
	"net/http"
	"strings"
)

func newRequest(in httpIn) (*http.Request, error) {
	method := in.Method
	if method == "" {
		method = http.MethodGet
	}
	return http.NewRequest(method, in.URL, strings.NewReader(in.Body))
}
