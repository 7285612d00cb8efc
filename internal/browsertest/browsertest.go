// Package browsertest opens a local HTML file in real headless Chromium for a
// test, and tells what the page did: its console messages and uncaught
// exceptions, every network request it attempted, what its DOM holds, and
// how it looks (a PNG screenshot). Reports must open from a mail attachment
// on a machine without a network, so a test of one checks that the page
// asks for nothing beyond itself and logs no error.
//
// The browser is Debian's chromium package at BrowserPath; where it is not
// installed, Open skips the test and says so.
package browsertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// BrowserPath is where Debian's chromium package installs the browser.
const BrowserPath = "/usr/bin/chromium"

// Time limits: starting the browser and loading a page take a few seconds
// on a loaded two-core machine; each later query is quick.
const (
	StartTimeout  = 60 * time.Second
	ActionTimeout = 30 * time.Second
)

// flags are the browser's command-line switches. Without the ones that turn
// off background networking, Chromium tries to reach its update and sync
// services, which a closed network refuses; the user-data directory is a
// fresh temporary one per page (chromedp makes and removes it).
var flags = []string{
	"headless", "no-sandbox", "disable-gpu", "disable-quic", "no-first-run",
	"disable-background-networking", "disable-component-update", "disable-sync",
	"disable-dev-shm-usage", "no-default-browser-check", "disable-extensions",
	"disable-default-apps", "disable-breakpad", "hide-scrollbars", "mute-audio",
}

// blocked are the schemes the page may not reach: a request to any of them
// is recorded, then failed by the browser without touching the network.
var blocked = []string{"http://*:*/*", "https://*:*/*", "ws://*:*/*", "wss://*:*/*", "ftp://*:*/*"}

// Message is one console message, uncaught exception, or entry of the
// browser's log (such as a resource that failed to load).
type Message struct {
	// Level is "log", "debug", "info", "warning" or "error" for a console
	// call or a log entry, and "exception" for an uncaught exception.
	Level string
	// Source is "console" for a console call, "exception", or the part of
	// the browser that logged the entry ("network", "security", …).
	Source string
	Text   string
	// URL is where the message came from, when the browser says.
	URL string
}

// IsError reports whether the message is an error or an exception.
func (m Message) IsError() bool { return m.Level == "error" || m.Level == "exception" }

// String writes the message on one line for a test's failure output.
func (m Message) String() string {
	s := fmt.Sprintf("%s %s: %s", m.Source, m.Level, m.Text)
	if m.URL != "" {
		s += " (" + m.URL + ")"
	}
	return s
}

// Request is one network request the page attempted, whether or not it
// succeeded.
type Request struct {
	URL string
	// Type is the resource type: "Document", "Image", "Stylesheet", …
	Type string
	// Failed is why the request failed ("blocked by inspector" for one to
	// the network, which the browser is told to block), empty if it did not.
	Failed string

	id network.RequestID
}

// String writes the request on one line for a test's failure output.
func (r Request) String() string {
	s := r.Type + " " + r.URL
	if r.Failed != "" {
		s += " (" + r.Failed + ")"
	}
	return s
}

// Page is an HTML file loaded in its own headless Chromium. Its methods
// fail the test on a browser error; the browser stops when the test ends.
type Page struct {
	t   testing.TB
	ctx context.Context
	url string

	mu       sync.Mutex
	messages []Message
	requests []Request
}

