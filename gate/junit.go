package gate

import (
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/tritontop/tritontop/record"
)

// Case is one check of a gate, a testcase in JUnit's terms: a threshold
// over a span of the run, or a compare --fail-if bound on one metric.
type Case struct {
	// Name says what was checked ("p99<100ms over run").
	Name string
	// Class groups the cases in a CI system's test view
	// ("tritontop.thresholds", "tritontop.compare").
	Class string
	Pass  bool
	// Message is the one line a failing case shows; Detail the text
	// under it.
	Message, Detail string
}

// Suite is a gate's checks, one JUnit testsuite.
type Suite struct {
	Name     string
	Duration time.Duration
	// Properties describe the run (the model, the server, the load).
	Properties [][2]string
	Cases      []Case
}

// ThresholdSuite is the suite of a run's threshold checks.
func ThresholdSuite(name string, rs []record.ThresholdResult, d time.Duration) Suite {
	s := Suite{Name: name, Duration: d}
	for _, r := range rs {
		c := Case{Name: r.Threshold + " over " + r.Scope, Class: "tritontop.thresholds", Pass: r.Pass}
		if !r.Pass {
			c.Message = Describe(r)
			c.Detail = c.Message
		}
		s.Cases = append(s.Cases, c)
	}
	return s
}

// The JUnit XML elements, with the attributes the Ant schema (the one
// Jenkins, GitLab, GitHub's test reporters and others read) requires.
type (
	xmlSuites struct {
		XMLName xml.Name   `xml:"testsuites"`
		Suites  []xmlSuite `xml:"testsuite"`
	}
	xmlSuite struct {
		Name       string        `xml:"name,attr"`
		Package    string        `xml:"package,attr"`
		ID         int           `xml:"id,attr"`
		Timestamp  string        `xml:"timestamp,attr"`
		Hostname   string        `xml:"hostname,attr"`
		Tests      int           `xml:"tests,attr"`
		Failures   int           `xml:"failures,attr"`
		Errors     int           `xml:"errors,attr"`
		Skipped    int           `xml:"skipped,attr"`
		Time       string        `xml:"time,attr"`
		Properties xmlProperties `xml:"properties"`
		Cases      []xmlCase     `xml:"testcase"`
		SystemOut  string        `xml:"system-out"`
		SystemErr  string        `xml:"system-err"`
	}
	xmlProperties struct {
		Property []xmlProperty `xml:"property"`
	}
	xmlProperty struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	}
	xmlCase struct {
		Name      string      `xml:"name,attr"`
		Classname string      `xml:"classname,attr"`
		Time      string      `xml:"time,attr"`
		Failure   *xmlFailure `xml:"failure"`
	}
	xmlFailure struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	}
)

// WriteJUnit writes the suites as one JUnit XML document, stamped with the
// time at (local time without a zone, as the schema asks).
func WriteJUnit(w io.Writer, at time.Time, suites ...Suite) error {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	doc := xmlSuites{}
	for i, s := range suites {
		xs := xmlSuite{
			Name: s.Name, Package: s.Name, ID: i, Timestamp: at.Format("2006-01-02T15:04:05"), Hostname: host,
			Tests: len(s.Cases), Time: fmt.Sprintf("%.3f", s.Duration.Seconds()),
		}
		if xs.Name == "" {
			xs.Name, xs.Package = "tritontop", "tritontop"
		}
		for _, p := range s.Properties {
			if p[0] != "" {
				xs.Properties.Property = append(xs.Properties.Property, xmlProperty{p[0], p[1]})
			}
		}
		for _, c := range s.Cases {
			xc := xmlCase{Name: c.Name, Classname: c.Class, Time: "0"}
			if !c.Pass {
				xs.Failures++
				xc.Failure = &xmlFailure{Message: c.Message, Type: "gate", Text: c.Detail}
			}
			xs.Cases = append(xs.Cases, xc)
		}
		doc.Suites = append(doc.Suites, xs)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	return nil
}
