package sim

import (
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton/kserve"
)

// Defaults of the limits on what clients can make the simulator hold.
const (
	// DefaultHTTPMaxInputSize is Triton's default --http-max-input-size:
	// the largest HTTP request body, in bytes (64 MB).
	DefaultHTTPMaxInputSize = 64 << 20
	// MaxHTTPMaxInputSize is the largest --http-max-input-size accepted:
	// INT32_MAX, the largest message Triton takes over gRPC too.
	MaxHTTPMaxInputSize = math.MaxInt32
	// DefaultHTTPReadHeaderTimeout is how long a client has to send a
	// request's headers. Headers are a few hundred bytes: 10 s is long
	// for any link, and short enough that a client dribbling headers
	// (slowloris) frees its connection quickly.
	DefaultHTTPReadHeaderTimeout = 10 * time.Second
	// DefaultHTTPReadTimeout is how long a client has to send a whole
	// request, headers and body: a 64 MB body at 1.1 MB/s. A larger
	// --http-max-input-size lengthens it in proportion (60 s per 64 MB).
	DefaultHTTPReadTimeout = 60 * time.Second
	// DefaultHTTPIdleTimeout is how long a keep-alive connection may wait
	// for its next request. A load test keeps its connections busy; one
	// idle this long belongs to a client that is done or gone.
	DefaultHTTPIdleTimeout = 2 * time.Minute
	// DefaultGRPCMaxInputSize is the largest gRPC message received:
	// INT32_MAX, as Triton sets it, so that any tensor Triton accepts
	// passes. grpc-go holds a message's bytes only as they arrive (not its
	// declared length), and answers RESOURCE_EXHAUSTED "grpc: received
	// message larger than max" over the limit, as Triton's gRPC does.
	DefaultGRPCMaxInputSize = math.MaxInt32
)

// HTTPLimits bound what HTTP clients can make the simulator hold: the size
// of one request body, and how long a request may take to arrive. Zero
// fields take the Default* values. The bytes of all requests held at once
// are the memory budget's (Config.MemoryBudget).
type HTTPLimits struct {
	// MaxInputSize is the largest request body in bytes, after
	// decompression (Triton's --http-max-input-size). A larger body gets
	// 400 with Triton's message, without being read when its
	// Content-Length already says so.
	MaxInputSize int64
	// ReadHeaderTimeout bounds the time to receive a request's headers.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds the time to receive a whole request, headers and
	// body; a body not complete by then is dropped, its buffer freed, and
	// the connection closed.
	ReadTimeout time.Duration
	// IdleTimeout bounds how long a keep-alive connection waits for its
	// next request.
	IdleTimeout time.Duration
}

// withDefaults fills the zero fields.
func (l HTTPLimits) withDefaults() HTTPLimits {
	if l.MaxInputSize <= 0 {
		l.MaxInputSize = DefaultHTTPMaxInputSize
	}
	if l.ReadHeaderTimeout <= 0 {
		l.ReadHeaderTimeout = DefaultHTTPReadHeaderTimeout
	}
	if l.ReadTimeout <= 0 {
		l.ReadTimeout = DefaultHTTPReadTimeout * time.Duration(max(1, l.MaxInputSize/DefaultHTTPMaxInputSize))
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = DefaultHTTPIdleTimeout
	}
	return l
}

// check rejects limits no request could pass.
func (l HTTPLimits) check() error {
	if l.MaxInputSize > MaxHTTPMaxInputSize {
		return fmt.Errorf("HTTP max input size %d is over %d bytes", l.MaxInputSize, MaxHTTPMaxInputSize)
	}
	return nil
}

// bodyChunk is how far a body buffer grows ahead of the bytes received. A
// body declared up to this size is read into one buffer of that size (a
// resnet50 image is 600 KB; doubling would cost more than the rest of the
// request); a larger one grows as its bytes arrive, so that a client that
// declares 64 MB and sends little makes the simulator hold little.
const bodyChunk = 4 << 20

// firstChunk is the first buffer for a body of unknown length (chunked or
// compressed).
const firstChunk = 32 << 10

func tooLargeError(size string, limit int64) error {
	return badRequest("Request JSON size of %s exceeds the maximum allowed value of %d bytes. Use --http-max-input-size to increase the limit.", size, limit)
}

// readBody reads a request body up to the size limit, undoing a gzip or
// deflate Content-Encoding, with its bytes reserved in hold before they are
// allocated; the caller closes hold when it no longer uses the body.
func (h *httpHandler) readBody(r *http.Request, hold *budgetHold) (body []byte, err error) {
	var src io.Reader = r.Body
	switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			return nil, badRequest("failed to decompress the request body (gzip): %v", err)
		}
		defer zr.Close()
		src = zr
	case "deflate":
		zr, err := zlib.NewReader(r.Body)
		if err != nil {
			return nil, badRequest("failed to decompress the request body (deflate): %v", err)
		}
		defer zr.Close()
		src = zr
	default:
		return nil, &kserve.Error{Code: codes.Unimplemented, Message: fmt.Sprintf("Unsupported Content-Encoding: '%s'", textsafe.Bound(enc))}
	}
	declared := int64(-1)
	if src == r.Body && r.ContentLength >= 0 {
		declared = r.ContentLength
	}
	body, err = readLimited(src, declared, h.limits.MaxInputSize, hold)
	if err != nil && isTimeout(err) {
		err = badRequest("failed to read the request body: not complete after %s (the simulator's read timeout)", h.limits.ReadTimeout)
	}
	return body, err
}

// readLimited reads src to its end into a buffer whose capacity is
// reserved in hold before each allocation. declared is the body's length
// if known, else -1.
func readLimited(src io.Reader, declared, limit int64, hold *budgetHold) ([]byte, error) {
	if declared > limit {
		return nil, tooLargeError(fmt.Sprint(declared), limit)
	}
	size := min(firstChunk, limit)
	if declared >= 0 {
		size = min(declared, bodyChunk)
	}
	if err := hold.grow(size); err != nil {
		return nil, err
	}
	buf := make([]byte, 0, size)
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) == declared {
				return buf, nil
			}
			if int64(len(buf)) == limit {
				// Full at the limit: anything more is too much.
				var one [1]byte
				if n, _ := io.ReadFull(src, one[:]); n > 0 {
					return nil, tooLargeError(fmt.Sprintf("%d+", limit+1), limit)
				}
				return buf, nil
			}
			next := min(2*int64(cap(buf)), limit)
			if declared >= 0 {
				next = min(next, declared)
			}
			// Both buffers are held while one is copied to the other.
			if err := hold.grow(next); err != nil {
				return nil, err
			}
			grown := make([]byte, len(buf), next)
			copy(grown, buf)
			hold.give(int64(cap(buf)))
			buf = grown
		}
		n, err := src.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		switch {
		case err == io.EOF && declared >= 0 && int64(len(buf)) < declared:
			return nil, badRequest("failed to read the request body: %v", io.ErrUnexpectedEOF)
		case err == io.EOF:
			return buf, nil
		case err != nil:
			if isTimeout(err) {
				return nil, err
			}
			return nil, badRequest("failed to read the request body: %v", err)
		}
	}
}

func isTimeout(err error) bool {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	var ne interface{ Timeout() bool }
	return errors.As(err, &ne) && ne.Timeout()
}