// Open starts headless Chromium, loads the HTML file at path and waits for
// its load event. It skips the test when Chromium is not installed, and
// fails it when the browser cannot start or the file cannot load.
func Open(t testing.TB, path string) *Page {
	t.Helper()
	browser, err := findBrowser(BrowserPath)
	if err != nil {
		t.Skip(err.Error())
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatalf("browsertest: %v", err)
	}
	if _, err := os.Stat(abs); err != nil {
		t.Fatalf("browsertest: page to open: %v", err)
	}
	p := &Page{t: t, url: (&url.URL{Scheme: "file", Path: abs}).String()}

	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(browser), chromedp.WindowSize(1280, 800)}
	for _, f := range flags {
		opts = append(opts, chromedp.Flag(f, true))
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	p.ctx = ctx

	// The first call starts the browser, which lives as long as its
	// context: a timeout on that context would stop the browser later, so
	// a timer cancels it instead if the start hangs.
	hung := time.AfterFunc(StartTimeout, cancel)
	err = chromedp.Listen(ctx, p.record)
	hung.Stop()
	if err != nil {
		t.Fatalf("browsertest: start %s: %v", browser, err)
	}
	actx, done := context.WithTimeout(ctx, StartTimeout)
	defer done()
	_, err = chromedp.Call(actx, network.SetBlockedURLs, network.SetBlockedURLsParams{URLPatterns: blockPatterns()})
	if err != nil {
		t.Fatalf("browsertest: block network requests: %v", err)
	}
	if err := chromedp.Do(actx, chromedp.Navigate(p.url)); err != nil {
		t.Fatalf("browsertest: load %s: %v", p.url, err)
	}
	// An evaluation round trip: the events the page caused while loading
	// arrived before its reply, so they are recorded once it returns.
	if _, err := chromedp.Run(actx, chromedp.Evaluate[string]("document.readyState")); err != nil {
		t.Fatalf("browsertest: read %s: %v", p.url, err)
	}
	return p
}

// ArtifactsEnv names the environment variable that keeps a test's
// screenshots: when it is set, ArtifactDir is a folder under it named for the
// test, which outlives the run (CI uploads it; a person looks at it).
const ArtifactsEnv = "TRITONTOP_ARTIFACTS"

// ArtifactDir returns the folder for a test's screenshots: under
// $TRITONTOP_ARTIFACTS when set, else a temporary folder removed after the
// test.
func ArtifactDir(t testing.TB) string {
	t.Helper()
	root := os.Getenv(ArtifactsEnv)
	if root == "" {
		return t.TempDir()
	}
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("browsertest: artifact directory: %v", err)
	}
	return dir
}

// findBrowser returns the browser's path, or an error that says how to
// install it.
func findBrowser(path string) (string, error) {
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("chromium not installed: apt-get install chromium (no browser at %s or on PATH); skipping the browser test", path)
}

func blockPatterns() []*network.BlockPattern {
	out := make([]*network.BlockPattern, len(blocked))
	for i, p := range blocked {
		out[i] = &network.BlockPattern{URLPattern: p, Block: true}
	}
	return out
}

// record keeps the events a test asks about. It runs on the browser's read
// loop, so it only appends.
func (p *Page) record(ev any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		level := string(ev.Type)
		if level == "warn" {
			level = "warning"
		}
		m := Message{Level: level, Source: "console", Text: argsText(ev.Args)}
		if ev.StackTrace != nil && len(ev.StackTrace.CallFrames) > 0 {
			m.URL = ev.StackTrace.CallFrames[0].URL
		}
		p.messages = append(p.messages, m)
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		m := Message{Level: "exception", Source: "exception"}
		if d != nil {
			m.Text, m.URL = d.Text, d.URL
			if d.Exception != nil && d.Exception.Description != "" {
				m.Text += " " + d.Exception.Description
			}
		}
		p.messages = append(p.messages, m)
	case *cdplog.EventEntryAdded:
		if e := ev.Entry; e != nil {
			level := string(e.Level)
			if level == "verbose" {
				level = "debug"
			}
			p.messages = append(p.messages, Message{Level: level, Source: string(e.Source), Text: e.Text, URL: e.URL})
		}
	case *network.EventRequestWillBeSent:
		if ev.Request != nil {
			p.requests = append(p.requests, Request{URL: ev.Request.URL, Type: string(ev.Type), id: ev.RequestID})
		}
	case *network.EventLoadingFailed:
		why := ev.ErrorText
		switch {
		case ev.BlockedReason != "":
			why = "blocked by " + string(ev.BlockedReason)
		case ev.Canceled:
			why = "canceled"
		case why == "":
			why = "failed"
		}
		for i := range p.requests {
			if p.requests[i].id == ev.RequestID {
				p.requests[i].Failed = why
			}
		}
	}
}

