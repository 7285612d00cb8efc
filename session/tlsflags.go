package session

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/tritontop/tritontop/internal/textsafe"
)

// checkTLSFlags turns TLS on when a TLS file is given, and checks the
// files: a certificate with its key, each readable.
func checkTLSFlags(f *Config) error {
	if f.SSLCA != "" || f.SSLCert != "" || f.SSLKey != "" {
		f.SSL = true
	}
	if (f.SSLCert == "") != (f.SSLKey == "") {
		return errors.New("--ssl-cert and --ssl-key go together: give both or neither")
	}
	for _, tf := range []struct{ flag, path string }{{"--ssl-ca", f.SSLCA}, {"--ssl-cert", f.SSLCert}, {"--ssl-key", f.SSLKey}} {
		if tf.path == "" {
			continue
		}
		if _, err := os.Stat(tf.path); err != nil {
			return fmt.Errorf("cannot read %s %s: %v", tf.flag, tf.path, errors.Unwrap(err))
		}
	}
	return nil
}

// parseRange reads perf_analyzer's START[:END[:STEP]].
func parseRange(flagName, s string) (start, end, step float64, err error) {
	parts := strings.Split(s, ":")
	if len(parts) > 3 {
		return 0, 0, 0, fmt.Errorf("bad %s %s: use START[:END[:STEP]]", flagName, textsafe.Quote(s))
	}
	vals := []float64{0, 0, 1}
	for i, p := range parts {
		v, perr := strconv.ParseFloat(p, 64)
		if perr != nil || !(v > 0) || math.IsInf(v, 0) {
			return 0, 0, 0, fmt.Errorf("bad %s %s: %s is not a positive number", flagName, textsafe.Quote(s), textsafe.Quote(p))
		}
		vals[i] = v
	}
	start, end, step = vals[0], vals[1], vals[2]
	if len(parts) == 1 {
		end = start
	}
	if end < start {
		return 0, 0, 0, fmt.Errorf("bad %s %s: END is below START", flagName, textsafe.Quote(s))
	}
	if (end-start)/step > 1000 {
		return 0, 0, 0, fmt.Errorf("bad %s %s: more than 1000 steps", flagName, textsafe.Quote(s))
	}
	return start, end, step, nil
}

// headerMap turns -H KEY:VALUE flags into a map.
func headerMap(hs []string) map[string]string {
	if len(hs) == 0 {
		return nil
	}
	m := make(map[string]string, len(hs))
	for _, h := range hs {
		k, v, _ := strings.Cut(h, ":")
		m[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return m
}
