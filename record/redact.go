package record

import (
	"net/url"
	"strings"
)

// Redacted replaces a secret in a run file's recorded arguments.
const Redacted = "REDACTED"

// secretWords mark a header or flag name whose value is a credential.
var secretWords = []string{"auth", "token", "key", "secret", "password", "passwd", "cookie", "credential", "session"}

// RedactArgs returns a copy of command-line arguments fit to be written to a
// run file, which is meant to be shared. It replaces with "REDACTED":
//   - the value of every -H/--header flag, whatever the header's name (a
//     JWT under X-Jwt is as secret as an Authorization header), unless the
//     arguments name that header with --record-headers NAME; the header
//     name is kept so the reader knows one was sent;
//   - the value of any other flag whose name contains a secret word (auth,
//     token, key, secret, password, cookie, credential, session), which
//     covers TLS private key paths (--ssl-grpc-private-key-file,
//     --ssl-https-private-key-file) and --token/--password style flags;
//   - the password of a URL argument with user information.
//
// Flags are recognised in the forms the standard flag package accepts:
// -name value, -name=value, --name value and --name=value. A -H flag always
// takes the next argument as its value, even one that starts with '-', as
// the flag package does.
func RedactArgs(args []string) []string {
	out := make([]string, len(args))
	copy(out, args)
	keep := RecordedHeaders(args)
	redactHeader := func(h string) string { return redactHeaderValue(h, keep) }
	for i := 0; i < len(out); i++ {
		arg := out[i]
		name, value, hasValue, isFlag := splitFlag(arg)
		if !isFlag {
			out[i] = redactURL(arg)
			continue
		}
		var redact func(string) string
		switch {
		case name == "H" || name == "header":
			redact = redactHeader
		case looksSecret(name):
			redact = func(string) string { return Redacted }
		default:
			if hasValue {
				out[i] = arg[:len(arg)-len(value)] + redactURL(value)
			}
			continue
		}
		if hasValue {
			out[i] = arg[:len(arg)-len(value)] + redact(value)
			continue
		}
		// The value is the next argument, unless that is another flag
		// (a -H value is always the next argument).
		if i+1 < len(out) && (name == "H" || name == "header" || !strings.HasPrefix(out[i+1], "-")) {
			out[i+1] = redact(out[i+1])
			i++
		}
	}
	return out
}

// splitFlag splits "-name", "--name", "-name=value" or "--name=value". A lone
// "-" or "--" is not a flag.
func splitFlag(arg string) (name, value string, hasValue, isFlag bool) {
	if len(arg) < 2 || arg[0] != '-' || arg == "--" {
		return "", "", false, false
	}
	name = strings.TrimPrefix(strings.TrimPrefix(arg, "-"), "-")
	if name == "" {
		return "", "", false, false
	}
	if eq := strings.IndexByte(name, '='); eq >= 0 {
		return name[:eq], name[eq+1:], true, true
	}
	return name, "", false, true
}

// RecordedHeaders lists the header names the arguments ask to record with
// --record-headers NAME (repeatable, or comma-separated), lower-cased.
func RecordedHeaders(args []string) map[string]bool {
	var keep map[string]bool
	for i := 0; i < len(args); i++ {
		name, value, hasValue, isFlag := splitFlag(args[i])
		if !isFlag || name != "record-headers" {
			continue
		}
		if !hasValue {
			if i+1 >= len(args) {
				break
			}
			i++
			value = args[i]
		}
		for n := range strings.SplitSeq(value, ",") {
			if n = strings.ToLower(strings.TrimSpace(n)); n != "" {
				if keep == nil {
					keep = map[string]bool{}
				}
				keep[n] = true
			}
		}
	}
	return keep
}

// redactHeaderValue redacts the value of a "Name: value" (or "Name:value")
// header argument, keeping the name, unless keep holds the name. An
// argument without a colon is all value.
func redactHeaderValue(h string, keep map[string]bool) string {
	colon := strings.IndexByte(h, ':')
	if colon < 0 {
		return Redacted
	}
	name := h[:colon]
	if keep[strings.ToLower(strings.TrimSpace(name))] {
		return h
	}
	sep := ":"
	if strings.HasPrefix(h[colon+1:], " ") {
		sep = ": "
	}
	return name + sep + Redacted
}

func looksSecret(name string) bool {
	n := strings.ToLower(name)
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// redactURL hides the password of a URL with user information, such as
// -u https://user:secret@host:8000; anything else is returned unchanged.
func redactURL(arg string) string {
	if !strings.Contains(arg, "@") || !strings.Contains(arg, "://") {
		return arg
	}
	u, err := url.Parse(arg)
	if err != nil || u.User == nil {
		return arg
	}
	if _, ok := u.User.Password(); !ok {
		return arg
	}
	u.User = url.UserPassword(u.User.Username(), Redacted)
	return u.String()
}