// argsText writes a console call's arguments as the console shows them:
// strings as they are, other values by their JSON or description.
func argsText(args []*runtime.RemoteObject) string {
	parts := make([]string, 0, len(args))
	for _, a := range args {
		switch {
		case len(a.Value) > 0:
			var s string
			if err := json.Unmarshal(a.Value, &s); err == nil {
				parts = append(parts, s)
			} else {
				parts = append(parts, string(a.Value))
			}
		case a.Description != "":
			parts = append(parts, a.Description)
		default:
			parts = append(parts, string(a.Type))
		}
	}
	return strings.Join(parts, " ")
}

// URL is the file:// address the page was loaded from.
func (p *Page) URL() string { return p.url }

// Messages returns every console message, exception and browser log entry
// so far, in order.
func (p *Page) Messages() []Message {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Message(nil), p.messages...)
}

// Errors returns the messages that are errors or exceptions.
func (p *Page) Errors() []Message {
	var out []Message
	for _, m := range p.Messages() {
		if m.IsError() {
			out = append(out, m)
		}
	}
	return out
}

// Requests returns every network request the page attempted, in order,
// the load of the page itself included.
func (p *Page) Requests() []Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Request(nil), p.requests...)
}

// ExternalRequests returns the requests for anything but the page itself
// and data the page carries inline (data: and about: URLs). A
// self-contained page has none.
func (p *Page) ExternalRequests() []Request {
	var out []Request
	for _, r := range p.Requests() {
		if r.URL == p.url || strings.HasPrefix(r.URL, "data:") || strings.HasPrefix(r.URL, "about:") {
			continue
		}
		out = append(out, r)
	}
	return out
}

// Count returns how many elements match the CSS selector.
func (p *Page) Count(selector string) int {
	p.t.Helper()
	return evaluate[int](p, fmt.Sprintf("document.querySelectorAll(%s).length", jsString(selector)))
}

// Attrs returns the named attribute of each element that matches the CSS
// selector, in document order ("" where an element lacks it).
func (p *Page) Attrs(selector, name string) []string {
	p.t.Helper()
	return evaluate[[]string](p, fmt.Sprintf(
		"Array.from(document.querySelectorAll(%s), e => e.getAttribute(%s) ?? '')", jsString(selector), jsString(name)))
}

// Texts returns the text content of each element that matches the CSS
// selector, in document order.
func (p *Page) Texts(selector string) []string {
	p.t.Helper()
	return evaluate[[]string](p, fmt.Sprintf(
		"Array.from(document.querySelectorAll(%s), e => e.textContent)", jsString(selector)))
}

// Screenshot sets the viewport to width×height CSS pixels, captures it as
// a PNG of that size (a page longer than height is cut there) and writes
// it to dir/name.png, making dir if needed. It returns the file's path.
func (p *Page) Screenshot(dir, name string, width, height int) string {
	p.t.Helper()
	if width <= 0 || height <= 0 {
		p.t.Fatalf("browsertest: screenshot size %dx%d: give positive pixels", width, height)
	}
	ctx, cancel := context.WithTimeout(p.ctx, ActionTimeout)
	defer cancel()
	err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(width), int64(height)))
	if err != nil {
		p.t.Fatalf("browsertest: set the viewport to %dx%d: %v", width, height, err)
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		p.t.Fatalf("browsertest: screenshot of %s: %v", p.url, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		p.t.Fatalf("browsertest: screenshot directory: %v", err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		p.t.Fatalf("browsertest: write the screenshot: %v", err)
	}
	return path
}

// evaluate runs a JavaScript expression in the page and decodes its value.
func evaluate[T any](p *Page, expr string) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, ActionTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		var exc *chromedp.ExceptionError
		if errors.As(err, &exc) {
			p.t.Fatalf("browsertest: %s: %v (is the selector valid CSS?)", expr, err)
		}
		p.t.Fatalf("browsertest: %s: %v", expr, err)
	}
	return v
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
