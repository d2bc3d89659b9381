package registry

import (
	"time"
)

// The JSON bodies of the registry API (API.md). Client and Sandbox share them.

// checkRequest is the body of every POST /v1/<lookup>/check.
type checkRequest struct {
	IDNumber       string `json:"id_number"`
	FullName       string `json:"full_name"`
	DateOfBirth    string `json:"date_of_birth"`
	Sex            string `json:"sex,omitempty"`
	DocumentNumber string `json:"document_number,omitempty"`
}

func (r checkRequest) query() Query {
	return Query(r)
}

func newCheckRequest(l Lookup, q Query) checkRequest {
	r := checkRequest(q)
	if l != LookupIdentity {
		r.DocumentNumber = ""
	}
	return r
}

// checkResponse is the 200 body of every check.
type checkResponse struct {
	Lookup           Lookup    `json:"lookup"`
	Outcome          string    `json:"outcome"`
	MismatchedFields []string  `json:"mismatched_fields"`
	ReferenceID      string    `json:"reference_id"`
	CheckedAt        time.Time `json:"checked_at"`
}

// problem is an RFC 9457 problem document, the body of every error response.
type problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
	Code   string `json:"code"`
}

// problemTypeBase prefixes the problem code in a problem's type URI.
const problemTypeBase = "https://idstream.dev/problems/registry/"

// Problem codes of the registry API.
const (
	codeInvalidRequest = "invalid_request"
	codeInvalidQuery   = "invalid_query"
	codeUnauthorized   = "unauthorized"
	codeNotFound       = "not_found"
	codeMethod         = "method_not_allowed"
	codeTooLarge       = "request_too_large"
	codeUnavailable    = "registry_unavailable"
)
