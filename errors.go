package hq

import (
	"errors"
	"fmt"
	"net/http"
)

// Code classifies an error; the API maps each code to one HTTP status.
type Code string

const (
	CodeBadRequest   Code = "bad_request"
	CodeUnauthorized Code = "unauthorized"
	CodeForbidden    Code = "forbidden"
	CodeNotFound     Code = "not_found"
	// CodeMethodNotAllowed answers a method a path does not take.
	CodeMethodNotAllowed Code = "method_not_allowed"
	CodeConflict         Code = "conflict"
	CodeTooLarge         Code = "too_large"
	CodeInvalid          Code = "invalid"
	// CodeUnavailable is a request the controller cannot take now (its disk is full, or it is
	// overloaded); the same request later may succeed.
	CodeUnavailable Code = "unavailable"
	// CodeTooManyRequests is a caller asking faster than it may (a node reporting far faster
	// than any host does, or too many wrong tokens from one address); Retry-After says when.
	CodeTooManyRequests Code = "too_many_requests"
	CodeInternal        Code = "internal"
)

// FieldError names one invalid field of a request and what is wrong with it.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Error is an error meant for the caller: its message is safe to show.
type Error struct {
	Code    Code         `json:"code"`
	Message string       `json:"message"`
	Details []FieldError `json:"details,omitempty"`
	// Generation is the node's current generation, set on a conflict over If-Match.
	Generation *int64 `json:"generation,omitempty"`
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Errorf returns an *Error with the given code.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Conflict reports that a node's generation is no longer the one the caller expected.
func Conflict(node string, want, current int64) *Error {
	e := Errorf(CodeConflict, "node %s is at generation %d, not %d", node, current, want)
	e.Generation = &current
	return e
}

// ErrorCode returns the code of the first *Error in err's chain, or CodeInternal.
func ErrorCode(err error) Code {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Code
	}
	return CodeInternal
}

// httpStatus is the one table from error codes to HTTP statuses, for the API and the pages.
var httpStatus = map[Code]int{
	CodeBadRequest:       http.StatusBadRequest,
	CodeUnauthorized:     http.StatusUnauthorized,
	CodeForbidden:        http.StatusForbidden,
	CodeNotFound:         http.StatusNotFound,
	CodeMethodNotAllowed: http.StatusMethodNotAllowed,
	CodeConflict:         http.StatusConflict,
	CodeTooLarge:         http.StatusRequestEntityTooLarge,
	CodeInvalid:          http.StatusUnprocessableEntity,
	CodeUnavailable:      http.StatusServiceUnavailable,
	CodeTooManyRequests:  http.StatusTooManyRequests,
}

// HTTPStatus is the status an error of code c is answered with: 500 for internal and unknown.
func (c Code) HTTPStatus() int {
	if s, ok := httpStatus[c]; ok {
		return s
	}
	return http.StatusInternalServerError
}
